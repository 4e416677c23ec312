// exists, stat, readFile.
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif

#include <algorithm>
#include <cmath>

#include "../core/alloc.h"
#include "../core/budget.h"
#include "../core/cancel.h"
#include "../core/eintr.h"
#include "../core/limits.h"
#include "../platform/platform.h"

#include "ops.h"

namespace pinnedfs::ops {

namespace {
// The most one read(2) of readFile asks for (see the loop below).
constexpr std::size_t kReadChunk = std::size_t{8} << 20;
}  // namespace

namespace {
FileType type_of(mode_t mode) {
  if (S_ISREG(mode)) return FileType::File;
  if (S_ISDIR(mode)) return FileType::Directory;
  if (S_ISLNK(mode)) return FileType::SymbolicLink;
  if (S_ISBLK(mode)) return FileType::BlockDevice;
  if (S_ISCHR(mode)) return FileType::CharacterDevice;
  if (S_ISFIFO(mode)) return FileType::FIFO;
  if (S_ISSOCK(mode)) return FileType::Socket;
  return FileType::Unknown;
}

// Milliseconds since the epoch. JavaScript's Date truncates to whole milliseconds, as Node's bigint
// stats do (nanoseconds / 10^6), so the whole millisecond must survive the conversion: near 2^40 ms
// a double holds only ~1/4096 ms, and a fraction above .99988 would round up into the next
// millisecond.
double ms(const struct timespec& ts) {
  long long whole = static_cast<long long>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
  double v = static_cast<double>(whole) + static_cast<double>(ts.tv_nsec % 1000000) / 1e6;
  double next = static_cast<double>(whole + 1);
  // Before 1970 truncation goes toward zero, so rounding up is what truncation wants there.
  if (whole >= 0 && v >= next) v = std::nextafter(next, 0.0);
  return v;
}

// Nanoseconds since the epoch, exact (int64 holds them until the year 2262).
std::int64_t ns(const struct timespec& ts) {
  return static_cast<std::int64_t>(ts.tv_sec) * 1000000000 + static_cast<std::int64_t>(ts.tv_nsec);
}

// Each time as the millisecond double Node's Stats carry and the whole nanoseconds BigIntStats do.
void put_times(StatInfo& info, const timespec& a, const timespec& m, const timespec& c) {
  info.atime_ms = ms(a);
  info.mtime_ms = ms(m);
  info.ctime_ms = ms(c);
  info.atime_ns = ns(a);
  info.mtime_ns = ns(m);
  info.ctime_ns = ns(c);
}
}  // namespace

StatInfo stat_info(const struct stat& st) {
  StatInfo info;
  info.type = type_of(st.st_mode);
  info.dev = static_cast<std::uint64_t>(st.st_dev);
  info.ino = static_cast<std::uint64_t>(st.st_ino);
  info.nlink = static_cast<std::uint64_t>(st.st_nlink);
  info.rdev = static_cast<std::uint64_t>(st.st_rdev);
  info.size = static_cast<std::uint64_t>(st.st_size);
  info.blocks = static_cast<std::uint64_t>(st.st_blocks);
  info.blksize = static_cast<std::uint64_t>(st.st_blksize);
  info.mode = st.st_mode;
  info.uid = st.st_uid;
  info.gid = st.st_gid;
#if defined(__APPLE__)
  put_times(info, st.st_atimespec, st.st_mtimespec, st.st_ctimespec);
  info.birthtime_ms = ms(st.st_birthtimespec);
  info.birthtime_ns = ns(st.st_birthtimespec);
#else
  put_times(info, st.st_atim, st.st_mtim, st.st_ctim);
#endif
  return info;
}

Status refuse_hard_link(const struct stat& st, const std::string& shown_path, const char* syscall) {
  if (!S_ISDIR(st.st_mode) && st.st_nlink > 1) {
    return refusal(Refusal::HardLink, syscall, shown_path,
                   "file is hard-linked (" + std::to_string(st.st_nlink) +
                       " links): another name may lie outside the root",
                   EPERM);
  }
  return ok_status();
}

#if defined(__linux__) && defined(STATX_BTIME)
namespace {
timespec timespec_of(const struct statx_timestamp& t) {
  return timespec{static_cast<time_t>(t.tv_sec), static_cast<long>(t.tv_nsec)};
}

// A statx answer as the struct stat the rest reads, and its birth time where the file system keeps
// one (the answer's mask says).
void from_statx(const struct statx& sx, struct stat& st, double& birthtime_ms,
                std::int64_t& birthtime_ns) {
  st = {};
  st.st_mode = sx.stx_mode;
  st.st_nlink = sx.stx_nlink;
  st.st_uid = sx.stx_uid;
  st.st_gid = sx.stx_gid;
  // makedev from major/minor: the encoding fstat's st_dev uses, and libuv's, so identities match
  // fs.stat({ bigint: true }).
  st.st_dev = makedev(sx.stx_dev_major, sx.stx_dev_minor);
  st.st_rdev = makedev(sx.stx_rdev_major, sx.stx_rdev_minor);
  st.st_ino = sx.stx_ino;
  st.st_size = static_cast<off_t>(sx.stx_size);
  st.st_blocks = static_cast<blkcnt_t>(sx.stx_blocks);
  st.st_blksize = static_cast<blksize_t>(sx.stx_blksize);
  st.st_atim = timespec_of(sx.stx_atime);
  st.st_mtim = timespec_of(sx.stx_mtime);
  st.st_ctim = timespec_of(sx.stx_ctime);
  if (sx.stx_mask & STATX_BTIME) {
    const timespec birth{static_cast<time_t>(sx.stx_btime.tv_sec),
                         static_cast<long>(sx.stx_btime.tv_nsec)};
    birthtime_ms = ms(birth);
    birthtime_ns = ns(birth);
  }
}

// statx(fd, "", AT_EMPTY_PATH) on the descriptor we opened: the same check-and-use handle as fstat,
// plus the birth time fstat cannot give. Answers false (and leaves `st` unset) where statx itself
// is missing (kernel < 4.11 ENOSYS; a seccomp profile that predates it answers ENOSYS or EPERM), so
// the caller falls back to fstat; any other failure is the answer. `birthtime_ms` stays -1 where
// the file system records no birth time.
Result<bool> statx_fd(int fd, const std::string& shown_path, struct stat& st, double& birthtime_ms,
                      std::int64_t& birthtime_ns) {
  struct statx sx;
  int rc = retry_eintr([&] {
    return ::statx(fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, STATX_BASIC_STATS | STATX_BTIME,
                   &sx);
  });
  if (rc != 0) {
    if (errno == ENOSYS || errno == EPERM) return false;
    return sys_error(errno, "statx", shown_path);
  }
  from_statx(sx, st, birthtime_ms, birthtime_ns);
  return true;
}

#if defined(STATX_MNT_ID)
// The one-system-call stat of a name directly in the root: one statx in the root's own descriptor
// that follows no link (a link is described, as the handle path describes it) and triggers no
// automount. Looking up one name in a pinned directory can climb nowhere and cross nothing but a
// mount, which the answer's mount id shows. A name on another mount, any failure, or a kernel that
// gives no mount id answers false: the general path then gives the answer, or the refusal, with
// its own wording.
bool stat_in_root(const Root& root, const LexedPath& path, const std::string& shown,
                  Result<Value>* answer) {
  if (path.parts.size() != 1 || path.must_be_dir || path.has_dotdot || !root.mount().has_id)
    return false;
  struct statx sx;
  int rc = retry_eintr([&] {
    return ::statx(root.fd(), path.leaf().c_str(), AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
                   STATX_BASIC_STATS | STATX_BTIME | STATX_MNT_ID, &sx);
  });
  if (rc != 0 || !(sx.stx_mask & STATX_MNT_ID) || sx.stx_mnt_id != root.mount().id) return false;
  struct stat st;
  double birthtime_ms = -1;
  std::int64_t birthtime_ns = 0;
  from_statx(sx, st, birthtime_ms, birthtime_ns);
  auto hard = refuse_hard_link(st, shown, "stat");
  if (!hard.ok()) {
    *answer = hard.take_error();
    return true;
  }
  StatInfo info = stat_info(st);
  info.birthtime_ms = birthtime_ms;
  info.birthtime_ns = birthtime_ns;
  *answer = Value(info);
  return true;
}

#endif
}  // namespace
#endif

Result<Value> exists(const Root& root, const Request& request) {
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
#if defined(__linux__)
  // One name directly in the root: one look answers, as for stat (look_in_root says why).
  struct stat st;
  RootLook look = look_in_root(root, path.value(), &st);
  if (look != RootLook::Unsure) return Value(look == RootLook::Found);
#endif
  // An O_PATH|O_NOFOLLOW open finds a trailing link as itself: a link exists (contract), while a
  // link met on the way is still refused by the resolution.
  auto fd = open_beneath(root, path.value(), kObjectHandleFlags);
  if (fd.ok()) return Value(true);
  const Error& e = fd.error();
  // Only ENOENT means "does not exist": Effect's exists fails on anything else, so "file/x"
  // (ENOTDIR) is a BadResource error here too, not false.
  if (e.refusal == Refusal::None && e.err == ENOENT) return Value(false);
  return fd.take_error();
}

Result<Value> stat(const Root& root, const Request& request) {
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
#if defined(__linux__) && defined(STATX_MNT_ID)
  Result<Value> quick = Value(std::monostate{});
  if (stat_in_root(root, path.value(), request.path, &quick)) return quick;
#endif
  auto fd = open_beneath(root, path.value(), kObjectHandleFlags);
  if (!fd.ok()) return fd.take_error();
  struct stat st;
  double birthtime_ms = -1;
  std::int64_t birthtime_ns = 0;
  bool have = false;
#if defined(__linux__) && defined(STATX_BTIME)
  auto got = statx_fd(fd.value().get(), request.path, st, birthtime_ms, birthtime_ns);
  if (!got.ok()) return got.take_error();
  have = got.value();
#endif
  // macOS (fstat carries st_birthtimespec, which stat_info reads) and Linux without statx.
  if (!have && ::fstat(fd.value().get(), &st) != 0) return sys_error(errno, "fstat", request.path);
  auto hard = refuse_hard_link(st, request.path, "stat");
  if (!hard.ok()) return hard.take_error();
  StatInfo info = stat_info(st);
  if (have) {
    info.birthtime_ms = birthtime_ms;
    info.birthtime_ns = birthtime_ns;
  }
  return Value(info);
}

Result<Value> read_file(const Root& root, const Request& request) {
  return read_file_into(root, request, std::string());
}

Result<Value> read_file_into(const Root& root, const Request& request, std::string&& buffer) {
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  // O_NONBLOCK: a FIFO is opened without waiting for a writer, then refused below; it is never
  // read. O_NOCTTY: a terminal device never becomes our controlling terminal.
  auto fd = open_beneath(root, path.value(), O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) return fd.take_error();
  struct stat st;
  if (::fstat(fd.value().get(), &st) != 0) return sys_error(errno, "fstat", request.path);
  if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, "read", request.path);
  if (!S_ISREG(st.st_mode)) {
    return refusal(Refusal::NotRegular, "open", request.path,
                   "not a regular file (FIFO, socket or device): refused, never read", EINVAL);
  }
  auto hard = refuse_hard_link(st, request.path, "open");
  if (!hard.ok()) return hard.take_error();
  // The limit is the caller's, capped at the ceiling no caller can lift: 0 (none given) is the
  // ceiling.
  std::uint64_t limit = request.max_bytes == 0 || request.max_bytes > kMaxContentBytes
                            ? kMaxContentBytes
                            : request.max_bytes;
  std::uint64_t size = static_cast<std::uint64_t>(st.st_size);
  if (size > limit) {
    return refusal(Refusal::TooLarge, "read", request.path,
                   "file of " + std::to_string(size) + " bytes exceeds the read limit of " +
                       std::to_string(limit) + " bytes",
                   EFBIG);
  }
  Bytes out;
  out.data = std::move(buffer);
  out.data.clear();
  // fstat's size only sizes the first allocation, and only below the limit: a file that grows while
  // it is read is read on, in steps bounded by limit + 1, and refused once a byte past the limit
  // arrives. size + 1 so that a file that did not grow is read in one call and the next sees EOF.
  const std::size_t most = static_cast<std::size_t>(limit) + 1;
  // A large content is first-touched page by page as it is read; huge pages make that one fault
  // per 2 MiB (advise_large_buffer, core/alloc.h). Measured on this project's Linux VM, a 256 MiB
  // file: 2,253 ms without, 536 ms with (node:fs/promises 1,335 ms). Each buffer is a share of the
  // process's content budget (core/budget.h) and a checked allocation (core/alloc.h) before it is
  // made: many reads at once, each within its limit, are typed ENOMEM errors when memory runs out,
  // never an abort.
  auto room = [&](std::size_t bytes) -> Status {
    if (!out.charge.hold(bytes)) return over_content_budget(bytes, "read", request.path);
    if (!try_reserve(out.data, bytes)) return out_of_memory(bytes, "read", request.path);
    return ok_status();
  };
  const std::size_t first = static_cast<std::size_t>(size) + 1;
  auto made = room(first);
  if (!made.ok()) return made.take_error();
  if (size >= kHugeBuffer) advise_large_buffer(&out.data[0], first);
  out.data.resize(first);  // within the capacity reserved: no allocation
  std::size_t used = 0;
  for (;;) {
    if (used == out.data.size()) {
      if (used >= most) {
        return refusal(
            Refusal::TooLarge, "read", request.path,
            "file grew past the read limit of " + std::to_string(limit) + " bytes while being read",
            EFBIG);
      }
      std::size_t bigger = std::min(out.data.size() * 2, most);
      auto grown = room(bigger);
      if (!grown.ok()) return grown.take_error();
      out.data.resize(bigger);
    }
    // One chunk per read(2), so that a caller's abort (core/cancel.h) stops a large read between
    // two chunks rather than after the whole file; 8 MiB keeps the syscalls a rounding error.
    if (used > 0 && cancelled()) return cancelled_error("read", request.path);
    const std::size_t want = std::min(out.data.size() - used, kReadChunk);
    ssize_t n = retry_eintr([&] { return ::read(fd.value().get(), &out.data[used], want); });
    if (n < 0) return sys_error(errno, "read", request.path);
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
    // A short read that reached the size fstat reported is the end of a regular file: skip the
    // extra read(2) that would only return 0.
    if (used >= size && used < out.data.size()) break;
  }
  out.data.resize(used);
  return Value(std::move(out));
}

}  // namespace pinnedfs::ops
