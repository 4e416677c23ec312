// remove (Node's fs.rm, which Effect's NodeFileSystem.remove calls) and rmdirs (rmdirs.cc).
//
// Node semantics kept: a directory without `recursive` is refused (EISDIR, even when empty, even
// with `force`); `force` makes a missing path (or missing parent) a success, but not a path through
// a file (ENOTDIR); a link is removed as the entry, never followed. Ours on top: the root itself is
// never removed (BadArgument), a link on the way is refused, and the tree is removed by handle.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "remove_tree.h"

namespace pinnedfs::ops {

namespace {

Error is_a_directory(const std::string& shown) {
  // Node answers ERR_FS_EISDIR ("Path is a directory"), which Effect maps to Unknown; the errno
  // behind it, EISDIR, maps to BadResource, which says more to a caller. Deliberate.
  Error e = sys_error(EISDIR, "rm", shown);
  e.description = "Path is a directory: pass recursive to remove it";
  return e;
}

// The tree walk: nothing to answer, or with `split`, the directories left for the caller (their
// names; none when the whole tree went).
Result<Value> remove_whole(const Root& root, const Request& request, Held& parent,
                           const std::string& leaf, const std::string& shown) {
  Names left;
  auto removed = remove_tree(root, parent, leaf, shown, request.split ? &left.names : nullptr);
  if (!removed.ok()) return removed.take_error();
  if (!left.names.empty()) return Value(std::move(left));
  return Value(std::monostate{});
}

}  // namespace

Result<Value> remove(const Root& root, const Request& request) {
  const std::string& shown = request.path;
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) {
    return bad_argument("refusing to remove the pinned root itself", shown);
  }
  auto gone = [&](Error e) -> Result<Value> {
    // force: a missing path is what the caller wanted. Only a plain ENOENT qualifies; a link on the
    // way is still refused and ENOTDIR (a file on the way) still fails, as in Node.
    if (request.force && e.refusal == Refusal::None && e.err == ENOENT)
      return Value(std::monostate{});
    return e;
  };
  auto parent = open_parent(root, path.value());
  if (!parent.ok()) return gone(parent.take_error());
  Held& held = parent.value().dir;
  const std::string& leaf = parent.value().leaf;
  if (request.has_expect_identity) {
    // One of a split's directories: its parent must still be the directory split. Where another
    // stands there now, nothing is done here; the caller's last remove takes that path whole.
    auto id = held.identity(shown);
    if (!id.ok()) return id.take_error();
    if (id.value() != request.expect_identity) return Value(std::monostate{});
  }

  if (path.value().must_be_dir) {
    // "x/" may only name a directory: never unlink a file or link by that spelling (a trailing
    // slash after a link is a link met on the way).
    struct stat st;
    if (::fstatat(held.look(), leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return gone(sys_error(errno, "lstat", shown));
    }
    if (S_ISLNK(st.st_mode)) {
      return symlink_refusal("rm", shown, leaf);
    }
    if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, "rm", shown);
    if (!request.recursive) return is_a_directory(shown);
    return remove_whole(root, request, held, leaf, path.value().joined());
  }

  // The unlink and the rmdir each act through the parent just proven beneath the root; the answer
  // is the errno (0 when done).
  auto unlink_flags = [&](int flags) {
    return held.act(root, flags ? "rmdir" : "unlink", shown, [&](int dir) -> Result<int> {
      int rc = retry_eintr([&] { return ::unlinkat(dir, leaf.c_str(), flags); });
      return rc == 0 ? 0 : errno;
    });
  };
  auto unlinked = unlink_flags(0);
  if (!unlinked.ok()) return unlinked.take_error();
  int err = unlinked.value();
  if (err == 0) return Value(std::monostate{});
  // A file bind-mounted over the name: the kernel never unlinks a mount point.
  if (err == EBUSY) return mount_point("unlink", shown, path.value().joined());
  if (!platform::unlink_met_directory(err, held.look(), leaf))
    return gone(sys_error(err, "unlink", shown));
  if (!request.recursive) return is_a_directory(shown);
  // An empty directory goes in one call; only a full one needs the walk.
  auto removed_dir = unlink_flags(AT_REMOVEDIR);
  if (!removed_dir.ok()) return removed_dir.take_error();
  err = removed_dir.value();
  if (err == 0 || err == ENOENT) return Value(std::monostate{});
  // EBUSY: a mount point (the tree walk below refuses it as one, having looked).
  if (err != ENOTEMPTY && err != EEXIST && err != EBUSY) return sys_error(err, "rmdir", shown);
  return remove_whole(root, request, held, leaf, path.value().joined());
}

}  // namespace pinnedfs::ops
