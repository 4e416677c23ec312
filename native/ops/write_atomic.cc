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
#include <sys/stat.h>
#include <unistd.h>

#include "../core/cancel.h"
#include "../core/eintr.h"
#include "temp.h"
#include "write.h"

namespace pinnedfs::ops {

namespace {

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

// A directory that will not take a new entry from us (no write permission on it): a replacement
// cannot be made there, and an in-place write of an existing file may still be allowed.
bool directory_refused(int err) {
  return err == EACCES || err == EPERM;
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

// Publishes the complete temp file as `leaf` (OwnedTemp::publish proves the directory beneath the
// root again before each name it writes: the write took time). `exclusive`: only where nothing has
// the name (EEXIST otherwise).
Status publish(OwnedTemp& tmp, const std::string& leaf, bool target_existed, bool exclusive,
               const std::string& shown) {
  // The last moment an abort can still leave the old content: the temporary is dropped unpublished.
  if (cancelled()) return cancelled_error("rename", shown);
  // Nothing stood there: an anonymous file is linked straight to the name, atomically create-only.
  // If something appeared since the check (EEXIST), wx fails as open(O_EXCL) would (the publish
  // below is create-only too); w goes on through a random name and replaces it.
  if (tmp.anonymous() && !target_existed && !exclusive) {
    auto linked = tmp.publish(leaf, true);
    if (linked.ok() || linked.error().err != EEXIST || linked.error().refusal != Refusal::None) {
      return linked;
    }
  }
  return tmp.publish(leaf, exclusive);
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
  auto checked = check_target(root, dir.look(), leaf, "open", shown, exclusive, &target);
  if (!checked.ok()) return checked.take_error();

  // A new file gets Node's mode (umask applies); a replacement keeps the old file's bits exactly,
  // so a formatter rewriting a 0755 script leaves it executable.
  mode_t keep = target.exists ? (target.st.st_mode & 07777) : 0;
  mode_t create_mode = target.exists      ? (keep & 0777)
                       : request.has_mode ? static_cast<mode_t>(request.mode)
                                          : kDefaultFileMode;
  OwnedTemp tmp(root, dir, shown);
  auto created = tmp.create(create_mode, allow_tmpfile);
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
  auto published = publish(tmp, leaf, target.exists, exclusive, shown);
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

}  // namespace pinnedfs::ops
