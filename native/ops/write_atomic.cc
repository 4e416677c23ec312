// The replacement of a whole file (writeFile with w, w+, wx or wx+): readers see the old content or
// the new, never a half-written file, and a process killed at any point, or a full disk, leaves
// one or the other.
//
// The temporary file lives in the target's own directory (rename cannot cross mounts), opened
// beneath the root through the same resolution as everything else. Preferred: an anonymous
// O_TMPFILE, which no one can see or open before it is complete and which vanishes by itself on
// any error or kill; then linkat publishes it. Where the file system has no O_TMPFILE (EOPNOTSUPP,
// or EISDIR from kernels that predate it) or the platform has none (macOS): a random name created
// with O_CREAT|O_EXCL|O_NOFOLLOW, unlinked on every error path (a process killed while it writes
// leaves it: docs/write-semantics.md).
//
// Crash safety comes from the rename and costs one more name lookup; durability (surviving the
// machine's crash) needs fsyncs and is asked for (request.durable): the data before the rename,
// the directory after it.
//
// The directory is held for the whole write: long enough for it to be renamed out of the root.
// Every name this writes there (the named temp, the published file, the cleanup of the temp) is
// preceded by the proof that the directory is still beneath the root.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

#include "../core/cancel.h"
#include "../core/eintr.h"
#include "write.h"

namespace pinnedfs::ops {

namespace {

constexpr int kNameAttempts = 16;

// The directory we create in, rename in and, for a durable write, fsync. fsync needs a real (not
// O_PATH/O_SEARCH) descriptor, which needs read permission on the directory; a durable write in a
// directory we may search but not read (mode 0311) syncs its file system instead (see sync_dir).
struct SyncDir {
  Held dir;
  bool can_sync = true;
};

Result<SyncDir> open_dir_of(const Root& root, const LexedPath& path, bool durable) {
  // The pinned root itself is opened O_RDONLY|O_DIRECTORY (root.cc): borrow it, no open/close.
  if (path.parts.size() == 1) return SyncDir{Held::root(root), true};
  if (durable) {
    LexedPath parent = path;
    parent.parts.pop_back();
    parent.must_be_dir = false;
    auto dir = hold_beneath(root, parent, O_RDONLY | O_DIRECTORY);
    if (dir.ok()) return SyncDir{dir.take(), true};
    if (dir.error().refusal != Refusal::None || dir.error().err != EACCES) return dir.take_error();
  }
  auto searchable = open_parent(root, path);
  if (!searchable.ok()) return searchable.take_error();
  return SyncDir{std::move(searchable.value().dir), false};
}

using Temp = OwnedTemp;

Status create_named(const Root& root, Temp& tmp, Held& dir, mode_t mode, const std::string& shown) {
  for (int attempt = 0; attempt < kNameAttempts; ++attempt) {
    auto still = dir.prove(root, "openat", shown);
    if (!still.ok()) return still.take_error();
    std::string name = random_temp_name();
    int fd = retry_eintr([&] {
      return ::openat(still.value().fd(), name.c_str(),
                      O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
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

// What stands at the target's name, checked before anything is written: whether there is one, what
// may be replaced and which bits the replacement keeps. The check is by name, and renameat later
// acts by name: a target swapped in between is replaced as an entry (rename never follows or
// writes through it), so the window cannot carry a write outside the root.
struct Target {
  bool exists = false;
  struct stat st;
};

Status check_target(const Root& root, int dirfd, const std::string& leaf, const std::string& shown,
                    bool exclusive, Target* t) {
  if (::fstatat(dirfd, leaf.c_str(), &t->st, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno == ENOENT) return ok_status();
    return sys_error(errno, "fstatat", shown);
  }
  t->exists = true;
  // wx answers what open(O_CREAT|O_EXCL) answers for anything at the name, a link included.
  if (exclusive) return sys_error(EEXIST, "open", shown);
  if (S_ISLNK(t->st.st_mode)) return symlink_refusal("open", shown, leaf);
  if (S_ISDIR(t->st.st_mode)) {
    return mount_leaf(root, dirfd, leaf, sys_error(EISDIR, "open", shown), shown, shown);
  }
  // Replacing a hard-linked name would not write the other name, so nothing outside would change.
  // We refuse all the same: the contract promises a hard-linked file is never written, a plain
  // write refuses it, and silently splitting the link (a pnpm store, a backup) loses the sharing
  // the user set up. One rule for both paths, and for every kind of file.
  auto hard = refuse_hard_link(t->st, shown, "open");
  if (!hard.ok()) return hard;
  if (!S_ISREG(t->st.st_mode)) {
    return refusal(Refusal::NotRegular, "open", shown,
                   "not a regular file (FIFO, socket or device): refused, never replaced", EINVAL);
  }
  // A file bind-mounted over the name is another mount's object, which a write in place refuses
  // (and a rename could not replace: EBUSY). Linux: the name's own O_PATH handle tells its mount
  // id. macOS has no mount ids and no bind mounts, and the mount is the device already looked at
  // (an O_RDONLY open there would need read permission a write does not).
#if defined(O_PATH)
  int raw = retry_eintr([&] { return ::openat(dirfd, leaf.c_str(), kObjectHandleFlags); });
  if (raw < 0) return explain_open_failure(dirfd, leaf, errno, "openat", shown);
  Fd object(raw);
  auto same = same_mount(root, object.get(), shown);
  if (!same.ok()) return same;
#else
  if (static_cast<std::uint64_t>(t->st.st_dev) != root.mount().dev) {
    return mount_point("open", shown, shown);
  }
#endif
  // Node opens the file for writing, so a file the caller may not write (0444, another user's) is
  // EACCES even where the directory would let a rename replace it. Asked of the name we just
  // looked at; the answer only decides whether to go on, the rename acts on the entry. No flags:
  // with AT_EACCESS or AT_SYMLINK_NOFOLLOW glibc calls faccessat2, which a container's older
  // seccomp profile answers EPERM (a Node process's real and effective ids are the same).
  if (::faccessat(dirfd, leaf.c_str(), W_OK, 0) != 0) {
    return sys_error(errno, "open", shown);
  }
  return ok_status();
}

// A directory that will not take a new entry from us (no write permission on it): a replacement
// cannot be made there, and an in-place write of an existing file may still be allowed.
bool directory_refused(int err) {
  return err == EACCES || err == EPERM;
}

Status create_temp(const Root& root, Temp& tmp, Held& dir, mode_t mode, bool allow_tmpfile,
                   const std::string& shown) {
#if defined(O_TMPFILE)
  if (allow_tmpfile) {
    // Anonymous: nothing is named until publish, which proves the directory again. This act spends
    // the lookup's proof all the same, so that publish, after the write, cannot.
    auto still = dir.prove(root, "openat", shown);
    if (!still.ok()) return still.take_error();
    int fd = retry_eintr(
        [&] { return ::openat(still.value().fd(), ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, mode); });
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

// Moves the named temp to `leaf` only where nothing has that name: wx's atomic create. `*linked`
// when the file system has no create-only rename and a link did it: the temp's own name is then
// still there, for the caller to drop.
int rename_exclusive(int dirfd, const std::string& from, const std::string& leaf, bool* linked) {
  *linked = false;
#if defined(__linux__) && defined(RENAME_NOREPLACE)
  // EINVAL: a file system without it; ENOSYS: a kernel before 3.15; EPERM: an older seccomp profile
  // that does not know renameat2 (a real EPERM is answered by the link below as well).
  if (::renameat2(dirfd, from.c_str(), dirfd, leaf.c_str(), RENAME_NOREPLACE) == 0) return 0;
  if (errno != EINVAL && errno != ENOSYS && errno != EPERM) return errno;
#elif defined(__APPLE__) && defined(RENAME_EXCL)
  if (::renameatx_np(dirfd, from.c_str(), dirfd, leaf.c_str(), RENAME_EXCL) == 0) return 0;
  if (errno != ENOTSUP) return errno;
#endif
  // link(2) never replaces a name.
  if (::linkat(dirfd, from.c_str(), dirfd, leaf.c_str(), 0) != 0) return errno;
  *linked = true;
  return 0;
}

// After the rename, for a durable write: the directory's new entry made durable. fsync of the
// directory where it could be opened for reading. Where it may be searched but not read (0311),
// no descriptor of it can be fsynced (fsync refuses O_PATH, and opening it O_RDONLY is EACCES):
// Linux then syncs the file system the file lies on (syncfs on the file's own descriptor; a rename
// cannot leave a file system, so the directory is on it too), which commits the entry with
// everything else pending there. macOS has no syncfs: there the entry is left to the file system's
// own commit, as docs/write-semantics.md states.
Status sync_dir(int dirfd, bool can_sync, int filefd, const std::string& shown) {
  if (can_sync) {
    // A file system that cannot fsync a directory (EINVAL) has nothing more to give.
    int rc = retry_eintr([&] { return ::fsync(dirfd); });
    if (rc != 0 && errno != EINVAL) return sys_error(errno, "fsync", shown);
    return ok_status();
  }
#if defined(__linux__)
  if (::syncfs(filefd) != 0) return sys_error(errno, "syncfs", shown);
#else
  (void)filefd;
#endif
  return ok_status();
}

// The temp's name moved onto `leaf` in the proven directory `dirfd`.
Status rename_temp(Temp& tmp, int dirfd, const std::string& leaf, bool exclusive,
                   const std::string& shown) {
  if (exclusive) {
    bool linked = false;
    int err = rename_exclusive(dirfd, tmp.name(), leaf, &linked);
    if (err != 0) return sys_error(err, "rename", shown);
    // A rename moved the temp's name; a link left it, and the destructor drops it, proven.
    if (!linked) tmp.published();
    return ok_status();
  }
  if (::renameat(dirfd, tmp.name().c_str(), dirfd, leaf.c_str()) != 0) {
    return sys_error(errno, "rename", shown);
  }
  tmp.published();
  return ok_status();
}

// Publishes the complete temp file as `leaf`: renameat over it, or for an anonymous file linkat.
// Each of those names is written only once the directory is proven beneath the root again: the
// write took time. `exclusive`: only where nothing has the name (EEXIST otherwise).
Status publish(const Root& root, Temp& tmp, Held& dir, const std::string& leaf, bool target_existed,
               bool exclusive, const std::string& shown) {
  // The last moment an abort can still leave the old content: the temporary is dropped unpublished.
  if (cancelled()) return cancelled_error("rename", shown);
#if defined(O_TMPFILE)
  if (tmp.name().empty()) {
    // Nothing stood there: link straight to the name, atomically create-only. If something
    // appeared since the check (EEXIST), wx fails as open(O_EXCL) would; w goes on through a
    // random name and replaces it.
    if (!target_existed) {
      auto linked = dir.act(root, "linkat", shown, [&](int dirfd) -> Result<int> {
        return link_tmpfile(tmp.fd.get(), dirfd, leaf);
      });
      if (!linked.ok()) return linked.take_error();
      int err = linked.value();
      if (err == 0) {
        tmp.published();
        return ok_status();
      }
      if (err != EEXIST || exclusive) return sys_error(err, "linkat", shown);
    }
    for (int attempt = 0;; ++attempt) {
      auto still = dir.prove(root, "linkat", shown);
      if (!still.ok()) return still.take_error();
      std::string name = random_temp_name();
      int err = link_tmpfile(tmp.fd.get(), still.value().fd(), name);
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
  return dir.act(root, "rename", shown,
                 [&](int dirfd) { return rename_temp(tmp, dirfd, leaf, exclusive, shown); });
}

}  // namespace

Result<Replaced> write_atomic_with(const Root& root, const LexedPath& path, const Request& request,
                                   bool allow_tmpfile) {
  const std::string& shown = request.path;
  const bool exclusive = request.flag == OpenFlag::WX || request.flag == OpenFlag::WXPlus;
  // Where a replacement cannot be what the caller expects of a write, the caller may write in place
  // instead, as Node would: never when atomicity was insisted on, and never for wx, whose
  // in-place open would create the very name it must not half-fill.
  const bool may_go_in_place = !request.atomic && !exclusive;
  if (path.is_root()) return sys_error(EISDIR, "open", shown);
  auto parent = open_dir_of(root, path, request.durable);
  if (!parent.ok()) return parent.take_error();
  Held& dir = parent.value().dir;
  const std::string& leaf = path.leaf();

  Target target;
  auto checked = check_target(root, dir.look(), leaf, shown, exclusive, &target);
  if (!checked.ok()) return checked.take_error();

  // A new file gets Node's mode (umask applies); a replacement keeps the old file's bits exactly,
  // so a formatter rewriting a 0755 script leaves it executable.
  mode_t keep = target.exists ? (target.st.st_mode & 07777) : 0;
  mode_t create_mode = target.exists      ? (keep & 0777)
                       : request.has_mode ? static_cast<mode_t>(request.mode)
                                          : kDefaultFileMode;
  Temp tmp(root, dir, shown);
  auto created = create_temp(root, tmp, dir, create_mode, allow_tmpfile, shown);
  if (!created.ok()) {
    // The directory takes no new name from us, but the file may still be writable where it is.
    Error& e = created.error();
    if (may_go_in_place && target.exists && e.refusal == Refusal::None &&
        directory_refused(e.err)) {
      return Replaced::InPlace;
    }
    return created.take_error();
  }
  int fd = tmp.fd.get();
  bool needs_mode = false;
  if (target.exists) {
    // One fstat of the temp tells what creation gave it (our ids, or a setgid directory's group;
    // create_mode less the umask), so the usual case needs no fchown and no fchmod.
    struct stat made;
    auto got = fstat_fd(fd, &made, shown);
    if (!got.ok()) return got.take_error();
    bool owner_set = false;
    if (made.st_uid != target.st.st_uid || made.st_gid != target.st.st_gid) {
      // Root rewriting someone's file should not hand it to root. An unprivileged caller cannot
      // give a file away (EPERM): a replacement would then be ours, not its owner's, so the file is
      // written in place as an editor does; when atomicity was insisted on, the replacement is
      // simply ours.
      uid_t uid = made.st_uid != target.st.st_uid ? target.st.st_uid : static_cast<uid_t>(-1);
      gid_t gid = made.st_gid != target.st.st_gid ? target.st.st_gid : static_cast<gid_t>(-1);
      if (::fchown(fd, uid, gid) == 0) {
        owner_set = true;
      } else if (errno != EPERM) {
        return sys_error(errno, "fchown", shown);
      } else if (may_go_in_place) {
        return Replaced::InPlace;
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
  if (request.durable) {
    auto synced = sync_file(fd, shown);
    if (!synced.ok()) return synced.take_error();
  }
  auto published = publish(root, tmp, dir, leaf, target.exists, exclusive, shown);
  if (!published.ok()) return published.take_error();
  if (request.durable) {
    // fsync changes no name: the directory just published in, looked at.
    auto synced = sync_dir(dir.look(), parent.value().can_sync, fd, shown);
    if (!synced.ok()) return synced.take_error();
  }
  return Replaced::Done;
}

Result<Replaced> write_atomic(const Root& root, const LexedPath& path, const Request& request) {
  return write_atomic_with(root, path, request, true);
}

Status create_named_temp(const Root& root, Held& dir, mode_t mode, const std::string& shown, Fd* fd,
                         std::string* name) {
  Temp tmp(root, dir, shown);
  auto made = create_named(root, tmp, dir, mode, shown);
  if (!made.ok()) return made;
  *fd = std::move(tmp.fd);
  *name = tmp.name();
  tmp.published();  // the caller's from here
  return ok_status();
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

void OwnedTemp::drop() {
  if (name_.empty() || published_) return;
  dir_.act(root_, "unlink", shown_, [&](int dirfd) {
    ::unlinkat(dirfd, name_.c_str(), 0);
    return ok_status();
  });
  name_.clear();
}

}  // namespace pinnedfs::ops
