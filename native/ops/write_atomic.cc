// writeFile({ atomic: true }): readers see the old content or the new, never a half-written file,
// and a crash leaves one or the other on disk.
//
// The temporary file lives in the target's own directory (rename cannot cross mounts), opened
// beneath the root through the same resolution as everything else. Preferred: an anonymous
// O_TMPFILE, which no one can see or open before it is complete and which vanishes by itself on
// any error; then linkat publishes it. Where the file system has no O_TMPFILE (EOPNOTSUPP, or
// EISDIR from kernels that predate it) or the platform has none (macOS): a random name created
// with O_CREAT|O_EXCL|O_NOFOLLOW, unlinked on every error path.
//
// The directory is held for the whole write, fsync included: long enough for it to be renamed
// out of the root. Every name this writes there (the named temp, the published file, the cleanup
// of the temp) is preceded by the proof that the directory is still beneath the root.
#include <fcntl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

#include "../core/eintr.h"
#include "write.h"

namespace pinnedfs::ops {

namespace {

constexpr int kNameAttempts = 16;

// The directory we create in, rename in and fsync. fsync needs a real (not O_PATH/O_SEARCH)
// descriptor, so the parent is opened O_RDONLY; a parent we may search but not read (mode 0311)
// still gets its atomic rename, only without the directory fsync.
struct SyncDir {
  Held dir;
  bool can_sync = true;
};

Result<SyncDir> open_sync_dir(const Root& root, const LexedPath& path) {
  // The pinned root itself is opened O_RDONLY|O_DIRECTORY (root.cc): borrow it, no open/close.
  if (path.parts.size() == 1) return SyncDir{Held::root(root), true};
  LexedPath parent = path;
  parent.parts.pop_back();
  parent.must_be_dir = false;
  auto dir = hold_beneath(root, parent, O_RDONLY | O_DIRECTORY);
  if (dir.ok()) return SyncDir{dir.take(), true};
  if (dir.error().refusal != Refusal::None || dir.error().err != EACCES) return dir.take_error();
  auto searchable = open_parent(root, path);
  if (!searchable.ok()) return searchable.take_error();
  return SyncDir{std::move(searchable.value().dir), false};
}

// splitmix64 over the clock (vDSO: no syscall), a counter and a stack address: names only need to
// be unlikely to collide, since O_EXCL makes a collision (or an attacker's squatting) a retry,
// never a hazard.
std::string random_name() {
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
  char buf[40];
  std::snprintf(buf, sizeof buf, ".pinnedfs-%016llx.tmp", static_cast<unsigned long long>(z));
  return buf;
}

// The temporary file. While `name` is set and not published, the destructor unlinks it: every early
// return below cleans up by leaving scope. Only while the directory is still beneath the root: a
// temp left in a directory that has moved out stays there, outside, untouched.
class Temp {
 public:
  Temp(const Root& root, Held& dir, const std::string& shown)
      : root_(root), dir_(dir), shown_(shown) {}
  Temp(const Temp&) = delete;
  Temp& operator=(const Temp&) = delete;
  ~Temp() {
    if (name_.empty() || published_) return;
    if (dir_.beneath(root_, "unlink", shown_).ok()) ::unlinkat(dir_.fd(), name_.c_str(), 0);
  }
  Fd fd;
  const std::string& name() const { return name_; }
  void named(std::string n) { name_ = std::move(n); }
  void published() { published_ = true; }

 private:
  const Root& root_;
  Held& dir_;
  const std::string& shown_;
  std::string name_;
  bool published_ = false;
};

Status create_named(const Root& root, Temp& tmp, Held& dir, mode_t mode, const std::string& shown) {
  int dirfd = dir.fd();
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    auto still = dir.beneath(root, "openat", shown);
    if (!still.ok()) return still;
    std::string name = random_name();
    int fd = retry_eintr([&] {
      return ::openat(dirfd, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                      mode);
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

#if defined(O_TMPFILE)
// Gives the anonymous file a name in `dirfd`. linkat(AT_EMPTY_PATH) needs CAP_DAC_READ_SEARCH
// before Linux 6.10 (ENOENT otherwise); the /proc magic link does the same for anyone.
int link_tmpfile(int fd, int dirfd, const std::string& name) {
  if (::linkat(fd, "", dirfd, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  int err = errno;
  if (err != ENOENT) return err;
  char proc[48];
  std::snprintf(proc, sizeof proc, "/proc/self/fd/%d", fd);
  if (::linkat(AT_FDCWD, proc, dirfd, name.c_str(), AT_SYMLINK_FOLLOW) == 0) return 0;
  return err;  // the first answer is the meaningful one
}
#endif

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

// The existing target, checked before anything is written: what may be replaced and which bits
// the replacement keeps. The check is by name, and renameat later acts by name: a target swapped
// in between is replaced as an entry (rename never follows or writes through it), so the window
// cannot carry a write outside the root.
Status check_target(int dirfd, const std::string& leaf, const std::string& shown, bool* exists,
                    struct stat* st) {
  if (::fstatat(dirfd, leaf.c_str(), st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) {
      *exists = false;
      return ok_status();
    }
    return sys_error(errno, "fstatat", shown);
  }
  *exists = true;
  if (S_ISLNK(st->st_mode)) {
    return symlink_refusal("open", shown, leaf);
  }
  if (S_ISDIR(st->st_mode)) return sys_error(EISDIR, "open", shown);
  // Replacing a hard-linked name would not write the other name, so nothing outside would change.
  // We refuse all the same: the contract promises a hard-linked file is never written, a plain
  // write refuses it, and silently splitting the link (a pnpm store, a backup) loses the sharing
  // the user set up. One rule for both paths, and for every kind of file.
  auto hard = refuse_hard_link(*st, shown, "open");
  if (!hard.ok()) return hard;
  if (!S_ISREG(st->st_mode)) {
    return refusal(Refusal::NotRegular, "open", shown,
                   "not a regular file (FIFO, socket or device): refused, never replaced", EINVAL);
  }
  return ok_status();
}

Status create_temp(const Root& root, Temp& tmp, Held& dir, mode_t mode, bool allow_tmpfile,
                   const std::string& shown) {
#if defined(O_TMPFILE)
  if (allow_tmpfile) {
    // Anonymous: nothing is named until publish, which proves the directory again. This act spends
    // the lookup's proof all the same, so that publish, after the write and its fsync, cannot.
    auto still = dir.beneath(root, "openat", shown);
    if (!still.ok()) return still;
    int fd = retry_eintr(
        [&] { return ::openat(dir.fd(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode); });
    if (fd >= 0) {
      tmp.fd = Fd(fd);
      return ok_status();
    }
    if (errno != EOPNOTSUPP && errno != EISDIR) return sys_error(errno, "openat", shown);
  }
#else
  (void)allow_tmpfile;
#endif
  return create_named(root, tmp, dir, mode, shown);
}

// Publishes the complete temp file as `leaf`: renameat over it, or for an anonymous file linkat.
// Each of those names is written only once the directory is proven beneath the root again: the
// write and its fsync took time.
Status publish(const Root& root, Temp& tmp, Held& dir, const std::string& leaf, bool target_existed,
               const std::string& shown) {
  int dirfd = dir.fd();
#if defined(O_TMPFILE)
  if (tmp.name().empty()) {
    // Nothing stood there: link straight to the name, atomically create-only. If something
    // appeared since the check (EEXIST), fall through to a random name and replace it.
    if (!target_existed) {
      auto still = dir.beneath(root, "linkat", shown);
      if (!still.ok()) return still;
      int err = link_tmpfile(tmp.fd.get(), dirfd, leaf);
      if (err == 0) {
        tmp.published();
        return ok_status();
      }
      if (err != EEXIST) return sys_error(err, "linkat", shown);
    }
    for (int attempt = 0;; ++attempt) {
      auto still = dir.beneath(root, "linkat", shown);
      if (!still.ok()) return still;
      std::string name = random_name();
      int err = link_tmpfile(tmp.fd.get(), dirfd, name);
      if (err == 0) {
        tmp.named(std::move(name));
        break;
      }
      if (err != EEXIST || attempt + 1 == kNameAttempts) return sys_error(err, "linkat", shown);
    }
  }
#else
  (void)target_existed;
#endif
  auto still = dir.beneath(root, "rename", shown);
  if (!still.ok()) return still;
  if (::renameat(dirfd, tmp.name().c_str(), dirfd, leaf.c_str()) != 0) {
    return sys_error(errno, "rename", shown);
  }
  tmp.published();
  return ok_status();
}

}  // namespace

Result<Value> write_atomic_with(const Root& root, const LexedPath& path, const Request& request,
                                bool allow_tmpfile) {
  const std::string& shown = request.path;
  if (path.is_root()) return sys_error(EISDIR, "open", shown);
  auto parent = open_sync_dir(root, path);
  if (!parent.ok()) return parent.take_error();
  Held& dir = parent.value().dir;
  int dirfd = dir.fd();
  const std::string& leaf = path.leaf();

  bool exists = false;
  struct stat target;
  auto checked = check_target(dirfd, leaf, shown, &exists, &target);
  if (!checked.ok()) return checked.take_error();

  // A new file gets Node's mode (umask applies); a replacement keeps the old file's bits exactly,
  // so a formatter rewriting a 0755 script leaves it executable.
  mode_t keep = exists ? (target.st_mode & 07777) : 0;
  mode_t create_mode = exists             ? (keep & 0777)
                       : request.has_mode ? static_cast<mode_t>(request.mode)
                                          : kDefaultFileMode;
  Temp tmp(root, dir, shown);
  auto created = create_temp(root, tmp, dir, create_mode, allow_tmpfile, shown);
  if (!created.ok()) return created.take_error();
  int fd = tmp.fd.get();
  bool needs_mode = false;
  if (exists) {
    // One fstat of the temp tells what creation gave it (our ids, or a setgid directory's group;
    // create_mode less the umask), so the usual case needs no fchown and no fchmod.
    struct stat made;
    auto got = fstat_fd(fd, &made, shown);
    if (!got.ok()) return got.take_error();
    bool owner_set = false;
    if (made.st_uid != target.st_uid || made.st_gid != target.st_gid) {
      // Root rewriting someone's file should not hand it to root. An unprivileged caller cannot
      // give a file away (EPERM): the replacement is then simply ours, as with any editor.
      uid_t uid = made.st_uid != target.st_uid ? target.st_uid : static_cast<uid_t>(-1);
      gid_t gid = made.st_gid != target.st_gid ? target.st_gid : static_cast<gid_t>(-1);
      if (::fchown(fd, uid, gid) == 0) {
        owner_set = true;
      } else if (errno != EPERM) {
        return sys_error(errno, "fchown", shown);
      }
    }
    needs_mode = owner_set || (made.st_mode & 07777) != keep;
  }
  // Owner before the data (no other group reads it meanwhile), exact bits after it: fchown clears
  // set-id, and so does a write by a caller without CAP_FSETID (any unprivileged user, and root in
  // a user namespace) to a group-executable setgid file. The umask also narrowed create_mode.
  auto wrote = write_all(fd, request.data, shown);
  if (!wrote.ok()) return wrote.take_error();
  if (needs_mode && ::fchmod(fd, keep) != 0) return sys_error(errno, "fchmod", shown);
  // no_sync: readers and a killed process still see the old content or the new, whole; only a
  // power loss or kernel crash soon after may bring back the old (or, where the file system has no
  // replace-by-rename heuristic, an empty file), as with any editor that renames without fsync.
  if (!request.no_sync) {
    auto synced = sync_file(fd, shown);
    if (!synced.ok()) return synced.take_error();
  }
  auto published = publish(root, tmp, dir, leaf, exists, shown);
  if (!published.ok()) return published.take_error();
  if (parent.value().can_sync && !request.no_sync) {
    // The new name is in place; this makes it survive a crash. A file system that cannot fsync a
    // directory (EINVAL) has nothing more to give.
    int rc = retry_eintr([&] { return ::fsync(dirfd); });
    if (rc != 0 && errno != EINVAL) return sys_error(errno, "fsync", shown);
  }
  return Value(std::monostate{});
}

Result<Value> write_atomic(const Root& root, const LexedPath& path, const Request& request) {
  return write_atomic_with(root, path, request, true);
}

}  // namespace pinnedfs::ops
