#include "root.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <atomic>

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

Result<Identity> identify_path(const std::string& path) {
  if (path.find('\0') != std::string::npos) return bad_argument("path contains a NUL byte");
  struct stat st;
  int rc = retry_eintr([&] { return ::stat(path.c_str(), &st); });
  if (rc != 0) return sys_error(errno, "stat", path);
  if (!S_ISDIR(st.st_mode)) return sys_error(ENOTDIR, "stat", path);
  return identity_of(st);
}

Result<std::shared_ptr<Root>> Root::pin(const std::string& path, Strategy requested) {
  if (path.empty()) return bad_argument("root path is empty");
  if (path.find('\0') != std::string::npos) return bad_argument("root path contains a NUL byte");
  int raw = retry_eintr([&] { return ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (raw < 0) return sys_error(errno, "open", path);
  Fd fd(raw);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0) return sys_error(errno, "fstat", path);

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
      new Root(std::move(fd), identity_of(st), mount.value(), path, chosen));
}

Status Root::verify_path_identity(const std::string& alias) const {
  for (const std::string* spelling : {&path_, &alias}) {
    if (spelling->empty()) continue;
    auto now = identify_path(*spelling);
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
