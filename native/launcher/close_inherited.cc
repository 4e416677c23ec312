#include "launcher/close_inherited.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>

namespace pinnedfs::launcher {

namespace {

// The bound of the last fallback: Linux's default fs.nr_open, the most descriptors a process can
// have unless an administrator raised it.
constexpr unsigned long kMostDescriptors = 1UL << 20;

bool closable(long fd, int keep_below, int also_keep, int lister) {
  return fd >= keep_below && fd != also_keep && fd != lister;
}

// close_range(2) over [first, last]; answers false when the kernel does not have it. Called by
// number: glibc has had a wrapper only since 2.34, and the prebuilds must load on 2.28.
bool close_range_between(unsigned first, unsigned last, int* error) {
#if defined(__linux__)
#ifndef SYS_close_range
#define SYS_close_range 436
#endif
  if (first > last) return true;
  if (::syscall(SYS_close_range, first, last, 0) == 0) return true;
  *error = errno;
  return false;
#else
  (void)first;
  (void)last;
  *error = ENOSYS;
  return false;
#endif
}

// Every descriptor the directory of open descriptors lists (Linux's /proc/self/fd, the BSDs' and
// macOS's /dev/fd), in passes until one closes nothing. Answers -1 when no such directory opens.
int close_listed(int keep_below, int also_keep) {
  for (int pass = 0; pass < 64; ++pass) {
    DIR* dir = ::opendir("/proc/self/fd");
    if (dir == nullptr) dir = ::opendir("/dev/fd");
    if (dir == nullptr) return -1;
    const int lister = ::dirfd(dir);
    int closed = 0;
    for (struct dirent* e = ::readdir(dir); e != nullptr; e = ::readdir(dir)) {
      char* end = nullptr;
      const long fd = std::strtol(e->d_name, &end, 10);
      if (end == e->d_name || *end != '\0') continue;
      if (!closable(fd, keep_below, also_keep, lister)) continue;
      // Only a close that happened counts: one the system refuses (a tool such as valgrind keeps
      // descriptors of its own a program cannot close) would otherwise keep the passes going.
      if (::close(static_cast<int>(fd)) == 0) ++closed;
    }
    ::closedir(dir);
    if (closed == 0) return 0;
  }
  return EMFILE;
}

int close_counted(int keep_below, int also_keep) {
  struct rlimit limit {};
  unsigned long most = kMostDescriptors;
  if (::getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_max != RLIM_INFINITY &&
      limit.rlim_max < most) {
    most = limit.rlim_max;
  }
  for (unsigned long fd = keep_below; fd < most; ++fd) {
    if (static_cast<long>(fd) != also_keep) ::close(static_cast<int>(fd));
  }
  return 0;
}

}  // namespace

int close_inherited(int keep_below, int also_keep, Method method) {
  if (keep_below < 0) return EINVAL;
  if (method == Method::best || method == Method::range) {
    int error = 0;
    const bool done = also_keep >= keep_below
                          ? close_range_between(keep_below, also_keep - 1, &error) &&
                                close_range_between(also_keep + 1, UINT_MAX, &error)
                          : close_range_between(keep_below, UINT_MAX, &error);
    if (done) return 0;
    if (method == Method::range) return error;
  }
  if (method == Method::best || method == Method::listed) {
    const int listed = close_listed(keep_below, also_keep);
    if (listed >= 0 || method == Method::listed) return listed < 0 ? ENOENT : listed;
  }
  return close_counted(keep_below, also_keep);
}

int only_kept_open(int keep_below, int also_keep) {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) dir = ::opendir("/dev/fd");
  if (dir == nullptr) return -1;
  const int lister = ::dirfd(dir);
  int answer = 1;
  for (struct dirent* e = ::readdir(dir); e != nullptr; e = ::readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(e->d_name, &end, 10);
    if (end == e->d_name || *end != '\0') continue;
    if (closable(fd, keep_below, also_keep, lister)) answer = 0;
  }
  ::closedir(dir);
  return answer;
}

}  // namespace pinnedfs::launcher
