// Compare-and-swap on one file: replaceIfUnchanged and removeIfUnchanged act on the file the caller
// read, or not at all. A check by name followed by an act by name (stat, then write or unlink)
// loses whatever another process wrote in between; here the check and the act are tied to one
// inode, and the act is undone when the inode changed before it took effect.
//
// Both hold the current file open (no link followed, beneath the root, a regular single-link file
// on the root's mount) and check it against the caller's expectation: its content, byte for byte,
// and/or its dev:ino. Then the act moves the name, never the data:
//   replace  a complete temporary beside it (write_atomic's named temp) is exchanged with it
//            (renameat2 RENAME_EXCHANGE; macOS renameatx_np RENAME_SWAP);
//   remove   it is renamed aside to a fresh random name (RENAME_NOREPLACE).
// After the move the old file has a private name, and the check runs again on it: the name must
// lead to the held inode, and that inode must still be as expected. A write that landed between
// the first check and the move is caught there, and the move is undone (exchanged back, renamed
// back without replacing). Only then is the old file unlinked.
//
// The window that remains (docs/dev.md, "Compare-and-swap"): a process that already holds the old
// file open for writing can still write into it after the second check; those bytes go to an inode
// that is then unlinked. That is what every editor's save by rename does to such a writer, and the
// caller is told success. A writer that opens by name after the move writes the new file (replace)
// or creates a new one (remove), which is kept.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <string>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "fileops.h"
#include "temp.h"
#include "unchanged.h"
#include "write.h"

namespace pinnedfs::ops {

#ifdef PINNEDFS_TEST_HOOKS
void (*unchanged_test_hook)(UnchangedPhase) = nullptr;
#endif

namespace {

void at_phase(UnchangedPhase phase) {
#ifdef PINNEDFS_TEST_HOOKS
  if (unchanged_test_hook != nullptr) unchanged_test_hook(phase);
#else
  (void)phase;
#endif
}

Error changed(const char* syscall, const std::string& shown, const std::string& why) {
  return refusal(Refusal::Changed, syscall, shown,
                 "the file changed since it was read (" + why + "): left as it is", EBUSY);
}

// Whether `fd` holds exactly `expect`: its size, then its bytes from offset 0, then nothing more.
Result<bool> holds(int fd, const std::string& expect, const std::string& shown) {
  struct stat st;
  auto got = fstat_fd(fd, &st, shown);
  if (!got.ok()) return got.take_error();
  if (static_cast<std::uint64_t>(st.st_size) != expect.size()) return false;
  std::string chunk(std::min<std::size_t>(expect.size() + 1, 1 << 16), '\0');
  std::size_t at = 0;
  for (;;) {
    ssize_t n = retry_eintr([&] { return ::pread(fd, &chunk[0], chunk.size(), at); });
    if (n < 0) return sys_error(errno, "read", shown);
    if (n == 0) return at == expect.size();
    std::size_t got_bytes = static_cast<std::size_t>(n);
    if (at + got_bytes > expect.size()) return false;
    if (expect.compare(at, got_bytes, chunk.data(), got_bytes) != 0) return false;
    at += got_bytes;
  }
}

// The caller's expectation of the held file `fd` (fstat `st`): its identity, its content; without
// a content, its size and modification time as first seen (`first`).
Status as_expected(const Request& request, int fd, const struct stat& st, const struct stat& first,
                   const std::string& shown) {
  if (request.has_expect_identity && identity_of(st) != request.expect_identity) {
    return changed("open", shown, "another file is at its name");
  }
  if (request.has_expect) {
    auto same = holds(fd, request.expect, shown);
    if (!same.ok()) return same.take_error();
    if (!same.value()) return changed("read", shown, "its content differs");
    return ok_status();
  }
#if defined(__APPLE__)
  const struct timespec &now = st.st_mtimespec, &then = first.st_mtimespec;
#else
  const struct timespec &now = st.st_mtim, &then = first.st_mtim;
#endif
  if (st.st_size != first.st_size || now.tv_sec != then.tv_sec || now.tv_nsec != then.tv_nsec) {
    return changed("fstat", shown, "its size or modification time differs");
  }
  return ok_status();
}

// After the move: `name` in the held directory must lead to the held file, still as expected.
Status still_expected(const Request& request, int dirfd, const std::string& name, int fd,
                      const struct stat& first, const std::string& shown) {
  struct stat there;
  if (::fstatat(dirfd, name.c_str(), &there, AT_SYMLINK_NOFOLLOW) != 0) {
    return changed("lstat", shown, "it was moved away meanwhile");
  }
  struct stat now;
  auto got = fstat_fd(fd, &now, shown);
  if (!got.ok()) return got.take_error();
  if (identity_of(there) != identity_of(now)) {
    return changed("rename", shown, "another file took its name meanwhile");
  }
  return as_expected(request, fd, now, first, shown);
}

struct Current {
  Parent parent;
  Fd fd;
  struct stat st;
};

// The parent held, the current file held open and checked against the caller's expectation.
Result<Current> hold_current(const Root& root, const Request& request, const char* syscall) {
  const std::string& shown = request.path;
  auto path = prepare_path(root, shown);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) {
    return bad_argument(std::string(syscall) + " acts on a file, never on the pinned root itself",
                        shown);
  }
  auto parent = held_parent(root, path.value(), syscall, shown);
  if (!parent.ok()) return parent.take_error();
  Current current{parent.take(), Fd(), {}};
  auto fd =
      open_copy_source(root, current.parent.dir.look(), current.parent.leaf, shown, &current.st);
  if (!fd.ok()) return fd.take_error();
  current.fd = fd.take();
  auto expected = as_expected(request, current.fd.get(), current.st, current.st, shown);
  if (!expected.ok()) return expected.take_error();
  return current;
}

Status exchange(const Root& root, Held& dir, const std::string& a, const std::string& b,
                const std::string& shown) {
  return dir.act(root, "rename", shown, [&](int dirfd) -> Status {
    if (platform::rename_exchange(dirfd, a.c_str(), dirfd, b.c_str()) != 0) {
      return sys_error(errno, "rename", shown);
    }
    return ok_status();
  });
}

// A rename in the held directory that never replaces a name: 0, or the errno.
Result<int> move_noreplace(const Root& root, Held& dir, const std::string& from,
                           const std::string& to, const std::string& shown) {
  return dir.act(root, "rename", shown, [&](int dirfd) -> Result<int> {
    return platform::rename_noreplace(dirfd, from.c_str(), dirfd, to.c_str()) == 0 ? 0 : errno;
  });
}

// The refusal `e`, where the undo could not be made: the other version keeps `name`, which is no
// longer ours to unlink, and the refusal says where it is.
Error kept_beside(Error e, OwnedTemp& name, const char* why) {
  std::string kept = name.name();
  name.release();
  e.description += std::string("; ") + why + ", and it is kept beside it as '" + kept + "'";
  return e;
}

// The new content, complete, under a temporary name beside the target: the target's owner where
// we may give it, `mode` exactly, synced for a durable write.
Status make_replacement(Current& current, const Request& request, mode_t mode, OwnedTemp& temp) {
  const std::string& shown = request.path;
  auto made = temp.create_named(mode & 0777);
  if (!made.ok()) return made;
  int fd = temp.fd.get();
  // Root restoring someone's file should not hand it to root; an unprivileged caller cannot give a
  // file away (EPERM), and the replacement is then its own.
  if ((current.st.st_uid != ::geteuid() || current.st.st_gid != ::getegid()) &&
      ::fchown(fd, current.st.st_uid, current.st.st_gid) != 0 && errno != EPERM) {
    return sys_error(errno, "fchown", shown);
  }
  auto wrote = write_all(fd, request.data, shown);
  if (!wrote.ok()) return wrote;
  if (::fchmod(fd, mode) != 0) return sys_error(errno, "fchmod", shown);
  if (request.durable) return sync_file(fd, shown);
  return ok_status();
}

}  // namespace

Result<Value> replace_if_unchanged(const Root& root, const Request& request) {
  const std::string& shown = request.path;
  auto held = hold_current(root, request, "rename");
  if (!held.ok()) return held.take_error();
  Current& current = held.value();
  Held& dir = current.parent.dir;
  const std::string& leaf = current.parent.leaf;
  const mode_t mode = request.has_mode ? static_cast<mode_t>(request.mode)
                                       : static_cast<mode_t>(current.st.st_mode & 07777);
  OwnedTemp temp(root, dir, shown);
  auto made = make_replacement(current, request, mode, temp);
  if (!made.ok()) return made.take_error();
  at_phase(UnchangedPhase::BeforeMove);
  auto swapped = exchange(root, dir, temp.name(), leaf, shown);
  if (!swapped.ok()) return swapped.take_error();
  at_phase(UnchangedPhase::AfterMove);
  // The old file now has the temporary's name; the temporary is published.
  auto still =
      still_expected(request, dir.look(), temp.name(), current.fd.get(), current.st, shown);
  if (!still.ok()) {
    // Neither version is lost: when the exchange back fails, the other keeps the temporary's name.
    auto back = exchange(root, dir, temp.name(), leaf, shown);
    if (!back.ok()) return kept_beside(still.take_error(), temp, "it could not be put back");
    return still.take_error();
  }
  // The old file goes with the temporary's name (OwnedTemp).
  if (request.durable) {
    if (::fsync(dir.look()) != 0 && errno != EINVAL) {
#if defined(__linux__)
      if (::syncfs(temp.fd.get()) != 0) return sys_error(errno, "syncfs", shown);
#endif
    }
  }
  return Value(std::monostate{});
}

Result<Value> remove_if_unchanged(const Root& root, const Request& request) {
  const std::string& shown = request.path;
  auto held = hold_current(root, request, "unlink");
  if (!held.ok()) return held.take_error();
  Current& current = held.value();
  Held& dir = current.parent.dir;
  const std::string& leaf = current.parent.leaf;
  at_phase(UnchangedPhase::BeforeMove);
  OwnedTemp aside(root, dir, shown);
  for (int attempt = 0; aside.name().empty(); ++attempt) {
    std::string name = random_temp_name();
    auto moved = move_noreplace(root, dir, leaf, name, shown);
    if (!moved.ok()) return moved.take_error();
    if (moved.value() == 0)
      aside.adopt(std::move(name));
    else if (moved.value() != EEXIST || attempt == 15)
      return sys_error(moved.value(), "rename", shown);
  }
  at_phase(UnchangedPhase::AfterMove);
  auto still =
      still_expected(request, dir.look(), aside.name(), current.fd.get(), current.st, shown);
  if (still.ok()) return Value(std::monostate{});  // unlinked with its private name (OwnedTemp)
  // Something that took the name meanwhile stays: the changed file then keeps its private name.
  auto back = move_noreplace(root, dir, aside.name(), leaf, shown);
  if (!back.ok() || back.value() != 0) {
    return kept_beside(still.take_error(), aside, "its name was taken meanwhile");
  }
  aside.release();
  return still.take_error();
}

}  // namespace pinnedfs::ops
