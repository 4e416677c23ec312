// open (ops/open.h). The checks are the in-place write's (write.cc) and the read's (read.cc): the
// descriptor that is checked is the one handed out, so nothing can be swapped in between.
#include "open.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/beneath.h"
#include "../core/eintr.h"

namespace pinnedfs::ops {

#ifdef PINNEDFS_TEST_HOOKS
void (*open_truncate_test_hook)() = nullptr;
#endif

namespace {

struct OpenPlan {
  int flags = -1;         // access mode | O_CREAT | O_EXCL | O_APPEND (never O_TRUNC)
  bool truncate = false;  // "w": emptied once the descriptor has passed the checks
};

OpenPlan plan_for(OpenFlag flag) {
  switch (flag) {
    case OpenFlag::R:
      return {O_RDONLY, false};
    case OpenFlag::RPlus:
      return {O_RDWR, false};
    case OpenFlag::W:
      return {O_WRONLY | O_CREAT, true};
    case OpenFlag::WX:
      return {O_WRONLY | O_CREAT | O_EXCL, false};
    case OpenFlag::A:
      return {O_WRONLY | O_CREAT | O_APPEND, false};
    case OpenFlag::AX:
      return {O_WRONLY | O_CREAT | O_APPEND | O_EXCL, false};
    default:
      break;
  }
  return {};
}

Error not_regular(const std::string& shown) {
  return refusal(Refusal::NotRegular, "open", shown,
                 "not a regular file (FIFO, socket or device): refused, never opened for I/O",
                 EINVAL);
}

// "w" empties the file: the checks the open made are made again right before the ftruncate, as
// every other act is proven right before it, so that the time the checks above took is no window:
// the file still beneath the root by its path (its directory was not moved out, the name not
// swapped), then still one link (the last look, one syscall before the act). What remains is the
// span of that one fstat (docs/pinnedroot.md).
Status empty_checked(const Root& root, int fd, const struct stat& st, const std::string& rel,
                     const std::string& shown) {
  Identity id = identity_of(st);
  auto beneath = prove_beneath(root, fd, &id, rel, "ftruncate", shown);
  if (!beneath.ok()) return beneath;
  struct stat now;
  auto got = fstat_fd(fd, &now, shown);
  if (!got.ok()) return got;
  auto hard = refuse_hard_link(now, shown, "open");
  if (!hard.ok()) return hard;
  int rc = retry_eintr([&] { return ::ftruncate(fd, 0); });
  if (rc != 0) return sys_error(errno, "ftruncate", shown);
  return ok_status();
}

}  // namespace

Result<Fd> open_file(const Root& root, const Request& request) {
  const std::string& shown = request.path;
  OpenPlan plan = plan_for(request.flag);
  if (plan.flags < 0) {
    return bad_argument("open takes the flags r, r+, w, wx, a and ax", shown);
  }
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().must_be_dir) {
    // A trailing '/' names a directory: resolved as one, so a link there is still a link.
    auto dir = open_beneath(root, path.value(), kDirHandleFlags);
    if (!dir.ok()) return dir.take_error();
    return sys_error(EISDIR, "open", shown);
  }
  mode_t mode = request.has_mode ? static_cast<mode_t>(request.mode) : 0666;
  // O_NONBLOCK: a FIFO is opened without waiting for the other end, then refused below. O_NOCTTY:
  // a terminal never becomes our controlling terminal. open_beneath adds O_NOFOLLOW|O_CLOEXEC.
  auto fd = open_beneath(root, path.value(), plan.flags | O_NONBLOCK | O_NOCTTY, mode);
  if (!fd.ok()) {
    Error& e = fd.error();
    // O_WRONLY|O_NONBLOCK on a FIFO with no reader, a socket, a device with no driver: ENXIO.
    if (e.refusal == Refusal::None && e.err == ENXIO) return not_regular(shown);
#if defined(__APPLE__)
    if (e.refusal == Refusal::None && e.err == EOPNOTSUPP) return not_regular(shown);
#endif
    return fd.take_error();
  }
  struct stat st;
  auto got = fstat_fd(fd.value().get(), &st, shown);
  if (!got.ok()) return got.take_error();
  if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, "open", shown);
  if (!S_ISREG(st.st_mode)) return not_regular(shown);
  auto hard = refuse_hard_link(st, shown, "open");
  if (!hard.ok()) return hard.take_error();
  // A regular file ignores O_NONBLOCK, but the caller's descriptor should say what it is. One
  // F_SETFL, no F_GETFL: the status flags it sets are the ones this open asked for (O_APPEND or
  // none); access mode and creation flags are not status flags and are left as they are.
  if (::fcntl(fd.value().get(), F_SETFL, plan.flags & O_APPEND) != 0) {
    return sys_error(errno, "fcntl", shown);
  }
  if (plan.truncate && st.st_size != 0) {
#ifdef PINNEDFS_TEST_HOOKS
    if (open_truncate_test_hook != nullptr) open_truncate_test_hook();
#endif
    auto emptied = empty_checked(root, fd.value().get(), st, path.value().joined(), shown);
    if (!emptied.ok()) return emptied.take_error();
  }
  return fd.take();
}

// The row's handler, for execute() and batches: a descriptor in a Value could be dropped by a batch
// or an undelivered answer, so open runs only through its own binding call (open.h).
Result<Value> open_unbatched(const Root&, const Request& request) {
  return bad_argument("open answers a descriptor: it is not an execute() or batch operation",
                      request.path);
}

}  // namespace pinnedfs::ops
