#include "handle_mode.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>

#if defined(__linux__)
#include <sys/statfs.h>
#include <sys/syscall.h>
#ifndef SYS_fchmodat2
#define SYS_fchmodat2 452
#endif
#ifndef PROC_SUPER_MAGIC
#define PROC_SUPER_MAGIC 0x9fa0
#endif
#endif

namespace pinnedfs::ops {

#if defined(__linux__)
namespace {
// -1 unknown, 1 works, 0 missing (ENOSYS): then every call goes straight to /proc.
std::atomic<int> g_fchmodat2{-1};

bool proc_is_procfs() {
  // A /proc that is not procfs (a bind mount, a container quirk) would make the magic link an
  // ordinary path; refuse the fallback rather than chmod whatever it names.
  static std::atomic<int> cached{-1};
  int v = cached.load(std::memory_order_relaxed);
  if (v < 0) {
    struct statfs fs;
    v = (::statfs("/proc", &fs) == 0 && static_cast<long>(fs.f_type) == PROC_SUPER_MAGIC) ? 1 : 0;
    cached.store(v, std::memory_order_relaxed);
  }
  return v == 1;
}
}  // namespace

Status chmod_handle(int fd, mode_t mode, const std::string& shown_path) {
  if (g_fchmodat2.load(std::memory_order_relaxed) != 0) {
    long rc;
    do rc = ::syscall(SYS_fchmodat2, fd, "", static_cast<unsigned>(mode), AT_EMPTY_PATH);
    while (rc != 0 && errno == EINTR);
    if (rc == 0) {
      g_fchmodat2.store(1, std::memory_order_relaxed);
      return ok_status();
    }
    int err = errno;
    if (err == ENOSYS) {
      g_fchmodat2.store(0, std::memory_order_relaxed);
    } else if (err != EPERM) {
      // EPERM may be a seccomp filter (Docker < 26 answers unknown syscalls EPERM) or a real
      // permission problem; the /proc path below tells the two apart by failing the same way.
      return sys_error(err, "fchmodat2", shown_path);
    }
  }
  if (!proc_is_procfs()) {
    Error e = sys_error(ENOSYS, "chmod", shown_path);
    e.description = "no way to set a mode by handle here: fchmodat2 is unavailable and /proc is not procfs";
    return e;
  }
  std::string magic = "/proc/self/fd/" + std::to_string(fd);
  int rc;
  do rc = ::chmod(magic.c_str(), mode);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return sys_error(errno, "chmod", shown_path);
  return ok_status();
}
#else
Status chmod_handle(int fd, mode_t mode, const std::string& shown_path) {
  // macOS: the handle is O_RDONLY or O_SEARCH on a directory, which fchmod accepts.
  int rc;
  do rc = ::fchmod(fd, mode);
  while (rc != 0 && errno == EINTR);
  if (rc != 0) return sys_error(errno, "fchmod", shown_path);
  return ok_status();
}
#endif

}  // namespace pinnedfs::ops
