// What stands at a target's name, checked before a replacement is published there (temp.h): by
// writeFile's replacement, copyFile and cp. The check is by name, and the publish later acts by
// name: a target swapped in between is replaced as an entry (rename never follows or writes
// through it), so the window cannot carry a write outside the root.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "temp.h"

namespace pinnedfs::ops {

Status check_target(const Root& root, int dirfd, const std::string& leaf, const char* syscall,
                    const std::string& shown, bool exclusive, Target* t) {
  MountIdentity mount;
  int looked = platform::lstat_with_mount(dirfd, leaf.c_str(), &t->st, &mount);
  if (looked != 0) {
    if (looked == ENOENT) return ok_status();
    return sys_error(looked, "lstat", shown);
  }
  t->exists = true;
  // Exclusive answers what open(O_CREAT|O_EXCL) answers for anything at the name, a link included.
  if (exclusive) return sys_error(EEXIST, syscall, shown);
  if (S_ISLNK(t->st.st_mode)) return symlink_refusal(syscall, shown, leaf);
  if (S_ISDIR(t->st.st_mode)) {
    return mount_leaf(root, dirfd, leaf, sys_error(EISDIR, syscall, shown), shown, shown);
  }
  // Replacing a hard-linked name would not write the other name, so nothing outside would change.
  // We refuse all the same: the contract promises a hard-linked file is never written, a plain
  // write refuses it, and silently splitting the link (a pnpm store, a backup) loses the sharing
  // the user set up. One rule for every replacement, and for every kind of file.
  auto hard = refuse_hard_link(t->st, shown, syscall);
  if (!hard.ok()) return hard;
  if (!S_ISREG(t->st.st_mode)) {
    return refusal(Refusal::NotRegular, syscall, shown,
                   "not a regular file (FIFO, socket or device): refused, never replaced", EINVAL);
  }
  // A file bind-mounted over the name is another mount's object, which a write in place refuses
  // (and a rename could not replace: EBUSY). The look above told its mount: by mount id on Linux
  // 5.8+, by device on macOS, which has no bind mounts (and where an O_RDONLY handle would need
  // read permission a write does not). Linux before 5.8 asks the name's own O_PATH handle.
  auto told = mount_told(root, mount);
  if (told == MountTold::Other) return mount_point(syscall, shown, shown);
  if (told == MountTold::Unknown) {
    int raw = retry_eintr([&] { return ::openat(dirfd, leaf.c_str(), kObjectHandleFlags); });
    if (raw < 0) return explain_open_failure(dirfd, leaf, errno, "openat", shown);
    Fd object(raw);
    auto same = same_mount(root, object.get(), shown);
    if (!same.ok()) return same;
  }
  // Node opens the file for writing (writeFile, and copyFile's destination), so a file the caller
  // may not write (0444, another user's) is EACCES even where the directory would let a rename
  // replace it. Asked of the name we just looked at; the answer only decides whether to go on, the
  // rename acts on the entry. No flags: with AT_EACCESS or AT_SYMLINK_NOFOLLOW glibc calls
  // faccessat2, which a container's older seccomp profile answers EPERM (a Node process's real and
  // effective ids are the same).
  if (::faccessat(dirfd, leaf.c_str(), W_OK, 0) != 0) return sys_error(errno, syscall, shown);
  return ok_status();
}

}  // namespace pinnedfs::ops
