// writeFile: Node's fs.writeFile semantics for each open flag, and nothing lost on the way.
//
// A w-family flag (w, w+, wx, wx+) replaces the whole file, so it is written beside the target and
// renamed over it (write_atomic.cc): a process killed mid-write, or a full disk, leaves the old
// content or the new, never a prefix. Appends (a, ax, a+, ax+) and r+ change the file where it is,
// as Node does, and so does a w-family write asked for in place (or one write_atomic.cc hands
// back).
//
// In place, O_TRUNC (and O_CREAT without O_EXCL) would act at open time, before a hard-linked or
// non-regular file could be refused. So: open beneath the root with no truncation, fstat the
// descriptor, refuse what the contract refuses, and only then ftruncate and write.
#include "write.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"

namespace pinnedfs::ops {

namespace {

struct FlagPlan {
  int open_flags;  // access mode | O_CREAT | O_EXCL | O_APPEND as Node opens for this flag
  bool whole;      // "w" flags: the file's whole content is replaced (in place: ftruncate(fd, 0)
                   // once the descriptor has passed the checks)
};

// Node's flag table (lib/internal/fs/utils.js stringToFlags), minus O_TRUNC.
FlagPlan plan_for(OpenFlag flag) {
  switch (flag) {
    case OpenFlag::R:
      break;
    case OpenFlag::RPlus:
      return {O_RDWR, false};
    case OpenFlag::W:
      return {O_WRONLY | O_CREAT, true};
    case OpenFlag::WX:
      return {O_WRONLY | O_CREAT | O_EXCL, true};
    case OpenFlag::WPlus:
      return {O_RDWR | O_CREAT, true};
    case OpenFlag::WXPlus:
      return {O_RDWR | O_CREAT | O_EXCL, true};
    case OpenFlag::A:
      return {O_WRONLY | O_CREAT | O_APPEND, false};
    case OpenFlag::AX:
      return {O_WRONLY | O_CREAT | O_APPEND | O_EXCL, false};
    case OpenFlag::APlus:
      return {O_RDWR | O_CREAT | O_APPEND, false};
    case OpenFlag::AXPlus:
      return {O_RDWR | O_CREAT | O_APPEND | O_EXCL, false};
  }
  return {-1, false};
}

bool opens_no_regular_file(int err) {
  // O_WRONLY|O_NONBLOCK on a FIFO with no reader is ENXIO (so is a socket, and a device with no
  // driver behind it); macOS answers EOPNOTSUPP for a socket. Either way the entry is not a file.
  if (err == ENXIO) return true;
#if defined(__APPLE__)
  if (err == EOPNOTSUPP) return true;
#endif
  return false;
}

Error not_regular(const char* syscall, const std::string& shown_path) {
  return refusal(Refusal::NotRegular, syscall, shown_path,
                 "not a regular file (FIFO, socket or device): refused, never written", EINVAL);
}

// A trailing '/' asks for a directory, which writeFile can never write. Resolve the path as a
// directory all the same, so a link there is refused as a link and a missing one is NotFound.
Result<Value> refuse_directory_path(const Root& root, const LexedPath& path,
                                    const std::string& shown) {
  auto fd = open_beneath(root, path, kDirHandleFlags);
  if (!fd.ok()) return fd.take_error();
  return sys_error(EISDIR, "open", shown);
}

// Most bytes one write(2) is given: 512 KiB, Node's own piece for fs.promises.writeFile. On a
// Linux 6.18 VM one write(2) of a whole 64 MiB payload into a new file took 220-300 ms where 512
// KiB pieces took 80-95 ms (same bytes, same file system, alternating runs). As with Node, an
// appending write of more than one piece is not one atomic append.
constexpr std::size_t kWritePiece = std::size_t{512} << 10;

}  // namespace

Status write_all(int fd, const std::string& data, const std::string& shown_path) {
  const char* p = data.data();
  std::size_t left = data.size();
  while (left > 0) {
    std::size_t piece = left < kWritePiece ? left : kWritePiece;
    ssize_t n = retry_eintr([&] { return ::write(fd, p, piece); });
    if (n < 0) return sys_error(errno, "write", shown_path);
    if (n == 0) {
      return refusal(Refusal::WriteZero, "write", shown_path,
                     "write accepted 0 of " + std::to_string(left) + " remaining bytes", EIO);
    }
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return ok_status();
}

Status sync_file(int fd, const std::string& shown) {
#if defined(__APPLE__)
  // fsync on macOS only reaches the drive's cache; F_FULLFSYNC flushes it (falls back where the
  // file system has no such command).
  if (::fcntl(fd, F_FULLFSYNC) == 0) return ok_status();
#endif
  int rc = retry_eintr([&] { return ::fsync(fd); });
  if (rc != 0) return sys_error(errno, "fsync", shown);
  return ok_status();
}

Result<Value> write_file(const Root& root, const Request& request) {
  const std::string& shown = request.path;
  FlagPlan plan = plan_for(request.flag);
  if (plan.open_flags < 0) {
    // Node would open read-only and fail EBADF at the first write; say so before touching anything.
    return bad_argument("flag 'r' opens read-only: writeFile needs a writing flag", shown);
  }
  if (request.atomic && request.in_place) {
    return bad_argument("a write cannot be both atomic and in place", shown);
  }
  if (request.atomic && !plan.whole) {
    return bad_argument("atomic writes replace the whole file: only the w, w+, wx and wx+ flags",
                        shown);
  }
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().must_be_dir) return refuse_directory_path(root, path.value(), shown);
  if (plan.whole && !request.in_place) {
    auto replaced = write_atomic(root, path.value(), request);
    if (!replaced.ok()) return replaced.take_error();
    if (replaced.value() == Replaced::Done) return Value(std::monostate{});
  }

  mode_t mode = request.has_mode ? static_cast<mode_t>(request.mode) : kDefaultFileMode;
  // O_NONBLOCK: a FIFO never holds us waiting for a reader; O_NOCTTY: a terminal never becomes
  // ours. open_beneath adds O_NOFOLLOW|O_CLOEXEC, so a trailing link is refused, not written.
  auto fd = open_beneath(root, path.value(), plan.open_flags | O_NONBLOCK | O_NOCTTY, mode);
  if (!fd.ok()) {
    Error& e = fd.error();
    if (e.refusal == Refusal::None && opens_no_regular_file(e.err))
      return not_regular("open", shown);
    return fd.take_error();
  }
  // With O_EXCL the open created a fresh regular file with one link: nothing to check, nothing to
  // truncate. Otherwise the descriptor is checked before any byte of the file changes.
  if (!(plan.open_flags & O_EXCL)) {
    struct stat st;
    auto got = fstat_fd(fd.value().get(), &st, shown);
    if (!got.ok()) return got.take_error();
    if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, "open", shown);
    auto hard = refuse_hard_link(st, shown, "open");
    if (!hard.ok()) return hard.take_error();
    if (!S_ISREG(st.st_mode)) return not_regular("open", shown);
    if (plan.whole && st.st_size != 0) {
      int rc = retry_eintr([&] { return ::ftruncate(fd.value().get(), 0); });
      if (rc != 0) return sys_error(errno, "ftruncate", shown);
    }
  }
  auto wrote = write_all(fd.value().get(), request.data, shown);
  if (!wrote.ok()) return wrote.take_error();
  if (request.durable) {
    auto synced = sync_file(fd.value().get(), shown);
    if (!synced.ok()) return synced.take_error();
  }
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
