// macOS: kernel-confined resolution with O_NOFOLLOW_ANY (macOS 11+, xnu-7195).
//
// Not compiled on Linux; kept compiling in our heads (there is no Mac in CI). XNU silently ignores
// unknown open flags, so availability is gated on the OS version read once, never by trying: on
// 10.15 O_NOFOLLOW_ANY would be dropped and the open would follow links.
#include <sys/stat.h>
#include <sys/sysctl.h>

#include <atomic>
#include <cstdlib>

#include "../../core/crossing.h"
#include "../../core/eintr.h"
#include "../../core/resolve.h"
#include "../platform.h"

#ifndef O_NOFOLLOW_ANY
#define O_NOFOLLOW_ANY 0x20000000
#endif

namespace pinnedfs::platform {

namespace {
int os_major() {
  static std::atomic<int> cached{-1};
  int v = cached.load();
  if (v >= 0) return v;
  char buf[32] = {0};
  size_t len = sizeof buf - 1;
  v = ::sysctlbyname("kern.osproductversion", buf, &len, nullptr, 0) == 0 ? std::atoi(buf) : 0;
  cached.store(v);
  return v;
}
}  // namespace

bool kernel_compiled() {
  return os_major() >= 11;
}

int kernel_probe(int rootfd) {
  if (!kernel_compiled()) return ENOSYS;
  int fd = ::openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_NOFOLLOW_ANY | O_CLOEXEC);
  if (fd < 0) return errno;
  ::close(fd);
  return 0;
}

namespace {
// XNU has no RESOLVE_NO_XDEV: O_NOFOLLOW_ANY crosses a mounted volume on the way like any
// directory. Whatever the open answered, the answer must not tell what lies behind a mount: a
// failure (a missing name, a file used as a directory, a write open of the mount point itself,
// a link behind it) and an open that landed on another device alike get the mount refusal when
// a prefix of the path lies on another mount than `dirfd`, naming that prefix, as the walk names
// it. Only then does the open's own answer stand.
Error refuse_if_crossed(int dirfd, const std::string& relative, const std::string& shown_path,
                        Error otherwise) {
  auto base = mount_of(dirfd);
  if (!base.ok()) return otherwise;
  std::size_t at = first_crossing(dirfd, base.value(), relative);
  if (at == 0) return otherwise;
  return mount_point("openat", shown_path, leading_components(relative, at));
}
}  // namespace

Result<Fd> kernel_open(int dirfd, const std::string& relative, int flags, mode_t mode,
                       const std::string& shown_path) {
  // O_NOFOLLOW_ANY alone: with O_NOFOLLOW it is EINVAL on macOS 15, and it refuses a trailing
  // link by itself. With ".." lexed out, no-follow resolution from the root cannot leave it.
  int f = (flags & ~O_NOFOLLOW) | O_NOFOLLOW_ANY | O_CLOEXEC;
  int fd = retry_eintr([&] { return ::openat(dirfd, relative.c_str(), f, mode); });
  if (fd >= 0) {
    Fd opened(fd);
    struct stat here, base;
    if (::fstat(opened.get(), &here) != 0 || ::fstat(dirfd, &base) != 0) {
      return sys_error(errno, "fstat", shown_path);
    }
    if (here.st_dev == base.st_dev) return opened;
    // Closed before the search: nothing is kept from the other volume. The search finds none
    // only if the tree changed in between; the whole path is then named.
    opened.reset();
    return refuse_if_crossed(dirfd, relative, shown_path,
                             mount_point("openat", shown_path, relative));
  }
  int err = errno;
  Error failed = err == ELOOP ? symlink_refusal("openat", shown_path, {})
                              : sys_error(err, "openat", shown_path);
  return refuse_if_crossed(dirfd, relative, shown_path, std::move(failed));
}

// O_NOFOLLOW_ANY refuses every link: links within the root are resolved by the core's own
// in-root resolution instead (core/resolve.cc), one held directory at a time.
bool kernel_follows_within() {
  return false;
}

Result<Fd> kernel_open_within(int, const std::string&, int, mode_t, const std::string& shown_path) {
  return sys_error(ENOSYS, "openat", shown_path);
}

}  // namespace pinnedfs::platform
