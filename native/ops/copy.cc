// copyFile, and the one file copy cp uses for every regular file it meets.
//
// The source is opened as a read is (no link followed anywhere, O_NONBLOCK so a FIFO never holds
// the worker, then refused with anything else that is not a regular single-link file on the root's
// mount). The destination is never written in place: the data goes into a temporary in the
// destination's directory (anonymous O_TMPFILE where the file system has it, else a random name
// made with O_EXCL), and one linkat or renameat publishes it. A process killed mid-copy, or a full
// disk, leaves the old destination (or none) and, with O_TMPFILE, nothing else.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if defined(__linux__)
#include <linux/fs.h>  // FICLONE
#include <sys/ioctl.h>
#endif

#include <atomic>
#include <cstdio>
#include <vector>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "fileops.h"
#include "write.h"

namespace pinnedfs::ops {

namespace {

constexpr int kNameAttempts = 16;
// The fallback loop's buffer: constant, whatever the file's size.
constexpr std::size_t kCopyBuffer = std::size_t{256} << 10;
#if defined(__linux__)
// One copy_file_range call's most: the kernel copies in its own chunks below this.
constexpr std::size_t kRangeChunk = std::size_t{1} << 30;
#endif

using CopyTemp = OwnedTemp;

Status create_temp(const Root& root, CopyTemp& tmp, Held& dir, const std::string& shown) {
#if defined(O_TMPFILE)
  {
    // Anonymous, but made in `dir` all the same: through a descriptor proven just now.
    auto still = dir.prove(root, "openat", shown);
    if (!still.ok()) return still.take_error();
    int fd = retry_eintr(
        [&] { return ::openat(still.value().fd(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600); });
    if (fd >= 0) {
      tmp.fd = Fd(fd);
      tmp.anonymous = true;
      return ok_status();
    }
    if (errno != EOPNOTSUPP && errno != EISDIR) return sys_error(errno, "openat", shown);
  }
#endif
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    auto still = dir.prove(root, "openat", shown);
    if (!still.ok()) return still.take_error();
    std::string name = random_temp_name(".copy");
    int fd = retry_eintr([&] {
      return ::openat(still.value().fd(), name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    });
    if (fd >= 0) {
      tmp.fd = Fd(fd);
      tmp.named(std::move(name));
      return ok_status();
    }
    if (errno != EEXIST) return sys_error(errno, "openat", shown);
  }
  return sys_error(EEXIST, "openat", shown);
}

Status copy_by_loop(int src, int dst, std::uint64_t left, const std::string& shown) {
  std::vector<char> buf(kCopyBuffer);
  while (left > 0) {
    std::size_t want = left < buf.size() ? static_cast<std::size_t>(left) : buf.size();
    ssize_t n = retry_eintr([&] { return ::read(src, buf.data(), want); });
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
#if defined(__linux__)
  bool first = true;
  while (left > 0) {
    std::size_t want = left < kRangeChunk ? static_cast<std::size_t>(left) : kRangeChunk;
    ssize_t n = retry_eintr([&] { return ::copy_file_range(src, nullptr, dst, nullptr, want, 0); });
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
  return copy_by_loop(src, dst, left, shown);
}

#if defined(O_TMPFILE)
int link_tmpfile(int fd, int dirfd, const std::string& name) {
  if (::linkat(fd, "", dirfd, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  int err = errno;
  if (err != ENOENT) return err;
  // Without CAP_DAC_READ_SEARCH before Linux 6.10: the /proc magic link does the same.
  if (!platform::proc_is_procfs()) return err;
  char proc[48];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc, dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return err;
}
#endif

// Gives the complete temporary its final name in the proven directory `dirfd`. `exclusive`: only
// where nothing has the name.
Status publish_in(CopyTemp& tmp, int dirfd, const std::string& leaf, bool exclusive,
                  const std::string& shown) {
#if defined(O_TMPFILE)
  if (tmp.anonymous) {
    if (exclusive) {
      int err = link_tmpfile(tmp.fd.get(), dirfd, leaf);
      if (err != 0) return sys_error(err, "link", shown);
      return ok_status();
    }
    // A name first (nothing can be replaced by linkat), then the rename over the target.
    for (int attempt = 0;; ++attempt) {
      std::string name = random_temp_name(".copy");
      int err = link_tmpfile(tmp.fd.get(), dirfd, name);
      if (err == 0) {
        tmp.named(std::move(name));
        break;
      }
      if (err != EEXIST || attempt + 1 >= kNameAttempts) return sys_error(err, "link", shown);
    }
  }
#endif
  int rc = exclusive ? platform::rename_noreplace(dirfd, tmp.name().c_str(), dirfd, leaf.c_str())
                     : ::renameat(dirfd, tmp.name().c_str(), dirfd, leaf.c_str());
  if (rc != 0) {
    int err = errno;
    if (!exclusive || (err != EINVAL && err != ENOSYS && err != ENOTSUP)) {
      return sys_error(err, "rename", shown);
    }
    // No create-only rename on this file system: link(2) never replaces a name; the temporary's
    // own name then goes with the CopyTemp.
    if (::linkat(dirfd, tmp.name().c_str(), dirfd, leaf.c_str(), 0) != 0) {
      return sys_error(errno, "link", shown);
    }
    return ok_status();
  }
  tmp.published();
  return ok_status();
}

// The publish, once `dir` is proven beneath the root again (the copy took time): one proof for its
// few acts, which follow it at once.
Status publish(const Root& root, CopyTemp& tmp, Held& dir, const std::string& leaf, bool exclusive,
               const std::string& shown) {
  return dir.act(root, "rename", shown,
                 [&](int dirfd) { return publish_in(tmp, dirfd, leaf, exclusive, shown); });
}

}  // namespace

Status check_copy_target(const Root& root, int dirfd, const std::string& leaf,
                         const std::string& shown, CopyTarget* out) {
  if (::fstatat(dirfd, leaf.c_str(), &out->st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return ok_status();
    return sys_error(errno, "lstat", shown);
  }
  out->exists = true;
  if (S_ISLNK(out->st.st_mode)) return symlink_refusal("copyfile", shown, leaf);
  if (S_ISDIR(out->st.st_mode)) return sys_error(EISDIR, "copyfile", shown);
  auto hard = refuse_hard_link(out->st, shown, "copyfile");
  if (!hard.ok()) return hard;
  if (!S_ISREG(out->st.st_mode)) {
    return refusal(Refusal::NotRegular, "copyfile", shown,
                   "not a regular file (FIFO, socket or device): refused, never replaced", EINVAL);
  }
#if defined(O_PATH)
  int raw = retry_eintr([&] { return ::openat(dirfd, leaf.c_str(), kObjectHandleFlags); });
  if (raw < 0) return explain_open_failure(dirfd, leaf, errno, "openat", shown);
  Fd object(raw);
  return same_mount(root, object.get(), shown);
#else
  if (static_cast<std::uint64_t>(out->st.st_dev) != root.mount().dev) {
    return mount_point("copyfile", shown, shown);
  }
  return ok_status();
#endif
}

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
  if (fd.valid() && ::fstat(fd.get(), st) != 0) return sys_error(errno, "fstat", shown);
  if (S_ISDIR(st->st_mode)) return sys_error(EISDIR, "copyfile", shown);
  if (!S_ISREG(st->st_mode)) {
    return refusal(Refusal::NotRegular, "copyfile", shown,
                   "not a regular file (FIFO, socket or device): refused, never read", EINVAL);
  }
  auto hard = refuse_hard_link(*st, shown, "copyfile");
  if (!hard.ok()) return hard.take_error();
  auto same = same_mount(root, fd.get(), shown);
  if (!same.ok()) return same.take_error();
  return fd;
}

Status copy_into(const Root& root, int src, const struct stat& st, Held& dir,
                 const std::string& leaf, std::uint32_t copy_mode, bool exclusive,
                 const std::string& shown) {
  // From the start, whatever an earlier attempt read.
  if (::lseek(src, 0, SEEK_SET) < 0) return sys_error(errno, "lseek", shown);
  CopyTemp tmp(root, dir, shown);
  auto made = create_temp(root, tmp, dir, shown);
  if (!made.ok()) return made;
  auto data =
      copy_data(src, tmp.fd.get(), static_cast<std::uint64_t>(st.st_size), copy_mode, shown);
  if (!data.ok()) return data;
  // Node's copyFile gives the copy the source's permission bits, whatever the umask.
  if (::fchmod(tmp.fd.get(), st.st_mode & 07777) != 0) return sys_error(errno, "fchmod", shown);
  return publish(root, tmp, dir, leaf, exclusive, shown);
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
  if (::fstat(src.value().get(), &st) != 0) return sys_error(errno, "fstat", request.path);
  if (S_ISDIR(st.st_mode)) return sys_error(EISDIR, "copyfile", request.path);
  if (!S_ISREG(st.st_mode)) {
    return refusal(Refusal::NotRegular, "copyfile", request.path,
                   "not a regular file (FIFO, socket or device): refused, never read", EINVAL);
  }
  auto hard = refuse_hard_link(st, request.path, "copyfile");
  if (!hard.ok()) return hard.take_error();
  auto same = same_mount(root, src.value().get(), request.path);
  if (!same.ok()) return same.take_error();

  auto parent = held_parent(root, to.value(), "copyfile", request.to);
  if (!parent.ok()) return parent.take_error();
  Held& dir = parent.value().dir;
  const std::string& leaf = parent.value().leaf;
  CopyTarget target;
  bool exclusive = (request.copy_mode & kCopyExcl) != 0;
  if (::fstatat(dir.look(), leaf.c_str(), &target.st, AT_SYMLINK_NOFOLLOW) == 0 && exclusive) {
    return sys_error(EEXIST, "copyfile", request.to);
  }
  auto checked = check_copy_target(root, dir.look(), leaf, request.to, &target);
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
    CopyTarget again;
    auto recheck = check_copy_target(root, dir.look(), leaf, request.to, &again);
    if (!recheck.ok()) return recheck.take_error();
    done = copy_into(root, src.value().get(), st, dir, leaf, request.copy_mode, false, request.to);
  }
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
