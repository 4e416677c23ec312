// The temporary's lifecycle (temp.h): created anonymous or under a random name, published by a
// link or a rename, and dropped, proven beneath the root before each of those acts.
#include "temp.h"

#include <fcntl.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

#include "../core/eintr.h"
#include "../platform/platform.h"

namespace pinnedfs::ops {

namespace {

// How many random names are tried before EEXIST is the answer: a collision is a retry, and only
// someone squatting on the names makes it more than one.
constexpr int kNameAttempts = 16;

#if defined(O_TMPFILE)
// Gives the anonymous file `fd` the name `name` in `dirfd`: 0 or the errno. linkat(AT_EMPTY_PATH)
// needs CAP_DAC_READ_SEARCH before Linux 6.10 (ENOENT otherwise); the /proc magic link does the
// same for anyone, and is taken only where /proc is procfs: anything else mounted there could make
// /proc/self/fd/N name a file of its choosing.
int link_tmpfile(int fd, int dirfd, const std::string& name) {
  if (::linkat(fd, "", dirfd, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  int err = errno;
  if (err != ENOENT) return err;
  if (!platform::proc_is_procfs()) return err;
  char proc[48];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc, dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return err;  // the first answer is the meaningful one
}
#endif

// Whether a create-only rename failed only because it is not offered here, so that link(2), which
// never replaces a name either, can do it: EINVAL, a file system without it (Linux); ENOSYS, a
// kernel before 3.15; EPERM, an older seccomp profile that does not know renameat2 (a real EPERM
// is answered by the link as well); ENOTSUP, a macOS file system without RENAME_EXCL.
bool no_create_only_rename(int err) {
#if EOPNOTSUPP != ENOTSUP
  if (err == EOPNOTSUPP) return true;
#endif
  return err == EINVAL || err == ENOSYS || err == EPERM || err == ENOTSUP;
}

}  // namespace

Status OwnedTemp::create(mode_t mode, bool allow_anonymous) {
#if defined(O_TMPFILE)
  if (allow_anonymous) {
    // Anonymous: nothing is named until publish, which proves the directory again. This act spends
    // the lookup's proof all the same, so that publish, after the write, cannot.
    auto still = dir_.prove(root_, "openat", shown_);
    if (!still.ok()) return still.take_error();
    int raw = retry_eintr(
        [&] { return ::openat(still.value().fd(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode); });
    if (raw >= 0) {
      fd = Fd(raw);
      anonymous_ = true;
      return ok_status();
    }
    // EOPNOTSUPP: a file system without O_TMPFILE; EISDIR: a kernel that predates it.
    if (errno != EOPNOTSUPP && errno != EISDIR) return sys_error(errno, "openat", shown_);
  }
#else
  (void)allow_anonymous;
#endif
  return create_named(mode);
}

Status OwnedTemp::create_named(mode_t mode) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    auto still = dir_.prove(root_, "openat", shown_);
    if (!still.ok()) return still.take_error();
    std::string name = random_temp_name(suffix_);
    int raw = retry_eintr([&] {
      return ::openat(still.value().fd(), name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
    });
    if (raw >= 0) {
      fd = Fd(raw);
      name_ = std::move(name);
      return ok_status();
    }
    if (errno != EEXIST) return sys_error(errno, "openat", shown_);
  }
  return sys_error(EEXIST, "openat", shown_);
}

Status OwnedTemp::publish(const std::string& leaf, bool create_only) {
#if defined(O_TMPFILE)
  if (anonymous_) {
    if (create_only) {
      auto linked = dir_.act(root_, "linkat", shown_, [&](int dirfd) -> Result<int> {
        return link_tmpfile(fd.get(), dirfd, leaf);
      });
      if (!linked.ok()) return linked.take_error();
      if (linked.value() != 0) return sys_error(linked.value(), "linkat", shown_);
      anonymous_ = false;
      published_ = true;
      return ok_status();
    }
    auto named = link_random_name();
    if (!named.ok()) return named;
  }
#endif
  return dir_.act(root_, "rename", shown_,
                  [&](int dirfd) { return rename_onto(dirfd, leaf, create_only); });
}

#if defined(O_TMPFILE)
Status OwnedTemp::link_random_name() {
  for (int attempt = 0;; ++attempt) {
    auto still = dir_.prove(root_, "linkat", shown_);
    if (!still.ok()) return still.take_error();
    std::string name = random_temp_name(suffix_);
    int err = link_tmpfile(fd.get(), still.value().fd(), name);
    if (err == 0) {
      name_ = std::move(name);
      anonymous_ = false;
      return ok_status();
    }
    if (err != EEXIST || attempt + 1 == kNameAttempts) return sys_error(err, "linkat", shown_);
  }
}
#endif

// The named temp moved onto `leaf` in the proven directory `dirfd`.
Status OwnedTemp::rename_onto(int dirfd, const std::string& leaf, bool create_only) {
  if (!create_only) {
    if (::renameat(dirfd, name_.c_str(), dirfd, leaf.c_str()) != 0) {
      return sys_error(errno, "rename", shown_);
    }
    published_ = true;
    return ok_status();
  }
  if (platform::rename_noreplace(dirfd, name_.c_str(), dirfd, leaf.c_str()) == 0) {
    published_ = true;
    return ok_status();
  }
  int err = errno;
  if (!no_create_only_rename(err)) return sys_error(err, "rename", shown_);
  // A link left the temporary's own name where it was: it goes with this object, proven.
  if (::linkat(dirfd, name_.c_str(), dirfd, leaf.c_str(), 0) != 0) {
    return sys_error(errno, "rename", shown_);
  }
  return ok_status();
}

void OwnedTemp::drop() {
  if (name_.empty() || published_) return;
  dir_.act(root_, "unlink", shown_, [&](int dirfd) {
    ::unlinkat(dirfd, name_.c_str(), 0);
    return ok_status();
  });
  name_.clear();
}

// splitmix64 over the clock (vDSO: no syscall), a counter and a stack address: names only need to
// be unlikely to collide, since O_EXCL makes a collision (or an attacker's squatting) a retry,
// never a hazard.
std::string random_temp_name(const char* suffix) {
  static std::atomic<std::uint64_t> counter{0};
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  int local = 0;
  std::uint64_t z =
      static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(ts.tv_sec) << 30) ^
      reinterpret_cast<std::uintptr_t>(&local) ^ (counter.fetch_add(1) * 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  z ^= z >> 31;
  char buf[48];
  std::snprintf(buf, sizeof buf, ".pinnedfs-%016llx%s", static_cast<unsigned long long>(z), suffix);
  return buf;
}

}  // namespace pinnedfs::ops
