// The portable walk: one openat(O_NOFOLLOW|O_DIRECTORY) per component from the pinned root.
//
// Used where the kernel cannot confine a whole lookup (Linux < 5.6, openat2 blocked by seccomp,
// macOS < 11) and selectable on Linux so every test runs it. Residual risk, documented in the
// README: a directory the walk already holds, renamed out of the root mid-walk by someone with write
// access on both sides, carries the rest of that walk with it (endara-ai/endara-relay#158).
#include "../core/resolve.h"

namespace pinnedfs::walk {

Result<DirRef> open_dirs(const Root& root, const LexedPath& path, std::size_t count) {
  DirRef cur = DirRef::borrow(root.fd());
  for (std::size_t i = 0; i < count; ++i) {
    auto next = open_child(root, cur.get(), path.parts[i], kDirHandleFlags, 0, path.joined(i + 1));
    if (!next.ok()) return next.take_error();
    cur = DirRef::own(next.take());
  }
  return cur;
}

Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode) {
  if (path.is_root()) {
    int fd;
    do fd = ::openat(root.fd(), ".", flags | O_CLOEXEC, mode);
    while (fd < 0 && errno == EINTR);
    if (fd < 0) return sys_error(errno, "openat", "");
    return Fd(fd);
  }
  auto parent = walk::open_dirs(root, path, path.parts.size() - 1);
  if (!parent.ok()) return parent.take_error();
  return open_child(root, parent.value().get(), path.leaf(), flags, mode, path.joined());
}

}  // namespace pinnedfs::walk
