// strays: what bubblewrap made on the host for a sandbox that was then refused (see confine.h).
//
// bubblewrap makes the mount point of every destination that does not exist, in the file system
// that holds it: when a concurrent child renamed a protected repository's parent between the
// final validation and the mounts, that is an empty directory (and its empty children) in the
// workspace, which the refused sandbox leaves behind. They carry no record of who made them, and
// a concurrent rename may have moved them under another name, so they are found by what they are:
// a directory in one of the directories on the way to a destination (each still the one the final
// validation recorded), born since the refused sandbox started, holding nothing but empty
// directories. Removed through the pinned parent with the rmdirs program, child before parent,
// each only while it is still the directory found and empty, and kept when a launch holds a lease
// on it (a concurrent launch that met it as a protected path relies on it).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "../core/resolve.h"
#include "../platform/platform.h"
#include "confine.h"
#include "ops.h"

namespace pinnedfs::confine {

namespace {

// The most directories one stray tree may hold: bubblewrap makes one per missing component.
constexpr std::size_t kMaxStrayTree = 64;

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

#if defined(__linux__) && defined(STATX_BTIME)
// Born since `since`, and a directory: its identity. Zero identity when not.
bool born_since(int dir, const std::string& name, std::uint64_t since, Identity* id) {
  struct statx sx;
  if (::statx(dir, name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_TYPE | STATX_INO | STATX_BTIME, &sx) !=
      0)
    return false;
  if (!S_ISDIR(sx.stx_mode) || !(sx.stx_mask & STATX_BTIME)) return false;
  std::uint64_t ns =
      static_cast<std::uint64_t>(sx.stx_btime.tv_sec) * 1000000000u + sx.stx_btime.tv_nsec;
  if (ns < since) return false;
  struct stat st;
  if (::fstatat(dir, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
  *id = identity_of(st);
  return true;
}
#else
bool born_since(int, const std::string&, std::uint64_t, Identity*) {
  return false;
}
#endif

// The tree of empty directories at `name` in `dir` (members child-first after the caller
// reverses), or false when anything else is in it.
bool empty_tree(int dir, const std::string& name, const std::string& rel, const Identity& id,
                std::vector<OwnedDir>* out) {
  int fd = retry_eintr(
      [&] { return ::openat(dir, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); });
  if (fd < 0) return false;
  Fd owned(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0 || identity_of(st) != id) return false;
  out->push_back(OwnedDir{rel, id, true, true});
  if (out->size() > kMaxStrayTree) return false;
  std::vector<char> buffer(4096);
  std::vector<std::string> names;
  {
    DirectoryReader reader(fd, buffer);
    std::string_view entry;
    unsigned char type = 0;
    while (reader.next(&entry, &type)) names.emplace_back(entry);
    if (reader.error() != 0) return false;
  }
  for (const std::string& n : names) {
    struct stat child;
    if (::fstatat(fd, n.c_str(), &child, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISDIR(child.st_mode))
      return false;
    if (!empty_tree(fd, n, join(rel, n), identity_of(child), out)) return false;
  }
  return true;
}

}  // namespace

// Record indices for strays' anchors: apart from the ones a preparation numbers from 0.
constexpr std::size_t kStrayAnchorBase = 1000;

Result<StraysResult> remove_strays(const StraysRequest& request) {
  if (request.anchors.size() > kMaxAnchors)
    return bad_argument("strays names more than " + std::to_string(kMaxAnchors) + " anchors");
  StraysResult out;
  for (std::size_t ai = 0; ai < request.anchors.size(); ++ai) {
    const StrayAnchor& a = request.anchors[ai];
    auto pinned = Root::pin(a.path, request.strategy);
    if (!pinned.ok() || pinned.value()->identity() != a.identity) continue;
    const Root& root = *pinned.value();
    for (const StrayPlace& place : a.dirs) {
      auto lexed = lex_path(place.path);
      if (!lexed.ok() || lexed.value().has_dotdot) continue;
      auto dir = hold_beneath(root, lexed.value(), O_RDONLY | O_DIRECTORY);
      if (!dir.ok()) continue;
      struct stat st;
      if (::fstat(dir.value().look(), &st) != 0 ||
          (place.identity != Identity{} && identity_of(st) != place.identity))
        continue;
      std::vector<char> buffer(16384);
      std::vector<std::string> names;
      {
        DirectoryReader reader(dir.value().look(), buffer);
        std::string_view entry;
        unsigned char type = 0;
        while (reader.next(&entry, &type)) {
          if (type == DT_DIR || type == DT_UNKNOWN) names.emplace_back(entry);
        }
      }
      for (const std::string& n : names) {
        Identity id;
        if (!born_since(dir.value().look(), n, request.since_ns, &id)) continue;
        Request r;
        r.op = Op::Rmdirs;
        if (!empty_tree(dir.value().look(), n, join(place.path, n), id, &r.owned)) continue;
        auto gone = ops::rmdirs(root, r);
        if (!gone.ok()) continue;
        std::string lines;
        for (const RmdirMember& m : std::get<RmdirsOutcome>(gone.value()).members) {
          if (m.status == RmdirStatus::Removed) out.removed.push_back(a.path + "/" + m.path);
        }
        // Parent first in the record, so a sweep, going backwards, removes the child first.
        for (const OwnedDir& o : r.owned) {
          bool kept = false;
          for (const RmdirMember& m : std::get<RmdirsOutcome>(gone.value()).members) {
            if (m.path == o.path && m.status == RmdirStatus::Kept) kept = true;
          }
          if (!kept) continue;
          if (lines.empty()) lines = record_anchor(kStrayAnchorBase + ai, a.path, a.identity);
          lines += record_made(kStrayAnchorBase + ai, o.path, o.identity, false);
          out.kept.push_back(StraysResult::Kept{ai, o.path, o.identity});
        }
        if (!lines.empty()) (void)record_line(request.record, lines);
      }
    }
  }
  return out;
}

}  // namespace pinnedfs::confine
