// rmdirs: cleanup of directories a mkdirs program created, each removed through its pinned parent
// only while it is still the directory recorded.
//
// Per member, child before parent: bring the handle to the parent (ops/dir_cursor.h: one handle
// travels the members' tree, so a program is linear in its directories, never reopening a parent
// from the root), require the parent to be the recorded one when it is itself an owned member,
// fstatat(parent, name, AT_SYMLINK_NOFOLLOW) for type and identity, prove the parent beneath the
// root, then unlinkat(AT_REMOVEDIR) on that parent. Residual window, by design: between that
// fstatat and unlinkat a writer in the same parent can swap the name for another empty directory,
// which is then what goes; nothing outside the root, and nothing that is not empty, can be reached
// that way.
//
// A member marked `leased` (a directory a confined launch made, which other launches may rely on)
// is opened for reading and removed only while flock(LOCK_EX|LOCK_NB) holds on it: a launch that
// mounts it holds LOCK_SH for its whole life, and removing a mount point detaches the mount in
// every namespace. Held, it is kept ("in use by another launch"). One this user cannot open for
// reading nobody without that permission can lease either: it is removed as any other.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "../core/eintr.h"
#include "dir_cursor.h"

namespace pinnedfs::ops {

namespace {

struct Member {
  const OwnedDir* owned;
  std::size_t node = kNoNode;    // its place in the tree (its components are the tree's)
  std::size_t parent = kNoNode;  // the owned member that is this one's parent, if any
};

RmdirMember answer(const Member& m, RmdirStatus status, Error error = {}) {
  RmdirMember out;
  out.path = m.owned->path;
  out.status = status;
  out.error = std::move(error);
  return out;
}

// The members' tree: one node per component, shared by members with a common prefix.
class Tree {
 public:
  std::vector<TreeNode> nodes;
  std::size_t insert(const std::vector<std::string>& parts) {
    std::size_t at = kNoNode;
    for (const std::string& part : parts) {
      std::string key(sizeof at, '\0');
      std::memcpy(&key[0], &at, sizeof at);
      key += part;
      auto found = index_.find(key);
      if (found != index_.end()) {
        at = found->second;
        continue;
      }
      std::size_t made = add_node(nodes, at, part);
      index_.emplace(std::move(key), made);
      at = made;
    }
    return at;
  }

 private:
  std::unordered_map<std::string, std::size_t> index_;
};

// What happens to one member; Refused answers carry why.
RmdirMember remove_one(const Root& root, DirCursor& cursor, const std::vector<TreeNode>& nodes,
                       const Member& m, const Identity* parent_identity) {
  const std::string shown = path_of(nodes, m.node);
  auto there = cursor.move_to(nodes[m.node].parent);
  if (!there.ok()) {
    Error e = there.take_error();
    e.description = "the parent of '" + shown + "' no longer resolves" +
                    (e.description.empty() ? "" : ": " + e.description);
    return answer(m, RmdirStatus::Refused, std::move(e));
  }
  Held& parent = cursor.held();
  const std::string& leaf = nodes[m.node].name;
  if (parent_identity) {
    auto now = parent.identity(shown);
    if (!now.ok()) return answer(m, RmdirStatus::Refused, now.take_error());
    if (now.value() != *parent_identity) {
      return answer(m, RmdirStatus::Refused,
                    refusal(Refusal::IdentityChanged, "rmdir", shown,
                            "the parent of '" + shown + "' is no longer the directory recorded (" +
                                parent_identity->str() + " is now " + now.value().str() + ")",
                            EBUSY));
    }
  }
  struct stat st;
  int rc =
      retry_eintr([&] { return ::fstatat(parent.look(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW); });
  if (rc != 0) {
    if (errno == ENOENT) return answer(m, RmdirStatus::Missing);
    return answer(m, RmdirStatus::Refused, sys_error(errno, "lstat", shown));
  }
  if (S_ISLNK(st.st_mode)) {
    return answer(
        m, RmdirStatus::Refused,
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
  Fd lock;
  if (m.owned->leased) {
    int fd = retry_eintr([&] {
      return ::openat(parent.look(), leaf.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    });
    if (fd >= 0) {
      lock = Fd(fd);
      struct stat mine;
      if (::fstat(fd, &mine) != 0 || identity_of(mine) != m.owned->identity) {
        return answer(m, RmdirStatus::Refused,
                      refusal(Refusal::IdentityChanged, "rmdir", shown,
                              "'" + shown + "' changed while it was being removed", EBUSY));
      }
      if (retry_eintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
        if (errno != EWOULDBLOCK)
          return answer(m, RmdirStatus::Refused, sys_error(errno, "flock", shown));
        Error e = sys_error(EBUSY, "flock", shown);
        e.description = "'" + shown + "' is in use by another launch: kept";
        return answer(m, RmdirStatus::Kept, std::move(e));
      }
    } else if (errno != EACCES) {
      if (errno == ENOENT) return answer(m, RmdirStatus::Missing);
      return answer(m, RmdirStatus::Refused, sys_error(errno, "openat", shown));
    }
  }
  auto still = parent.prove(root, "rmdir", shown);
  if (!still.ok()) return answer(m, RmdirStatus::Refused, still.take_error());
  rc = retry_eintr([&] { return ::unlinkat(still.value().fd(), leaf.c_str(), AT_REMOVEDIR); });
  if (rc == 0) return answer(m, RmdirStatus::Removed);
  int err = errno;
  if (err == ENOENT) return answer(m, RmdirStatus::Missing);
  if (err == ENOTEMPTY || err == EEXIST) {
    Error e = sys_error(ENOTEMPTY, "rmdir", shown);
    e.description = "'" + shown + "' is not empty: kept";
    return answer(m, RmdirStatus::Kept, std::move(e));
  }
  if (err == EBUSY) return answer(m, RmdirStatus::Refused, mount_point("rmdir", shown, shown));
  return answer(m, RmdirStatus::Refused, sys_error(err, "rmdir", shown));
}

// The members' state between the steps: the tree of their components, and for each member the
// error its ".." met, if any.
struct Program {
  std::vector<Member> members;
  Tree tree;
  std::vector<Error> unresolved;
  std::vector<bool> failed;
  std::unordered_map<std::size_t, std::size_t> by_node;  // member by node
};

// 1. Validate, before any syscall: within the bound (members are what a mkdirs program created,
// each path within PATH_MAX), every path lexes, none is the root. Each member is put in the tree as
// it is lexed: memory grows with the tree, not with the members' components. Members with ".."
// are set aside in `dotdot`.
Status validate(const Request& request, Program& p, std::vector<std::size_t>& dotdot) {
  if (request.owned.size() > kMaxDirectories) {
    return bad_argument("rmdirs names more than " + std::to_string(kMaxDirectories) +
                        " directories");
  }
  p.members.reserve(request.owned.size());
  for (const OwnedDir& owned : request.owned) {
    auto l = lex_path(owned.path);
    if (!l.ok()) return l.take_error();
    Member m{&owned};
    if (l.value().has_dotdot) {
      dotdot.push_back(p.members.size());
    } else {
      if (l.value().is_root())
        return bad_argument("the pinned root itself is never removed", owned.path);
      m.node = p.tree.insert(l.value().parts);
    }
    p.members.push_back(m);
  }
  p.unresolved.resize(p.members.size());
  p.failed.assign(p.members.size(), false);
  return ok_status();
}

// 2. ".." is resolved physically, which needs the file system; a member whose ".." meets a link
// is refused like any other member when the program runs.
Status resolve_dotdot(const Root& root, Program& p, const std::vector<std::size_t>& dotdot) {
  for (std::size_t i : dotdot) {
    auto resolved = prepare_path(root, p.members[i].owned->path);
    if (!resolved.ok()) {
      p.unresolved[i] = resolved.take_error();
      p.failed[i] = true;
      continue;
    }
    if (resolved.value().is_root()) {
      return bad_argument("the pinned root itself is never removed", p.members[i].owned->path);
    }
    p.members[i].node = p.tree.insert(resolved.value().parts);
  }
  return ok_status();
}

// 3. Member by node: the first listing of a path runs; an identical duplicate runs once; no path
// is listed twice with different identities. Each member learns the owned member that is its
// parent, whose identity its removal then requires.
Status link_members(Program& p) {
  for (std::size_t i = 0; i < p.members.size(); ++i) {
    if (p.failed[i]) continue;
    auto [it, inserted] = p.by_node.emplace(p.members[i].node, i);
    if (!inserted && p.members[it->second].owned->identity != p.members[i].owned->identity) {
      return bad_argument("directory listed twice with different identities",
                          p.members[i].owned->path);
    }
  }
  for (auto& [node, i] : p.by_node) {
    std::size_t up = p.tree.nodes[node].parent;
    if (up == kNoNode) continue;
    auto owner = p.by_node.find(up);
    if (owner != p.by_node.end()) p.members[i].parent = owner->second;
  }
  return ok_status();
}

// 4. Child before parent: the reverse of a pre-order with siblings in byte order of their names
// (what ordering the members' component lists lexicographically gives). A member whose ".."
// failed runs where the caller put it, last.
std::vector<std::size_t> removal_order(const Program& p) {
  const std::vector<TreeNode>& nodes = p.tree.nodes;
  std::vector<std::vector<std::size_t>> children(nodes.size());
  std::vector<std::size_t> top;
  for (std::size_t n = 0; n < nodes.size(); ++n) {
    std::size_t up = nodes[n].parent;
    (up == kNoNode ? top : children[up]).push_back(n);
  }
  auto by_name = [&](std::size_t a, std::size_t b) { return nodes[a].name < nodes[b].name; };
  std::sort(top.begin(), top.end(), by_name);
  for (auto& kids : children) std::sort(kids.begin(), kids.end(), by_name);
  std::vector<std::size_t> stack(top.rbegin(), top.rend());
  std::vector<std::size_t> pre;
  while (!stack.empty()) {
    std::size_t n = stack.back();
    stack.pop_back();
    pre.push_back(n);
    stack.insert(stack.end(), children[n].rbegin(), children[n].rend());
  }
  std::vector<std::size_t> order;
  for (auto it = pre.rbegin(); it != pre.rend(); ++it) {
    auto member = p.by_node.find(*it);
    if (member != p.by_node.end()) order.push_back(member->second);
  }
  for (std::size_t i = 0; i < p.members.size(); ++i) {
    if (p.failed[i]) order.push_back(i);
  }
  return order;
}

}  // namespace

Result<Value> rmdirs(const Root& root, const Request& request) {
  Program p;
  std::vector<std::size_t> dotdot;
  auto valid = validate(request, p, dotdot);
  if (!valid.ok()) return valid.take_error();
  auto resolved = resolve_dotdot(root, p, dotdot);
  if (!resolved.ok()) return resolved.take_error();
  auto linked = link_members(p);
  if (!linked.ok()) return linked.take_error();

  // 5. Remove, in order.
  RmdirsOutcome out;
  DirCursor cursor(root, p.tree.nodes);
  for (std::size_t i : removal_order(p)) {
    const Member& m = p.members[i];
    RmdirMember result =
        p.failed[i]
            ? answer(m, RmdirStatus::Refused, std::move(p.unresolved[i]))
            : remove_one(root, cursor, p.tree.nodes, m,
                         m.parent == kNoNode ? nullptr : &p.members[m.parent].owned->identity);
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
