// utimes and lchown: attribute changes on the object's own handle, as chmod and chown (attr.cc).
// utimes refuses a final link, as every pinnedfs op does; lchown acts on it, as fs.lchown and Go's
// Root.Lchown do (a link's owner is its own; nothing it points at is touched).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "fileops.h"

#ifndef AT_EMPTY_PATH
#define AT_EMPTY_PATH 0x1000
#endif

namespace pinnedfs::ops {

namespace {

// The object's handle, checked: a link only where `link_ok`, never a hard-linked non-directory
// (its other name may lie outside). It hands out a descriptor to change only by proving itself
// beneath the root (Held::act) right before the change.
Result<Held> attribute_handle(const Root& root, const Request& request, const char* syscall,
                              bool link_ok, struct stat* st) {
  const std::string& shown = request.path;
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  auto fd = link_ok ? open_beneath(root, path.value(), kObjectHandleFlags)
                    : attr::open_for_change(root, path.value());
  if (!fd.ok()) return fd.take_error();
  auto got = fstat_fd(fd.value().get(), st, shown);
  if (!got.ok()) return got.take_error();
  if (S_ISLNK(st->st_mode) && !link_ok) {
    return symlink_refusal(syscall, shown,
                           path.value().is_root() ? std::string(".") : path.value().leaf());
  }
  auto hard = refuse_hard_link(*st, shown, syscall);
  if (!hard.ok()) return hard.take_error();
  Held held = Held::from_lookup(root, fd.take(), path.value().joined());
  held.know_identity(identity_of(*st));
  return held;
}

// Seconds as fs.utimes takes them, converted as libuv converts them (uv__fs_to_timespec): whole
// seconds truncated, the fraction to microseconds, so a time set here reads back as Node's does.
struct timespec to_timespec(double seconds) {
  struct timespec ts;
  ts.tv_sec = static_cast<time_t>(seconds);
  long nsec = static_cast<long>((seconds - static_cast<double>(ts.tv_sec)) * 1e9);
  nsec -= nsec % 1000;
  if (nsec < 0) {
    nsec += 1000000000;
    ts.tv_sec -= 1;
  }
  ts.tv_nsec = nsec;
  return ts;
}

bool representable(double t) {
  // Within what a 64-bit time_t holds and a double still counts in whole seconds.
  return std::isfinite(t) && std::fabs(t) < 9.0e15;
}

}  // namespace

Result<Value> utimes(const Root& root, const Request& request) {
  if (!representable(request.atime) || !representable(request.mtime)) {
    return bad_argument("utimes times must be finite numbers of seconds", request.path);
  }
  struct stat st;
  auto held = attribute_handle(root, request, "utime", false, &st);
  if (!held.ok()) return held.take_error();
  struct timespec times[2] = {to_timespec(request.atime), to_timespec(request.mtime)};
  auto done = held.value().act(root, "utime", request.path, [&](int fd) -> Status {
#if defined(O_PATH)
    // An O_PATH handle: AT_EMPTY_PATH names the object itself; kernels before 5.8 answer EINVAL,
    // and then the /proc magic link (the same object, never a path looked up again) does it.
    int rc = retry_eintr([&] { return ::utimensat(fd, "", times, AT_EMPTY_PATH); });
    if (rc != 0 && errno == EINVAL && platform::proc_is_procfs()) {
      char proc[48];
      std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
      rc = retry_eintr([&] { return ::utimensat(AT_FDCWD, proc, times, 0); });
    }
#else
    int rc = retry_eintr([&] { return ::futimens(fd, times); });
#endif
    if (rc != 0) return sys_error(errno, "utime", request.path);
    return ok_status();
  });
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

Result<Value> lchown(const Root& root, const Request& request) {
#if defined(O_PATH)
  struct stat st;
  auto held = attribute_handle(root, request, "lchown", true, &st);
  if (!held.ok()) return held.take_error();
  // fchownat(AT_EMPTY_PATH) on an O_PATH handle of a link changes the link itself.
  auto done = held.value().act(root, "lchown", request.path, [&](int fd) {
    return attr::change_owner(fd, static_cast<uid_t>(request.uid), static_cast<gid_t>(request.gid),
                              request.path);
  });
  if (!done.ok()) return done.take_error();
#else
  // No handle of a link itself here: the name in its proven parent, never followed.
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) {
    auto fd = attr::open_for_change(root, path.value());
    if (!fd.ok()) return fd.take_error();
    auto done = attr::change_owner(fd.value().get(), static_cast<uid_t>(request.uid),
                                   static_cast<gid_t>(request.gid), request.path);
    if (!done.ok()) return done.take_error();
    return Value(std::monostate{});
  }
  // One proof, as held_parent's, before the look and the change: the change goes through its
  // descriptor, the look through look().
  auto parent = open_parent(root, path.value());
  if (!parent.ok()) return parent.take_error();
  Held& held = parent.value().dir;
  auto proven = held.prove(root, "lchown", request.path);
  if (!proven.ok()) return proven.take_error();
  struct stat st;
  const char* leaf = parent.value().leaf.c_str();
  if (::fstatat(held.look(), leaf, &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return sys_error(errno, "lchown", request.path);
  }
  auto hard = refuse_hard_link(st, request.path, "lchown");
  if (!hard.ok()) return hard.take_error();
  if (::fchownat(proven.value().fd(), leaf, static_cast<uid_t>(request.uid),
                 static_cast<gid_t>(request.gid), AT_SYMLINK_NOFOLLOW) != 0) {
    return sys_error(errno, "lchown", request.path);
  }
#endif
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
