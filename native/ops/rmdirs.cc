// rmdirs: cleanup of directories a mkdirs program created, each removed through its pinned parent
// only while it is still the directory recorded (platform-notes pitfall 13).
//
// Per member, child before parent: open the parent beneath the root (a link or a vanished parent is
// a visible refusal), require the parent to be the recorded one when it is itself an owned member,
// fstatat(parent, name, AT_SYMLINK_NOFOLLOW) for type and identity, then unlinkat(AT_REMOVEDIR) on
// that parent. Residual window, by design: between that fstatat and unlinkat a writer in the same
// parent can swap the name for another empty directory, which is then what goes; nothing outside
// the root, and nothing that is not empty, can be reached that way.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "ops.h"

namespace pinnedfs::ops {

namespace {

constexpr std::size_t kNone = static_cast<std::size_t>(-1);

struct Member {
  const OwnedDir* owned;
  LexedPath path;
  std::size_t parent = kNone;  // index of the owned member that is this one's parent, if any
};

Identity identity_of(const struct stat& st) {
  return Identity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

RmdirMember answer(const Member& m, RmdirStatus status, Error error = {}) {
  RmdirMember out;
  out.path = m.owned->path;
  out.status = status;
  out.error = std::move(error);
  return out;
}

// What happens to one member; Refused answers carry why.
RmdirMember remove_one(const Root& root, const Member& m, const Identity* parent_identity) {
  const std::string shown = m.path.joined();
  auto parent = open_parent(root, m.path);
  if (!parent.ok()) {
    Error e = parent.take_error();
    e.description = "the parent of '" + shown + "' no longer resolves" +
                    (e.description.empty() ? "" : ": " + e.description);
    return answer(m, RmdirStatus::Refused, std::move(e));
  }
  Held& held = parent.value().dir;
  int dir = held.fd();
  const std::string& leaf = parent.value().leaf;
  struct stat st;
  if (parent_identity) {
    if (::fstat(dir, &st) != 0) return answer(m, RmdirStatus::Refused, sys_error(errno, "fstat", shown));
    if (identity_of(st) != *parent_identity) {
      return answer(m, RmdirStatus::Refused,
                    refusal(Refusal::IdentityChanged, "rmdir", shown,
                            "the parent of '" + shown + "' is no longer the directory recorded (" +
                                parent_identity->str() + " is now " + identity_of(st).str() + ")",
                            EBUSY));
    }
  }
  int rc;
  do rc = ::fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    if (errno == ENOENT) return answer(m, RmdirStatus::Missing);
    return answer(m, RmdirStatus::Refused, sys_error(errno, "lstat", shown));
  }
  if (S_ISLNK(st.st_mode)) {
    return answer(m, RmdirStatus::Refused,
                  refusal(Refusal::Symlink, "rmdir", shown,
                          "'" + shown + "' is now a symbolic link, not the directory recorded", ELOOP));
  }
  if (!S_ISDIR(st.st_mode)) {
    Error e = sys_error(ENOTDIR, "rmdir", shown);
    e.description = "'" + shown + "' is no longer a directory";
    return answer(m, RmdirStatus::Refused, std::move(e));
  }
  if (identity_of(st) != m.owned->identity) {
    return answer(m, RmdirStatus::Refused,
                  refusal(Refusal::IdentityChanged, "rmdir", shown,
                          "'" + shown + "' is no longer the directory recorded (" +
                              m.owned->identity.str() + " is now " + identity_of(st).str() + ")",
                          EBUSY));
  }
  auto still = held.beneath(root, "rmdir", shown);
  if (!still.ok()) return answer(m, RmdirStatus::Refused, still.take_error());
  do rc = ::unlinkat(dir, leaf.c_str(), AT_REMOVEDIR);
  while (rc != 0 && errno == EINTR);
  if (rc == 0) return answer(m, RmdirStatus::Removed);
  int err = errno;
  if (err == ENOENT) return answer(m, RmdirStatus::Missing);
  if (err == ENOTEMPTY || err == EEXIST) {
    Error e = sys_error(ENOTEMPTY, "rmdir", shown);
    e.description = "'" + shown + "' is not empty: kept";
    return answer(m, RmdirStatus::Kept, std::move(e));
  }
  return answer(m, RmdirStatus::Refused, sys_error(err, "rmdir", shown));
}

}  // namespace

Result<Value> rmdirs(const Root& root, const Request& request) {
  // Validation, before any syscall: every path lexes, none is the root, no path is listed twice
  // with different identities.
  std::vector<Member> members;
  members.reserve(request.owned.size());
  for (const OwnedDir& owned : request.owned) {
    auto l = lex_path(owned.path);
    if (!l.ok()) return l.take_error();
    members.push_back(Member{&owned, l.take()});
  }
  // ".." is resolved physically, which needs the file system; a member whose ".." meets a link is
  // refused like any other member below.
  std::vector<Error> unresolved(members.size());
  std::vector<bool> failed(members.size(), false);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (!members[i].path.has_dotdot) continue;
    auto p = prepare_path(root, members[i].owned->path);
    if (p.ok()) {
      members[i].path = p.take();
    } else {
      unresolved[i] = p.take_error();
      failed[i] = true;
    }
  }
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (failed[i]) continue;
    if (members[i].path.is_root()) {
      return bad_argument("the pinned root itself is never removed", members[i].owned->path);
    }
    auto [it, inserted] = index.emplace(members[i].path.parts, i);
    if (!inserted && members[it->second].owned->identity != members[i].owned->identity) {
      return bad_argument("directory listed twice with different identities", members[i].owned->path);
    }
  }
  for (auto& [parts, i] : index) {
    if (parts.size() < 2) continue;
    auto up = index.find(std::vector<std::string>(parts.begin(), parts.end() - 1));
    if (up != index.end()) members[i].parent = up->second;
  }

  // Child before parent: the reverse of the pre-order that lexicographic component order gives.
  // Identical duplicates run once. A member whose ".." failed runs where the caller put it, last.
  std::vector<std::size_t> order;
  for (auto it = index.rbegin(); it != index.rend(); ++it) order.push_back(it->second);
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (failed[i]) order.push_back(i);
  }

  RmdirsOutcome out;
  for (std::size_t i : order) {
    const Member& m = members[i];
    RmdirMember result =
        failed[i] ? answer(m, RmdirStatus::Refused, std::move(unresolved[i]))
                  : remove_one(root, m, m.parent == kNone ? nullptr : &members[m.parent].owned->identity);
    bool refused = result.status == RmdirStatus::Refused;
    out.members.push_back(std::move(result));
    if (refused && !m.owned->optional) {
      out.stopped = true;
      break;
    }
  }
  return Value(std::move(out));
}

}  // namespace pinnedfs::ops
