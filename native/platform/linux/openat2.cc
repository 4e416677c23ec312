// Linux: kernel-confined resolution with openat2(2) (5.6+).
//
// RESOLVE_BENEATH refuses any step above the dirfd (EXDEV) and re-checks at the end of the walk
// that the result is still beneath it, so a directory renamed out mid-lookup fails closed;
// RESOLVE_NO_SYMLINKS refuses a link anywhere (ELOOP), RESOLVE_NO_MAGICLINKS the /proc kind, and
// RESOLVE_NO_XDEV any mount point, bind mounts of the same file system included (EXDEV, which is
// then told apart from an escape by looking again without it).
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>

#include "../../core/crossing.h"
#include "../../core/eintr.h"
#include "../../core/resolve.h"
#include "../platform.h"

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace pinnedfs::platform {

namespace {
// Our own definition, not <linux/openat2.h>: headers older than 5.6 lack it, and glibc 2.43 may
// define the struct itself. The layout is the kernel ABI (v0, 24 bytes).
struct pinnedfs_open_how {
  std::uint64_t flags;
  std::uint64_t mode;
  std::uint64_t resolve;
};
constexpr std::uint64_t kResolveNoXdev = 0x01;
constexpr std::uint64_t kResolveNoMagicLinks = 0x02;
constexpr std::uint64_t kResolveNoSymlinks = 0x04;
constexpr std::uint64_t kResolveBeneath = 0x08;
constexpr std::uint64_t kConfined = kResolveBeneath | kResolveNoSymlinks | kResolveNoMagicLinks;
constexpr std::uint64_t kResolveFlags = kConfined | kResolveNoXdev;
// EAGAIN comes only from ".." handling after a concurrent rename or mount (fs/namei.c
// handle_dots); our paths are ".."-free, so this should never be reached. Bounded anyway.
constexpr int kEagainRetries = 128;

long raw_openat2(int dirfd, const char* path, int flags, mode_t mode,
                 std::uint64_t resolve = kResolveFlags) {
  pinnedfs_open_how how;
  std::memset(&how, 0, sizeof how);
  how.flags = static_cast<std::uint64_t>(static_cast<unsigned>(flags));
  // The kernel refuses a mode without O_CREAT/O_TMPFILE.
  how.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0;
  how.resolve = resolve;
  return ::syscall(SYS_openat2, dirfd, path, &how, sizeof how);
}

// EXDEV under RESOLVE_NO_XDEV is a mount point on the way, or (as without it) a directory that
// left the dirfd mid-lookup. The path is looked at again one component at a time, no link followed
// (core/crossing.h), for the first prefix on another mount than the dirfd: that is the mount
// point, and the refusal names it. None found: the lookup left the dirfd. Error path only.
Error explain_exdev(int dirfd, const std::string& relative, const std::string& shown_path) {
  auto base = mount_of(dirfd);
  if (base.ok()) {
    std::size_t at = first_crossing(dirfd, base.value(), relative);
    if (at > 0) return mount_point("openat2", shown_path, leading_components(relative, at));
  }
  return refusal(Refusal::Escape, "openat2", shown_path, "path escapes the root", EXDEV);
}
}  // namespace

bool kernel_compiled() {
  return true;
}

int kernel_probe(int rootfd) {
  long fd = raw_openat2(rootfd, ".", O_PATH | O_CLOEXEC, 0);
  if (fd < 0) return errno;
  ::close(static_cast<int>(fd));
  return 0;
}

Result<Fd> kernel_open(int dirfd, const std::string& relative, int flags, mode_t mode,
                       const std::string& shown_path) {
  long fd = -1;
  int err = 0;
  for (int attempt = 0;; ++attempt) {
    fd = retry_eintr(
        [&] { return raw_openat2(dirfd, relative.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode); });
    if (fd >= 0) return Fd(static_cast<int>(fd));
    err = errno;
    if (err == EAGAIN && attempt < kEagainRetries) continue;
    break;
  }
  switch (err) {
    case ELOOP:
      return symlink_refusal("openat2", shown_path, {});
    case EXDEV:
      return explain_exdev(dirfd, relative, shown_path);
    case ENOTDIR: {
      // O_DIRECTORY|O_NOFOLLOW on a trailing link reports ENOTDIR; say it was a link. An
      // intermediate link gives ELOOP above.
      std::size_t slash = relative.rfind('/');
      if (slash == std::string::npos) {
        return explain_open_failure(dirfd, relative, err, "openat2", shown_path);
      }
      // A deeper leaf ("a/link" as a parent directory): ask it from its own parent, itself opened
      // confined. Error path only, so the common case keeps its single syscall.
      long parent = raw_openat2(dirfd, relative.substr(0, slash).c_str(),
                                O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC, 0);
      if (parent >= 0) {
        Fd held(static_cast<int>(parent));
        return explain_open_failure(held.get(), relative.substr(slash + 1), err, "openat2",
                                    shown_path);
      }
      return sys_error(err, "openat2", shown_path);
    }
    case EAGAIN: {
      Error e = sys_error(EAGAIN, "openat2", shown_path);
      e.description = "resolution kept racing a concurrent rename or mount; retries exhausted";
      return e;
    }
    default:
      return sys_error(err, "openat2", shown_path);
  }
}

// Links within the root: RESOLVE_BENEATH still refuses any step above `dirfd` (an absolute link
// text, a ".." climbing out), and re-checks at the end; RESOLVE_NO_MAGICLINKS and RESOLVE_NO_XDEV
// stay. Only RESOLVE_NO_SYMLINKS is dropped, and O_NOFOLLOW, so a final link is followed too.
bool kernel_follows_within() {
  return true;
}

Result<Fd> kernel_open_within(int dirfd, const std::string& relative, int flags, mode_t mode,
                              const std::string& shown_path) {
  constexpr std::uint64_t kWithin = kResolveBeneath | kResolveNoMagicLinks | kResolveNoXdev;
  long fd = -1;
  int err = 0;
  int f = (flags & ~O_NOFOLLOW) | O_CLOEXEC;
  for (int attempt = 0;; ++attempt) {
    fd = retry_eintr([&] { return raw_openat2(dirfd, relative.c_str(), f, mode, kWithin); });
    if (fd >= 0) return Fd(static_cast<int>(fd));
    err = errno;
    if (err == EAGAIN && attempt < kEagainRetries) continue;
    break;
  }
  switch (err) {
    case ELOOP: {
      Error e = symlink_refusal("openat2", shown_path, {});
      e.description = "too many levels of symbolic links, or a link to a /proc magic link";
      return e;
    }
    case EXDEV: {
      // A mount on the way, or a link (or "..") that would leave the root. Only a mount names a
      // place; the search for it follows nothing (explain_exdev looks with no link followed).
      Error e = explain_exdev(dirfd, relative, shown_path);
      if (!e.mount) e.description = "path escapes the root (a link or '..' that leads out of it)";
      return e;
    }
    default:
      return sys_error(err, "openat2", shown_path);
  }
}

}  // namespace pinnedfs::platform
