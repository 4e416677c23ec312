// copyFile, and the one file copy cp uses for every regular file it meets.
//
// The source is opened as a read is (no link followed anywhere, O_NONBLOCK so a FIFO never holds
// the worker, then refused with anything else that is not a regular single-link file on the root's
// mount). The destination is never written in place: the data goes into a temporary in the
// destination's directory (anonymous O_TMPFILE where the file system has it, else a random name
// made with O_EXCL), and one linkat or renameat publishes it. A process killed mid-copy, or a full
// disk, leaves the old destination (or none) and, with O_TMPFILE, nothing else.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/fs.h>  // FICLONE
#include <sys/ioctl.h>
#endif

#include <vector>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "fileops.h"
#include "temp.h"

namespace pinnedfs::ops {

namespace {

// The fallback loop's buffer: constant, whatever the file's size.
constexpr std::size_t kCopyBuffer = std::size_t{256} << 10;
#if defined(__linux__)
// One copy_file_range call's most: the kernel copies in its own chunks below this.
constexpr std::size_t kRangeChunk = std::size_t{1} << 30;
#endif

// From `from` in `src`, by pread: the source's own offset is never used, so a retry that copies
// the same descriptor again needs no rewind.
Status copy_by_loop(int src, int dst, std::uint64_t from, std::uint64_t left,
                    const std::string& shown) {
  std::vector<char> buf(kCopyBuffer);
  while (left > 0) {
    std::size_t want = left < buf.size() ? static_cast<std::size_t>(left) : buf.size();
    ssize_t n =
        retry_eintr([&] { return ::pread(src, buf.data(), want, static_cast<off_t>(from)); });
    if (n < 0) return sys_error(errno, "read", shown);
    if (n == 0) break;  // the source shrank: what it held is what is copied
    std::size_t done = 0;
    while (done < static_cast<std::size_t>(n)) {
      ssize_t w = retry_eintr([&] { return ::write(dst, buf.data() + done, n - done); });
      if (w < 0) return sys_error(errno, "write", shown);
      if (w == 0) {
        return refusal(Refusal::WriteZero, "write", shown, "write accepted no byte", EIO);
      }
      done += static_cast<std::size_t>(w);
    }
    left -= static_cast<std::uint64_t>(n);
    from += static_cast<std::uint64_t>(n);
  }
  return ok_status();
}

// The data: a reflink when asked for (FICLONE: tried; FICLONE_FORCE: required), else
// copy_file_range, else the loop. As many bytes as fstat saw (libuv's copyfile does the same): a
// source that grows while it is copied cannot hold the worker.
Status copy_data(int src, int dst, std::uint64_t size, std::uint32_t mode,
                 const std::string& shown) {
  if (mode & (kCopyFiclone | kCopyFicloneForce)) {
    int err = ENOTSUP;
#if defined(__linux__) && defined(FICLONE)
    if (::ioctl(dst, FICLONE, src) == 0) return ok_status();
    err = errno;
#endif
    if (mode & kCopyFicloneForce) {
      Error e = sys_error(ENOTSUP, "copyfile", shown);
      e.description = std::string("COPYFILE_FICLONE_FORCE: the file system cannot reflink (") +
                      errno_name(err) + ")";
      return e;
    }
  }
  std::uint64_t left = size;
  // The source is read from offset 0 by position, whatever its descriptor's offset.
  off_t from = 0;
#if defined(__linux__)
  bool first = true;
  while (left > 0) {
    std::size_t want = left < kRangeChunk ? static_cast<std::size_t>(left) : kRangeChunk;
    ssize_t n = retry_eintr([&] { return ::copy_file_range(src, &from, dst, nullptr, want, 0); });
    if (n > 0) {
      left -= static_cast<std::uint64_t>(n);
      first = false;
      continue;
    }
    if (n == 0) return ok_status();
    int err = errno;
    // Not offered between these files (an older kernel, another file system, a seccomp profile):
    // the loop does it, from where the offsets stand.
    bool unsupported =
        err == EXDEV || err == EINVAL || err == ENOSYS || err == EOPNOTSUPP || err == EPERM;
    if (!(first && unsupported)) return sys_error(err, "copy_file_range", shown);
    break;
  }
  if (left == 0) return ok_status();
#endif
  return copy_by_loop(src, dst, static_cast<std::uint64_t>(from), left, shown);
}

}  // namespace

Result<Fd> open_copy_source(const Root& root, int dirfd, const std::string& name,
                            const std::string& shown, struct stat* st) {
  // Looked at before it is opened, so a device or FIFO is refused without an open.
  if (::fstatat(dirfd, name.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    return sys_error(errno, "lstat", shown);
  }
  if (S_ISLNK(st->st_mode)) return symlink_refusal("copyfile", shown, name);
  int raw = -1;
  if (S_ISREG(st->st_mode)) {
    raw = retry_eintr([&] {
      return ::openat(dirfd, name.c_str(),
                      O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    });
    if (raw < 0) return explain_open_failure(dirfd, name, errno, "open", shown);
  }
  Fd fd(raw);
  // What was opened, and its mount, in one look (the name may have changed since the lstat).
  MountIdentity mount;
  if (fd.valid()) {
    int looked = platform::lstat_with_mount(fd.get(), "", st, &mount);
    if (looked != 0) return sys_error(looked, "fstat", shown);
  }
  if (S_ISDIR(st->st_mode)) return sys_error(EISDIR, "copyfile", shown);
  if (!S_ISREG(st->st_mode)) {
    return refusal(Refusal::NotRegular, "copyfile", shown,
                   "not a regular file (FIFO, socket or device): refused, never read", EINVAL);
  }
  auto hard = refuse_hard_link(*st, shown, "copyfile");
  if (!hard.ok()) return hard.take_error();
  auto same = same_mount_told(root, mount, fd.get(), shown);
  if (!same.ok()) return same.take_error();
  return fd;
}

Status copy_into(const Root& root, int src, const struct stat& st, Held& dir,
                 const std::string& leaf, std::uint32_t copy_mode, bool exclusive,
                 const std::string& shown) {
  OwnedTemp tmp(root, dir, shown, ".copy");
  auto made = tmp.create(0600, true);
  if (!made.ok()) return made;
  auto data =
      copy_data(src, tmp.fd.get(), static_cast<std::uint64_t>(st.st_size), copy_mode, shown);
  if (!data.ok()) return data;
  // Node's copyFile gives the copy the source's permission bits, whatever the umask.
  if (::fchmod(tmp.fd.get(), st.st_mode & 07777) != 0) return sys_error(errno, "fchmod", shown);
  return tmp.publish(leaf, exclusive);
}

Result<Value> copy_file(const Root& root, const Request& request) {
  if (request.copy_mode > (kCopyExcl | kCopyFiclone | kCopyFicloneForce)) {
    return bad_argument("copyFile mode must be a combination of fs.constants.COPYFILE_*",
                        request.path);
  }
  auto from = prepare_path(root, request.path);
  if (!from.ok()) return from.take_error();
  auto to = prepare_path(root, request.to);
  if (!to.ok()) return to.take_error();
  if (to.value().is_root()) return sys_error(EISDIR, "copyfile", request.to);
  if (to.value().must_be_dir) return sys_error(ENOTDIR, "copyfile", request.to);

  auto src = open_beneath(root, from.value(), O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (!src.ok()) return src.take_error();
  struct stat st;
  MountIdentity mount;
  int looked = platform::lstat_with_mount(src.value().get(), "", &st, &mount);
  if (looked != 0) return sys_error(looked, "fstat", request.path);
  if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, "copyfile", request.path);
  if (!S_ISREG(st.st_mode)) {
    return refusal(Refusal::NotRegular, "copyfile", request.path,
                   "not a regular file (FIFO, socket or device): refused, never read", EINVAL);
  }
  auto hard = refuse_hard_link(st, request.path, "copyfile");
  if (!hard.ok()) return hard.take_error();
  auto same = same_mount_told(root, mount, src.value().get(), request.path);
  if (!same.ok()) return same.take_error();

  auto parent = held_parent(root, to.value(), "copyfile", request.to);
  if (!parent.ok()) return parent.take_error();
  Held& dir = parent.value().dir;
  const std::string& leaf = parent.value().leaf;
  Target target;
  bool exclusive = (request.copy_mode & kCopyExcl) != 0;
  auto checked = check_target(root, dir.look(), leaf, "copyfile", request.to, exclusive, &target);
  if (!checked.ok()) return checked.take_error();
  // The same file under both names: libuv's copyfile leaves it as it is, and so do we.
  if (target.exists && target.st.st_dev == st.st_dev && target.st.st_ino == st.st_ino) {
    return Value(std::monostate{});
  }
  auto done = copy_into(root, src.value().get(), st, dir, leaf, request.copy_mode,
                        exclusive || !target.exists, request.to);
  // Nothing stood at the name when it was looked at; something appeared before the publish. Only
  // COPYFILE_EXCL makes that an error: otherwise the copy replaces it, as Node's would.
  if (!done.ok() && !exclusive && !target.exists && done.error().err == EEXIST &&
      done.error().refusal == Refusal::None) {
    Target again;
    auto recheck = check_target(root, dir.look(), leaf, "copyfile", request.to, false, &again);
    if (!recheck.ok()) return recheck.take_error();
    done = copy_into(root, src.value().get(), st, dir, leaf, request.copy_mode, false, request.to);
  }
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
