// rename: both parents resolved beneath the root, then one renameat between the two handles.
// With no_replace, that one call is the no-replace rename (platform.h): an existing destination is
// refused (EEXIST) by the rename itself, not by a check before it that a racing name could beat.
//
// renameat never follows its final components: a link is moved (or replaced) as an entry, which
// is why the last component may be a link here while a link anywhere on the way is refused. A
// hard-linked file may be renamed too: the name is ours, the other names are untouched.
#include <stdio.h>  // renameat
#include <sys/stat.h>

#include <algorithm>
#include <optional>

#include "../platform/platform.h"
#include "ops.h"

namespace pinnedfs::ops {

namespace {

Result<LexedPath> prepare_entry(const Root& root, const std::string& relative, const char* which) {
  auto path = prepare_path(root, relative);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) {
    return bad_argument(std::string("rename ") + which + " the root itself: the root cannot move",
                        relative);
  }
  return path;
}

// A trailing '/' ("dir/") promises a directory. POSIX rename honours that by resolving the slash,
// which would follow a link there; we look at the entry instead and refuse a link as one met on
// the way. `must_exist`: for the source; a missing destination is fine.
Status check_slash(int dirfd, const std::string& leaf, const std::string& shown, bool must_exist) {
  struct stat st;
  if (::fstatat(dirfd, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT && !must_exist) return ok_status();
    return sys_error(errno, "rename", shown);
  }
  if (S_ISLNK(st.st_mode)) {
    return symlink_refusal("rename", shown, leaf);
  }
  if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, "rename", shown);
  return ok_status();
}

}  // namespace

Result<Value> rename(const Root& root, const Request& request) {
  auto from = prepare_entry(root, request.path, "from");
  if (!from.ok()) return from.take_error();
  auto to = prepare_entry(root, request.to, "onto");
  if (!to.ok()) return to.take_error();
  const LexedPath& a = from.value();
  const LexedPath& b = to.value();

  auto source = open_parent(root, a);
  if (!source.ok()) return source.take_error();
  // Same directory on both sides (the common case: a rename in place): one handle, one lookup.
  bool same = a.parts.size() == b.parts.size() &&
              std::equal(a.parts.begin(), a.parts.end() - 1, b.parts.begin());
  std::optional<Parent> target;
  if (!same) {
    auto opened = open_parent(root, b);
    if (!opened.ok()) return opened.take_error();
    target.emplace(opened.take());
  }
  Held& from_held = source.value().dir;
  Held& to_held = same ? from_held : target->dir;

  if (a.must_be_dir || b.must_be_dir) {
    auto src = check_slash(from_held.look(), a.leaf(), request.path, true);
    if (!src.ok()) return src.take_error();
    if (b.must_be_dir) {
      auto dst = check_slash(to_held.look(), b.leaf(), request.to, false);
      if (!dst.ok()) return dst.take_error();
    }
  }
  // Both directories must still be beneath the root as the rename runs: renameat acts through
  // the handles, wherever they are by then.
  auto from_still = from_held.prove(root, "rename", request.path);
  if (!from_still.ok()) return from_still.take_error();
  int from_dir = from_still.value().fd();
  int to_dir = from_dir;
  if (!same) {
    auto to_still = to_held.prove(root, "rename", request.to);
    if (!to_still.ok()) return to_still.take_error();
    to_dir = to_still.value().fd();
  }
  int rc = request.no_replace
               ? platform::rename_noreplace(from_dir, a.leaf().c_str(), to_dir, b.leaf().c_str())
               : ::renameat(from_dir, a.leaf().c_str(), to_dir, b.leaf().c_str());
  if (rc != 0) {
    return sys_error(errno, "rename", request.path);
  }
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
