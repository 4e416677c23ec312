// Linux: mode and owner changes on an O_PATH descriptor.
//
// O_PATH never runs a driver's open and needs no read or write permission on the object, so the
// handle is the object itself whatever it is; fstat on it is the check (ops/attr.cc) and the change
// acts on it. chmod: fchmodat2(fd, "", mode, AT_EMPTY_PATH) (Linux 6.6), else chmod of the
// /proc/self/fd/N magic link, as glibc 2.32-2.38 and Go do. Never glibc's fchmodat with
// AT_SYMLINK_NOFOLLOW: before 2.32 it always fails ENOTSUP, and from 2.39 it falls back only on
// ENOSYS, so a Docker < 26 seccomp profile (EPERM) breaks it.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>

#include "../../core/eintr.h"
#include "../../core/resolve.h"
#include "../platform.h"

#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

namespace pinnedfs::attr {

namespace {

// Whether fchmodat2 is worth trying: cleared once the kernel (ENOSYS) or a seccomp filter (EPERM
// that the /proc route then does not share) has said no, so later calls skip the failing syscall.
std::atomic<bool> g_fchmodat2{true};

}  // namespace

Result<Fd> open_for_change(const Root& root, const LexedPath& path) {
  return open_beneath(root, path, kObjectHandleFlags);
}

Status change_mode_via_proc(int fd, mode_t mode, const std::string& shown) {
  // Through a /proc that is not procfs, chmod would follow whatever someone mounted or linked
  // there.
  if (!platform::proc_is_procfs()) {
    Error e = sys_error(ENOSYS, "chmod", shown);
    e.description = "no fchmodat2 on this kernel and /proc is not procfs: cannot chmod by handle";
    return e;
  }
  char proc[48];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  int rc = retry_eintr([&] { return ::chmod(proc, mode); });
  if (rc != 0) return sys_error(errno, "chmod", shown);
  return ok_status();
}

Status change_mode(int fd, mode_t mode, const std::string& shown) {
  if (g_fchmodat2.load(std::memory_order_relaxed)) {
    long rc = retry_eintr([&] { return ::syscall(SYS_fchmodat2, fd, "", mode, AT_EMPTY_PATH); });
    if (rc == 0) return ok_status();
    int err = errno;
    if (err == ENOSYS) {
      g_fchmodat2.store(false, std::memory_order_relaxed);
    } else if (err == EPERM) {
      // A real permission failure, or a seccomp profile that answers EPERM for syscalls it does not
      // know. The /proc route checks the same permissions, so it tells the two apart.
      auto viaproc = change_mode_via_proc(fd, mode, shown);
      if (viaproc.ok()) g_fchmodat2.store(false, std::memory_order_relaxed);
      return viaproc;
    } else {
      return sys_error(err, "fchmodat2", shown);
    }
  }
  return change_mode_via_proc(fd, mode, shown);
}

Status change_owner(int fd, uid_t uid, gid_t gid, const std::string& shown) {
  int rc = retry_eintr([&] { return ::fchownat(fd, "", uid, gid, AT_EMPTY_PATH); });
  if (rc != 0) return sys_error(errno, "fchownat", shown);
  return ok_status();
}

}  // namespace pinnedfs::attr
