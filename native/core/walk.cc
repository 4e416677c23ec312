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

// The walk itself, checking each directory it opens to be on the root's mount before anything in
// it is looked up, so that no refusal depends on what lies behind a mount point (core/resolve.h).
Result<Held> walk_dirs_checked(const Root& root, const LexedPath& path, std::size_t count) {
  Fd cur;
  for (std::size_t i = 0; i < count; ++i) {
    auto next = open_child(root, cur.valid() ? cur.get() : root.fd(), path.parts[i],
                           kDirHandleFlags, 0, path.joined(i + 1));
    if (!next.ok()) return next.take_error();
    cur = next.take();
    auto same = pinnedfs::on_root_mount(root, cur.get(), path.joined(i + 1), path.joined());
    if (!same.ok()) return same.take_error();
  }
  return Held::unproven(std::move(cur), path.joined(count));
}

// Where mounts have ids (Linux 5.8+, or fdinfo), one check stands for the whole descent: a mount
// id is the mount's own, a walk only descends, and descending never leaves a mount once crossed
// and never comes back to one left, so the last directory held is on the root's mount exactly when
// every one before it is. The check per component is then paid only where something is off: a
// failed lookup, or a last directory off the mount, walks again checking each directory, so the
// refusal is the one the checked walk gives, naming the mount point. Devices alone (no ids) cannot
// tell a same-device bind mount from the root's own, so there every directory is checked.
bool one_check_suffices(const Root& root) {
  return root.mount().has_id;
}

// The refusal for a walk found off the root's mount, or that failed where a mount may be behind
// it: the checked walk's, or `failed` when the checked walk finds nothing off (the tree changed).
Error off_mount(const Root& root, const LexedPath& path, std::size_t count, Error failed) {
  auto checked = walk_dirs_checked(root, path, count);
  if (!checked.ok()) return checked.take_error();
  return failed;
}

// Whether `fd`, the last directory a walk holds, is on the root's mount (one statx).
Status dir_on_root_mount(const Root& root, const LexedPath& path, std::size_t count, int fd) {
  if (fd == root.fd()) return ok_status();
  auto same = pinnedfs::on_root_mount(root, fd, path.joined(count), path.joined());
  if (same.ok()) return same;
  return off_mount(root, path, count, same.take_error());
}

Result<Held> walk_dirs(const Root& root, const LexedPath& path, std::size_t count) {
  if (!one_check_suffices(root)) return walk_dirs_checked(root, path, count);
  Fd cur;
  for (std::size_t i = 0; i < count; ++i) {
    auto next = open_child(root, cur.valid() ? cur.get() : root.fd(), path.parts[i],
                           kDirHandleFlags, 0, path.joined(i + 1));
    if (!next.ok()) {
      // Behind a mount point a name's absence, kind or link must not show: the mount's refusal.
      if (!cur.valid()) return next.take_error();
      auto same = dir_on_root_mount(root, path, i, cur.get());
      if (!same.ok()) return same.take_error();
      return next.take_error();
    }
    cur = next.take();
  }
  return Held::unproven(std::move(cur), path.joined(count));
}

// What the leaf's open in `dirfd` answered, judged by the object's mount: descending never
// leaves a mount once crossed, so the object's mount says it all. A leaf that could not be opened
// as asked may itself be a mount point (a write open of one is EISDIR): the mount refusal, then;
// and a directory above it off the mount is refused as the checked walk names it.
Result<Fd> leaf_on_root_mount(const Root& root, const LexedPath& path, int dirfd, Result<Fd> fd,
                              const std::string& shown) {
  const std::size_t above = path.parts.size() - 1;
  if (!fd.ok()) {
    if (one_check_suffices(root)) {
      auto parent = dir_on_root_mount(root, path, above, dirfd);
      if (!parent.ok()) return parent.take_error();
    }
    return mount_leaf(root, dirfd, path.leaf(), fd.take_error(), shown, shown);
  }
  auto same = same_mount(root, fd.value().get(), shown);
  if (!same.ok()) {
    if (one_check_suffices(root) && above > 0)
      return off_mount(root, path, above, same.take_error());
    return same.take_error();
  }
  return fd;
}
}  // namespace

Result<Held> open_dirs(const Root& root, const LexedPath& path, std::size_t count) {
  auto dir = walk_dirs(root, path, count);
  if (!dir.ok()) return dir;
  auto same = one_check_suffices(root) ? dir_on_root_mount(root, path, count, dir.value().look())
                                       : same_mount(root, dir.value().look(), dir.value().rel());
  if (!same.ok()) return same.take_error();
  return dir;
}

Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode) {
  if (path.is_root()) {
    int fd = retry_eintr([&] { return ::openat(root.fd(), ".", flags | O_CLOEXEC, mode); });
    if (fd < 0) return sys_error(errno, "openat", "");
    return Fd(fd);
  }
  std::string shown = path.joined();
  std::size_t n = path.parts.size();
  if (n == 1) {
    return leaf_on_root_mount(root, path, root.fd(),
                              open_child(root, root.fd(), path.leaf(), flags, mode, shown), shown);
  }
  auto dir = walk_dirs(root, path, n - 1);
  if (!dir.ok()) return dir.take_error();
  if (!mutates(flags)) {
    // Only looking: nothing is changed through the parent, and what is opened is judged by its own
    // checks (its mount here; links, kind, identity in the operation).
    int in = dir.value().look();
    return leaf_on_root_mount(root, path, in, open_child(root, in, path.leaf(), flags, mode, shown),
                              shown);
  }
  // Creating or writing in a directory the walk holds: on the root's mount, and the held handle's
  // proof, as every act through a kept directory takes it, before the leaf is opened (and perhaps
  // created) in it.
  auto same = one_check_suffices(root) ? dir_on_root_mount(root, path, n - 1, dir.value().look())
                                       : same_mount(root, dir.value().look(), dir.value().rel());
  if (!same.ok()) return same.take_error();
  auto fd = dir.value().act(root, "openat", shown, [&](int dirfd) {
    return open_child(root, dirfd, path.leaf(), flags, mode, shown);
  });
  return leaf_on_root_mount(root, path, dir.value().look(), std::move(fd), shown);
}

}  // namespace pinnedfs::walk
