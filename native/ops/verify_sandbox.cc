// verify: a started sandbox checked from outside before its command may start (see confine.h).
//
// The final validation held every source and recorded the directories on the way to each; the
// sandbox mounts those sources at paths, and a path can have changed in between (a concurrent
// child renames an unprotected parent of a protected repository: the read-only mount then lands
// on a decoy, or on a directory bubblewrap made for a destination that had gone, while the real
// repository sits writable under the other name). So, once the sandbox is set up and before the
// command runs, its own view is walked through /proc/PID/root, from the sandbox's root, one
// component at a time from the handle of the one before (O_PATH|O_NOFOLLOW: no link followed,
// and each component looked up in the very directory just checked), and each must be what the
// final validation saw: every directory on the way the dev:ino recorded (a bind shows the host's
// inode), every destination a mount root of its kind: a read-only bind of the dev:ino held, a
// read-only tmpfs of the mask's mode, a read-only empty file, a writable root the dev:ino held.
// Because a protected path is a mount point in every sandbox that protects it, no concurrent
// child can rename it; it can only move with a parent, and the parent checked is the one it was
// found in, so a destination found this way is the protected object at its own place.
//
// Readiness: the caller says when the sandbox is ready (a launcher's report), or names the
// descriptor bubblewrap blocks on (--block-fd): the check then waits until the sandbox's first
// process is blocked reading it (/proc/PID/syscall), woken by mount events (POLLPRI on
// /proc/PID/mountinfo) and a short poll, up to the time given.
#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "confine.h"

#if defined(__linux__)
#include <sys/statfs.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <time.h>
#endif

namespace pinnedfs::confine {

#if defined(__linux__)

namespace {

constexpr long kTmpfsMagic = 0x01021994;
constexpr int kStepFlags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
#ifndef STATX_ATTR_MOUNT_ROOT
#define STATX_ATTR_MOUNT_ROOT 0x00002000
#endif

VerifyResult fail(bool moved, std::string why) {
  VerifyResult r;
  r.moved = moved;
  r.why = std::move(why);
  return r;
}

std::string joined(const std::string& a, const std::string& b) {
  if (b.empty()) return a;
  return a == "/" ? "/" + b : a + "/" + b;
}

std::vector<std::string> components(const std::string& path) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < path.size()) {
    std::size_t slash = path.find('/', at);
    if (slash == std::string::npos) slash = path.size();
    if (slash > at) out.push_back(path.substr(at, slash - at));
    at = slash + 1;
  }
  return out;
}

// Whether the process is blocked in read(fd): 1 yes, 0 not (yet), -1 cannot tell.
int blocked_reading(int pid, int fd) {
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%d/syscall", pid);
  int f = retry_eintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  if (f < 0) return -1;
  Fd owned(f);
  char buf[256];
  ssize_t n = retry_eintr([&] { return ::read(f, buf, sizeof buf - 1); });
  if (n <= 0) return -1;
  buf[n] = '\0';
  long nr = -2;
  unsigned long arg = 0;
  if (std::sscanf(buf, "%ld 0x%lx", &nr, &arg) != 2) return 0;  // "running"
  return nr == SYS_read && arg == static_cast<unsigned long>(fd) ? 1 : 0;
}

std::uint64_t now_ms() {
  struct timespec ts;
  ::clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000 +
         static_cast<std::uint64_t>(ts.tv_nsec) / 1000000;
}

// Whether the sandbox's first process, or one of its children, is blocked in read(fd): bubblewrap
// itself blocks on --block-fd; a launcher it executed (a child of the sandbox's pid 1) blocks on
// its status descriptor. 1 yes, 0 not (yet), -1 cannot tell.
int sandbox_blocked(int pid, int fd) {
  int self = blocked_reading(pid, fd);
  if (self != 0) return self;
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/task/%d/children", pid, pid);
  int f = retry_eintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  if (f < 0) return 0;
  Fd owned(f);
  char buf[512];
  ssize_t n = retry_eintr([&] { return ::read(f, buf, sizeof buf - 1); });
  if (n <= 0) return 0;
  buf[n] = '\0';
  for (char* p = buf; *p != '\0';) {
    char* end = nullptr;
    long child = std::strtol(p, &end, 10);
    if (end == p) break;
    if (child > 0 && blocked_reading(static_cast<int>(child), fd) == 1) return 1;
    p = end;
  }
  return 0;
}

// Waits until the sandbox's first process blocks on `fd`; an empty answer means it did.
std::string wait_blocked(int pid, int fd, std::uint64_t start, std::uint32_t wait_ms) {
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%d/mountinfo", pid);
  int m = retry_eintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  Fd mounts(m);
  std::uint64_t deadline = now_ms() + wait_ms;
  for (;;) {
    int blocked = sandbox_blocked(pid, fd);
    if (blocked == 1) return "";
    if (process_start(pid) != start) return "the sandbox exited while it was being set up";
    if (blocked < 0)
      return "the sandbox's state cannot be read (/proc/" + std::to_string(pid) + "/syscall)";
    if (now_ms() >= deadline)
      return "the sandbox did not finish its setup in " + std::to_string(wait_ms) + " ms";
    struct pollfd p = {m, POLLPRI, 0};
    if (m >= 0)
      (void)::poll(&p, 1, 5);
    else {
      struct timespec ms = {0, 2000000};
      ::nanosleep(&ms, nullptr);
    }
  }
}

struct Seen {
  struct stat st;
  bool mount_root = false;
  bool read_only = false;
  long fs_type = 0;
};

bool look(int fd, int parent, Seen* out) {
  if (::fstat(fd, &out->st) != 0) return false;
  struct statx sx;
  if (::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_INO, &sx) == 0 &&
      (sx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT)) {
    out->mount_root = (sx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
  } else {
    auto a = platform::mount_of(fd);
    auto b = platform::mount_of(parent);
    out->mount_root = a.ok() && b.ok() && !a.value().same_as(b.value());
  }
  struct statvfs vfs;
  out->read_only = ::fstatvfs(fd, &vfs) == 0 && (vfs.f_flag & ST_RDONLY) != 0;
  struct statfs fs;
  out->fs_type = ::fstatfs(fd, &fs) == 0 ? static_cast<long>(fs.f_type) : 0;
  return true;
}

// Why `seen` at `shown` is not what the layer needs, or "" when it is.
std::string mismatch(const ExpectedLayer& layer, const Seen& seen, const std::string& shown) {
  auto is = [&](const Identity& id) { return identity_of(seen.st) == id; };
  std::string at = "'" + shown + "' in the sandbox ";
  if (!seen.mount_root) return at + "is not the mount the plan put there";
  switch (layer.kind) {
    case LayerKind::WritableBind:
      if (!is(layer.identity))
        return at + "is " + identity_of(seen.st).str() + ", not the writable root held (" +
               layer.identity.str() + ")";
      return "";
    case LayerKind::ReadOnlyBind:
      if (!is(layer.identity))
        return at + "is " + identity_of(seen.st).str() + ", not the protected path held (" +
               layer.identity.str() + ")";
      if (!seen.read_only) return at + "is not read-only";
      return "";
    case LayerKind::MaskDirectory:
      if (!S_ISDIR(seen.st.st_mode) || seen.fs_type != kTmpfsMagic)
        return at + "is not the empty tmpfs that masks it";
      if (!seen.read_only || (seen.st.st_mode & 07777) != layer.perms)
        return at + "is not the read-only mask of mode " + std::to_string(layer.perms);
      return "";
    case LayerKind::MaskFile:
      if (!S_ISREG(seen.st.st_mode) || seen.st.st_size != 0 || (seen.st.st_mode & 07777) != 0 ||
          !seen.read_only) {
        return at + "is not the empty read-only file that masks it";
      }
      return "";
  }
  return at + "has an unknown kind";
}

// `host`: the host's view instead of the sandbox's (after a sandbox that died setting itself up:
// was it because a destination had moved?): the same walk, comparing identities only.
VerifyResult check_layer(const VerifyRequest& r, const std::vector<Fd>& anchors,
                         const ExpectedLayer& layer, bool host) {
  const std::string& base = r.anchors[layer.anchor].first;
  std::vector<std::string> parts = components(layer.path);
  int from = anchors[layer.anchor].get();
  Fd cur;
  Fd parent;
  std::string shown = base;
  for (std::size_t i = 0; i + 1 < parts.size(); ++i) {
    shown = joined(shown, parts[i]);
    int fd =
        retry_eintr([&] { return ::openat(from, parts[i].c_str(), kStepFlags | O_DIRECTORY); });
    if (fd < 0) return fail(true, "'" + shown + "' is missing in the sandbox, or not a directory");
    parent = std::move(cur);
    cur = Fd(fd);
    Seen seen;
    if (!look(fd, from, &seen))
      return fail(false, "'" + shown + "' cannot be examined in the sandbox");
    const ExpectedStep& step = layer.steps[i];
    if (step.expect == Expect::Identity && identity_of(seen.st) != step.identity) {
      return fail(true, "'" + shown + "' in the sandbox is " + identity_of(seen.st).str() +
                            ", not the directory validated (" + step.identity.str() +
                            "): it moved");
    }
    if (!host && step.expect == Expect::Tmpfs &&
        (seen.fs_type != kTmpfsMagic || !seen.mount_root)) {
      return fail(true, "'" + shown + "' in the sandbox is not the mask the plan put there");
    }
    from = fd;
  }
  Fd leaf;
  int at = from;
  int above = from;
  if (!parts.empty()) {
    shown = joined(shown, parts.back());
    int fd = retry_eintr([&] { return ::openat(from, parts.back().c_str(), kStepFlags); });
    if (fd < 0) return fail(true, "'" + shown + "' is missing in the sandbox");
    leaf = Fd(fd);
    at = fd;
  } else {
    int up = retry_eintr([&] { return ::openat(from, "..", kStepFlags | O_DIRECTORY); });
    parent = Fd(up);
    above = up;
  }
  Seen seen;
  if (!look(at, above, &seen))
    return fail(false, "'" + shown + "' cannot be examined in the sandbox");
  std::string why;
  if (!host) {
    why = mismatch(layer, seen, shown);
  } else if (layer.identity != Identity{} && identity_of(seen.st) != layer.identity) {
    why = "'" + shown + "' is " + identity_of(seen.st).str() + " now, not what was validated (" +
          layer.identity.str() + ")";
  }
  if (!why.empty()) return fail(true, why);
  VerifyResult ok;
  ok.ok = true;
  return ok;
}

// Walks every layer from `root` (the sandbox's, or the host's "/").
VerifyResult check_all(const VerifyRequest& r, int root, bool host) {
  std::vector<Fd> anchors;
  anchors.reserve(r.anchors.size());
  for (const auto& [abs, id] : r.anchors) {
    int from = root;
    Fd cur;
    std::string shown;
    for (const std::string& part : components(abs)) {
      shown += "/" + part;
      int fd = retry_eintr([&] { return ::openat(from, part.c_str(), kStepFlags | O_DIRECTORY); });
      if (fd < 0) return fail(true, "'" + shown + "' is missing");
      cur = Fd(fd);
      from = fd;
    }
    if (!cur.valid()) cur = Fd(::dup(root));
    struct stat st;
    if (::fstat(cur.get(), &st) != 0 || identity_of(st) != id) {
      return fail(true, "'" + abs + "' is not the directory prepared (" + id.str() + ")");
    }
    anchors.push_back(std::move(cur));
  }
  for (const ExpectedLayer& l : r.layers) {
    VerifyResult one = check_layer(r, anchors, l, host);
    if (!one.ok) return one;
  }
  VerifyResult ok;
  ok.ok = true;
  return ok;
}

// A sandbox that died while setting itself up: moved (worth a fresh try) when a destination is
// no longer what the final validation saw on the host.
VerifyResult died(const VerifyRequest& r, const std::string& why) {
  int slash = retry_eintr([&] { return ::open("/", O_PATH | O_DIRECTORY | O_CLOEXEC); });
  if (slash < 0) {
    VerifyResult out = fail(false, why);
    out.died = true;
    return out;
  }
  Fd owned(slash);
  VerifyResult host = check_all(r, slash, true);
  VerifyResult out = host.ok ? fail(false, why) : fail(true, why + ", and " + host.why);
  out.died = true;
  return out;
}

}  // namespace

Result<VerifyResult> verify_sandbox(const VerifyRequest& r) {
  if (r.pid <= 0) return bad_argument("verify needs the sandbox's pid");
  for (const auto& [path, id] : r.anchors) {
    if (path.empty() || path[0] != '/' || path.find('\0') != std::string::npos) {
      return bad_argument("verify's anchors are absolute paths", path);
    }
  }
  for (const ExpectedLayer& l : r.layers) {
    if (l.anchor >= r.anchors.size())
      return bad_argument("a layer names an anchor verify was not given", l.path);
    std::size_t n = components(l.path).size();
    if (l.steps.size() != (n == 0 ? 0 : n - 1))
      return bad_argument("a layer's steps do not match its path", l.path);
    if (l.path.find('\0') != std::string::npos)
      return bad_argument("a layer's path contains a NUL byte");
  }
  std::uint64_t start = process_start(r.pid);
  if (start == 0) return died(r, "the sandbox is gone");
  auto recorded = record_line(r.record, record_sandbox(r.pid, start));
  if (!recorded.ok()) return recorded.take_error();
  if (r.block_fd >= 0) {
    std::string why = wait_blocked(r.pid, r.block_fd, start, r.wait_ms);
    if (!why.empty()) return process_start(r.pid) == start ? fail(false, why) : died(r, why);
  }
  char path[48];
  std::snprintf(path, sizeof path, "/proc/%d/root", r.pid);
  int root = retry_eintr([&] { return ::open(path, O_PATH | O_DIRECTORY | O_CLOEXEC); });
  if (root < 0)
    return fail(false, std::string("the sandbox's root cannot be opened: ") + std::strerror(errno));
  Fd sandbox(root);
  VerifyResult checked = check_all(r, root, false);
  // The sandbox must still be the one recorded: a pid reused meanwhile would be checked in vain.
  if (process_start(r.pid) != start)
    return died(r, "the sandbox exited while it was being checked");
  if (!checked.ok) checked.why += " (in the sandbox)";
  return checked;
}

#else

Result<VerifyResult> verify_sandbox(const VerifyRequest&) {
  return sys_error(ENOSYS, "verify");  // there is no bubblewrap sandbox to check on this platform
}

#endif

}  // namespace pinnedfs::confine
