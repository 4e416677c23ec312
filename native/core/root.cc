#include "root.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#if defined(__linux__)
#include <linux/fs.h>  // FS_IOC_GETVERSION
#include <sys/ioctl.h>
#include <sys/sysmacros.h>
#endif

#include "../platform/platform.h"
#include "eintr.h"
#include "resolve.h"

namespace pinnedfs {

namespace {
// Once the kernel strategy has worked in this process, an Auto root never falls back to the walk:
// a later ENOSYS/EPERM could be provoked (a seccomp filter installed under us) to force a weaker
// resolution. The contract prefers a visible failure to a silent downgrade.
std::atomic<bool> g_kernel_worked{false};
}  // namespace

const char* strategy_name(Strategy s) {
  switch (s) {
    case Strategy::Kernel:
#if defined(__APPLE__)
      return "nofollow_any";
#else
      return "openat2";
#endif
    case Strategy::Walk:
      return "walk";
    case Strategy::Auto:
      break;
  }
  return "auto";
}

std::string Identity::str() const {
  return std::to_string(dev) + ":" + std::to_string(ino);
}

Identity identity_of(const struct stat& st) {
  // dev_t is signed 32-bit on macOS; widening by plain conversion matches libuv and
  // fs.stat({ bigint: true }), so the "dev:ino" we report equals what Node reports.
  return Identity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

std::string RootIdentity::str() const {
  std::string out = id.str();
  char extra[48];
  switch (kind) {
    case Kind::Birth:
      std::snprintf(extra, sizeof extra, ":b%" PRId64 ".%09" PRIu32, birth_sec, birth_nsec);
      return out + extra;
    case Kind::Generation:
      std::snprintf(extra, sizeof extra, ":g%" PRIu64, generation);
      return out + extra;
    case Kind::Plain:
      break;
  }
  return out;
}

namespace {

// One look at a directory: through `fd` when it is >= 0 (an O_RDONLY descriptor of it), else
// through the trusted `path`, followed. The birth time comes with the same call that gives dev:ino;
// the generation needs a descriptor that may be read, so it is asked only where there is no birth
// time and `generation` allows (a path-based look then opens the directory for that one ioctl).
Result<RootIdentity> look(int fd, const std::string& path, bool generation) {
  RootIdentity out;
  const char* syscall = fd >= 0 ? "fstat" : "stat";
  bool have = false;
#if defined(__linux__)
  struct statx sx;
  int rc = retry_eintr([&] {
    return fd >= 0 ? ::statx(fd, "", AT_EMPTY_PATH, STATX_BASIC_STATS | STATX_BTIME, &sx)
                   : ::statx(AT_FDCWD, path.c_str(), 0, STATX_BASIC_STATS | STATX_BTIME, &sx);
  });
  if (rc == 0) {
    if (!S_ISDIR(sx.stx_mode)) return sys_error(ENOTDIR, syscall, path);
    out.id = Identity{static_cast<std::uint64_t>(makedev(sx.stx_dev_major, sx.stx_dev_minor)),
                      static_cast<std::uint64_t>(sx.stx_ino)};
    // A zero birth time is a file system that keeps the field and never set it (an image made by
    // a tool), not a birth: it tells nothing apart.
    if ((sx.stx_mask & STATX_BTIME) && (sx.stx_btime.tv_sec != 0 || sx.stx_btime.tv_nsec != 0)) {
      out.kind = RootIdentity::Kind::Birth;
      out.birth_sec = sx.stx_btime.tv_sec;
      out.birth_nsec = sx.stx_btime.tv_nsec;
    }
    have = true;
  } else if (errno != ENOSYS && errno != EPERM) {
    // ENOSYS: a kernel before 4.11; EPERM: a seccomp filter that denies statx. Both: plain stat.
    return sys_error(errno, "statx", path);
  }
#endif
  if (!have) {
    struct stat st;
    int rc2 = retry_eintr([&] { return fd >= 0 ? ::fstat(fd, &st) : ::stat(path.c_str(), &st); });
    if (rc2 != 0) return sys_error(errno, syscall, path);
    if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, syscall, path);
    out.id = identity_of(st);
#if defined(__APPLE__)
    if (st.st_birthtimespec.tv_sec != 0 || st.st_birthtimespec.tv_nsec != 0) {
      out.kind = RootIdentity::Kind::Birth;
      out.birth_sec = st.st_birthtimespec.tv_sec;
      out.birth_nsec = static_cast<std::uint32_t>(st.st_birthtimespec.tv_nsec);
    }
#endif
  }
#if defined(__linux__) && defined(FS_IOC_GETVERSION)
  if (out.kind == RootIdentity::Kind::Plain && generation) {
    Fd opened;
    int use = fd;
    if (use < 0) {
      int raw =
          retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
      if (raw < 0) return sys_error(errno, "open", path);
      opened = Fd(raw);
      use = raw;
    }
    // The file systems that answer it (ext4, xfs, btrfs) copy out 32 bits, into a buffer the
    // ioctl's definition sizes as a long.
    long buf = 0;
    if (::ioctl(use, FS_IOC_GETVERSION, &buf) == 0) {
      std::uint32_t g = 0;
      std::memcpy(&g, &buf, sizeof g);
      out.kind = RootIdentity::Kind::Generation;
      out.generation = g;
    }
  }
#else
  (void)generation;
#endif
  return out;
}

}  // namespace

Result<RootIdentity> identify_root(const std::string& path) {
  if (path.find('\0') != std::string::npos) return bad_argument("path contains a NUL byte");
  return look(-1, path, true);
}

Result<RootIdentity> identify_fd(int fd, const std::string& shown) {
  return look(fd, shown, true);
}

Result<Identity> identify_path(const std::string& path) {
  if (path.find('\0') != std::string::npos) return bad_argument("path contains a NUL byte");
  struct stat st;
  int rc = retry_eintr([&] { return ::stat(path.c_str(), &st); });
  if (rc != 0) return sys_error(errno, "stat", path);
  if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, "stat", path);
  return identity_of(st);
}

Result<std::shared_ptr<Root>> Root::pin(const std::string& path, Strategy requested, Links links) {
  if (path.empty()) return bad_argument("root path is empty");
  if (path.find('\0') != std::string::npos) return bad_argument("root path contains a NUL byte");
  int raw = retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (raw < 0) return sys_error(errno, "open", path);
  Fd fd(raw);
  auto identity = look(fd.get(), path, true);
  if (!identity.ok()) return identity.take_error();

  Strategy chosen = requested;
  if (requested != Strategy::Walk) {
    int probe = platform::kernel_compiled() ? platform::kernel_probe(fd.get()) : ENOSYS;
    if (probe == 0) {
      g_kernel_worked.store(true, std::memory_order_relaxed);
      chosen = Strategy::Kernel;
    } else if (requested == Strategy::Kernel) {
      return refusal(Refusal::None, "openat2", path,
                     std::string("kernel-confined resolution is unavailable: ") + errno_name(probe),
                     probe);
    } else if ((probe == ENOSYS || probe == EPERM) && !g_kernel_worked.load()) {
      chosen = Strategy::Walk;
    } else {
      return refusal(Refusal::None, "openat2", path,
                     std::string("kernel-confined resolution failed after it had worked in this "
                                 "process; refusing to downgrade to the walk: ") +
                         errno_name(probe),
                     probe);
    }
  }
  auto mount = platform::mount_of(fd.get());
  if (!mount.ok()) {
    Error e = mount.take_error();
    e.path = path;
    return e;
  }
  return std::shared_ptr<Root>(
      new Root(std::move(fd), identity.value(), mount.value(), path, chosen, links));
}

Status Root::verify_path_identity(const std::string& alias) const {
  for (const std::string* spelling : {&path_, &alias}) {
    if (spelling->empty()) continue;
    // One statx where the birth time tells; the generation costs an open, asked only of a root
    // identified by it.
    auto now = look(-1, *spelling, identity_.kind == RootIdentity::Kind::Generation);
    if (!now.ok()) {
      Error e = now.take_error();
      if (e.err == ENOENT || e.err == ENOTDIR) {
        return refusal(Refusal::IdentityChanged, "stat", *spelling,
                       "workspace_identity_changed: the root path no longer names a directory",
                       EBUSY);
      }
      return e;
    }
    if (now.value() != identity_) {
      return refusal(Refusal::IdentityChanged, "stat", *spelling,
                     "workspace_identity_changed: the root path now names " + now.value().str() +
                         ", not the pinned " + identity_.str(),
                     EBUSY);
    }
  }
  return ok_status();
}

}  // namespace pinnedfs
