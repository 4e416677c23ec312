// purge: the private temporary root removed whole, whatever the child left in it (see confine.h).
//
// The root is the child's own scratch, so its content is not data anyone else owns: what stands in
// the way is repaired rather than reported. A directory the child closed (chmod 000, 0555, no x)
// is given its owner's rwx on its own handle, and the removal goes on. Depth costs no recursion
// and no path: one descriptor travels the tree (down by openat of a child from its parent's
// handle, up by ".." whose identity must be the parent recorded on the way down), so a tree
// thousands of levels deep, or deeper than PATH_MAX, is removed like a shallow one; the stack of
// identities and names is the only memory that grows with depth, bounded by kMaxPurgeDepth.
//
// Never followed: a link is an entry, unlinked. Never crossed: an entry on another device than the
// root's stops the purge, refused, with what was removed before it staying removed. A directory
// met again not empty (something added meanwhile) is emptied again, a bounded number of times.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "../core/resolve.h"
#include "../platform/platform.h"
#include "confine.h"

namespace pinnedfs::confine {

namespace {

constexpr std::size_t kMaxPurgeDepth = std::size_t{1} << 20;
// How many times, in all, a directory emptied may be found not empty when it is removed.
constexpr int kMaxRegrown = 4096;
constexpr int kListFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;

struct Level {
  Identity parent;   // the directory the child below was opened from
  std::string name;  // the child's name in it
};

Error stop(int err, const char* syscall, const std::string& shown, const std::string& why) {
  Error e = sys_error(err, syscall, shown);
  e.description = why;
  return e;
}

// Opens directory `name` of `dir` for listing; one closed to its owner (EACCES) is first given its
// owner's rwx, through an O_PATH handle checked to be a directory on `dev`.
Result<Fd> open_listing(int dir, const std::string& name, std::uint64_t dev,
                        const std::string& shown) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    int fd = retry_eintr([&] { return ::openat(dir, name.c_str(), kListFlags); });
    if (fd >= 0) return Fd(fd);
    if (errno != EACCES || attempt > 0) return sys_error(errno, "openat", shown);
    int handle = retry_eintr([&] { return ::openat(dir, name.c_str(), kDirHandleFlags); });
    if (handle < 0) return sys_error(errno, "openat", shown);
    Fd h(handle);
    struct stat st;
    if (::fstat(handle, &st) != 0) return sys_error(errno, "fstat", shown);
    if (!S_ISDIR(st.st_mode) || static_cast<std::uint64_t>(st.st_dev) != dev) {
      return stop(EXDEV, "openat", shown,
                  "'" + shown + "' is not a directory of the temporary root's file system");
    }
    auto moded = attr::change_mode(handle, (st.st_mode & 07777) | 0700, shown);
    if (!moded.ok()) return moded.take_error();
  }
  return sys_error(EACCES, "openat", shown);
}

// Gives the directory open at `fd` its owner's rwx (an unlink or rmdir in it was refused).
Status open_up(int fd, const std::string& shown) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return sys_error(errno, "fstat", shown);
  if ((st.st_mode & 0700) == 0700)
    return sys_error(EACCES, "unlinkat", shown);  // not a mode problem
  if (retry_eintr([&] { return ::fchmod(fd, (st.st_mode & 07777) | 0700); }) != 0)
    return sys_error(errno, "fchmod", shown);
  return ok_status();
}

// Removes entry `name` of `dir` (not a directory), repairing `dir`'s mode once if it is in the way.
Status unlink_entry(int dir, const std::string& name, const std::string& shown) {
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (retry_eintr([&] { return ::unlinkat(dir, name.c_str(), 0); }) == 0 || errno == ENOENT)
      return ok_status();
    if ((errno != EACCES && errno != EPERM) || attempt > 0)
      return sys_error(errno, "unlinkat", shown);
    auto opened = open_up(dir, shown);
    if (!opened.ok()) return opened;
  }
  return ok_status();
}

// Removes directory `name` of `parent` if it is still `identity` (and empty).
Status rmdir_entry(int parent, const std::string& name, const Identity& identity,
                   const std::string& shown) {
  struct stat st;
  if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return sys_error(errno, "fstatat", shown);
  if (identity_of(st) != identity) {
    return refusal(Refusal::IdentityChanged, "rmdir", shown,
                   "'" + shown + "' was replaced while it was being purged", EBUSY);
  }
  for (int attempt = 0; attempt < 2; ++attempt) {
    if (retry_eintr([&] { return ::unlinkat(parent, name.c_str(), AT_REMOVEDIR); }) == 0)
      return ok_status();
    if ((errno != EACCES && errno != EPERM) || attempt > 0) return sys_error(errno, "rmdir", shown);
    auto opened = open_up(parent, shown);
    if (!opened.ok()) return opened;
  }
  return ok_status();
}

// One pass over the directory open at `cur`: every entry that is not a directory unlinked; the
// name of the first directory met answered in `below` (empty when there is none).
Status empty_files(int cur, std::uint64_t dev, const std::string& shown, std::vector<char>& buffer,
                   std::string* below) {
  below->clear();
  if (::lseek(cur, 0, SEEK_SET) < 0) return sys_error(errno, "lseek", shown);
  DirectoryReader reader(cur, buffer);
  std::string_view entry;
  unsigned char type = DT_UNKNOWN;
  std::vector<std::string> files;
  while (reader.next(&entry, &type)) {
    std::string name(entry);
    if (type == DT_DIR || type == DT_UNKNOWN) {
      struct stat st;
      if (::fstatat(cur, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        if (errno == ENOENT) continue;
        return sys_error(errno, "fstatat", shown + "/" + name);
      }
      if (S_ISDIR(st.st_mode)) {
        if (static_cast<std::uint64_t>(st.st_dev) != dev) {
          return stop(EXDEV, "purge", shown + "/" + name,
                      "'" + shown + "/" + name + "' is a mount point: not purged");
        }
        if (below->empty()) *below = name;
        continue;
      }
    }
    files.push_back(std::move(name));
  }
  if (reader.error() != 0) return sys_error(reader.error(), "getdents64", shown);
  for (const std::string& f : files) {
    auto gone = unlink_entry(cur, f, shown + "/" + f);
    if (!gone.ok()) return gone;
  }
  return ok_status();
}

}  // namespace

Status purge(const Root& anchor, const std::string& name, const Identity& identity) {
  if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
    return bad_argument("a purge names one directory of its anchor", name);
  }
  struct stat st;
  if (::fstatat(anchor.fd(), name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0)
    return sys_error(errno, "fstatat", name);
  if (!S_ISDIR(st.st_mode) || identity_of(st) != identity) {
    return refusal(Refusal::IdentityChanged, "purge", name,
                   "'" + name + "' is no longer the directory this launch made (" + identity.str() +
                       " is now " + identity_of(st).str() + ")",
                   EBUSY);
  }
  const std::uint64_t dev = static_cast<std::uint64_t>(st.st_dev);
  auto top = open_listing(anchor.fd(), name, dev, name);
  if (!top.ok()) return top.take_error();
  Fd cur = top.take();
  std::vector<Level> stack;
  std::vector<char> buffer(32768);
  // The place for people, grown only up to a page: nothing ever opens it.
  std::string shown = name;
  std::size_t shown_depth = 0;
  int regrown = 0;
  for (;;) {
    std::string below;
    auto emptied = empty_files(cur.get(), dev, shown, buffer, &below);
    if (!emptied.ok()) return emptied;
    struct stat here;
    if (::fstat(cur.get(), &here) != 0) return sys_error(errno, "fstat", shown);
    if (!below.empty()) {
      if (stack.size() >= kMaxPurgeDepth) {
        return stop(
            ELOOP, "purge", shown,
            "the temporary root is deeper than " + std::to_string(kMaxPurgeDepth) + " levels");
      }
      auto child = open_listing(cur.get(), below, dev, shown + "/" + below);
      if (!child.ok()) return child.take_error();
      stack.push_back(Level{identity_of(here), below});
      cur = child.take();
      if (shown.size() < 4096) {
        shown += "/" + below;
        shown_depth = stack.size();
      }
      continue;
    }
    if (stack.empty()) {
      cur.reset();
      auto removed = rmdir_entry(anchor.fd(), name, identity, name);
      if (removed.ok() || removed.error().err == ENOENT) return ok_status();
      if (removed.error().err != ENOTEMPTY || ++regrown >= kMaxRegrown) return removed;
      auto again = open_listing(anchor.fd(), name, dev, name);
      if (!again.ok()) return again.take_error();
      cur = again.take();
      continue;
    }
    // Empty: up by "..", which must be the directory this one was opened from.
    int up = retry_eintr([&] { return ::openat(cur.get(), "..", kListFlags & ~O_NOFOLLOW); });
    if (up < 0) return sys_error(errno, "openat", shown + "/..");
    Fd parent(up);
    struct stat ps;
    if (::fstat(up, &ps) != 0) return sys_error(errno, "fstat", shown);
    const Level& level = stack.back();
    if (identity_of(ps) != level.parent) {
      return refusal(Refusal::Escape, "purge", shown,
                     "'" + shown + "' was moved while it was being purged: stopped", EXDEV);
    }
    auto removed = rmdir_entry(up, level.name, identity_of(here), shown);
    cur = std::move(parent);
    if (!removed.ok() && removed.error().err != ENOENT) {
      // Something was added to it meanwhile: it is met again from its parent, boundedly.
      if (removed.error().err != ENOTEMPTY || ++regrown >= kMaxRegrown) return removed;
    }
    if (shown_depth == stack.size()) {
      shown.resize(shown.rfind('/'));
      shown_depth -= 1;
    }
    stack.pop_back();
  }
}

}  // namespace pinnedfs::confine
