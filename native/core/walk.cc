// The portable walk: one openat(O_NOFOLLOW|O_DIRECTORY) per component from the pinned root.
//
// Used where the kernel cannot confine a whole lookup (Linux < 5.6, openat2 blocked by seccomp,
// macOS < 11) and selectable on Linux so every test runs it. Residual risk, documented in the
// README: a directory the walk already holds, renamed out of the root mid-walk by someone with
// write access on both sides, carries the rest of that walk with it (endara-ai/endara-relay#158). A
// walk that only reads ends there; one that creates or writes proves its parent beneath the root
// first (core/beneath.h). Whatever it opens must lie on the root's mount.
#include "eintr.h"
#include "resolve.h"

namespace pinnedfs::walk {

namespace {
// Flags that change the file system or what the descriptor reaches: the parent they act in is
// proven beneath the root first. O_PATH and O_RDONLY opens only look.
bool mutates(int flags) {
#if defined(O_PATH)
  if (flags & O_PATH) return false;
#endif
  return (flags & (O_CREAT | O_TRUNC)) != 0 || (flags & O_ACCMODE) != O_RDONLY;
}
}  // namespace

Result<Fd> open_dirs(const Root& root, const LexedPath& path, std::size_t count) {
  Fd cur;
  for (std::size_t i = 0; i < count; ++i) {
    auto next = open_child(root, cur.valid() ? cur.get() : root.fd(), path.parts[i],
                           kDirHandleFlags, 0, path.joined(i + 1));
    if (!next.ok()) return next.take_error();
    cur = next.take();
    // A mount point is refused before anything behind it is looked up (core/resolve.h).
    auto same = on_root_mount(root, cur.get(), path.joined(i + 1), path.joined());
    if (!same.ok()) return same.take_error();
  }
  return cur;
}

Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode) {
  if (path.is_root()) {
    int fd = retry_eintr([&] { return ::openat(root.fd(), ".", flags | O_CLOEXEC, mode); });
    if (fd < 0) return sys_error(errno, "openat", "");
    return Fd(fd);
  }
  std::string shown = path.joined();
  std::size_t n = path.parts.size();
  Fd parent;
  if (n > 1) {
    auto dirs = walk::open_dirs(root, path, n - 1);
    if (!dirs.ok()) return dirs.take_error();
    parent = dirs.take();
    if (mutates(flags)) {
      // Creating or writing in a directory the walk holds: it must still be beneath the root, and
      // on the root's mount, before the leaf is opened (and perhaps created) in it.
      auto same = same_mount(root, parent.get(), path.joined(n - 1));
      if (!same.ok()) return same.take_error();
      auto still = prove_beneath(root, parent.get(), nullptr, path.joined(n - 1), "openat", shown);
      if (!still.ok()) return still.take_error();
    }
  }
  int in = parent.valid() ? parent.get() : root.fd();
  auto fd = open_child(root, in, path.leaf(), flags, mode, shown);
  // A leaf that could not be opened as asked may be a mount point (a write open of one is EISDIR).
  if (!fd.ok()) return mount_leaf(root, in, path.leaf(), fd.take_error(), shown, shown);
  // Descending never leaves a mount once crossed, so the object's mount says it all.
  auto same = same_mount(root, fd.value().get(), shown);
  if (!same.ok()) return same.take_error();
  return fd;
}

}  // namespace pinnedfs::walk
