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

#include <algorithm>
#include <utility>

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

thread_local std::uint64_t entries_read = 0;

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

// Directory names one pass may take to visit later, per directory and in all: a pass stops once it
// has its share, so a wide directory is read a bounded slice at a time, never whole per
// subdirectory.
constexpr std::size_t kPassDirs = 1024;
constexpr std::size_t kMaxPending = 16384;
// Files one pass unlinks: it stops there (the next pass goes on), so its list stays small.
constexpr std::size_t kPassFiles = 1024;

struct Pass {
  std::vector<std::string> dirs;  // subdirectories to visit, the last first
  bool complete = false;          // read to the end: nothing was left unread
};

// One pass over the directory open at `cur`, from its start: every entry that is not a directory
// unlinked (up to kPassFiles), the names of up to `room` directories answered in `pass->dirs`.
// What a pass leaves (its share taken) the next pass meets: entries removed do not come back, so
// each is read about once.
Status one_pass(int cur, std::uint64_t dev, const std::string& shown, std::vector<char>& buffer,
                std::size_t room, Pass* pass) {
  pass->dirs.clear();
  pass->complete = false;
  if (::lseek(cur, 0, SEEK_SET) < 0) return sys_error(errno, "lseek", shown);
  DirectoryReader reader(cur, buffer);
  std::string_view entry;
  unsigned char type = DT_UNKNOWN;
  std::vector<std::string> files;
  bool full = false;
  while (!full && reader.next(&entry, &type)) {
    ++entries_read;
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
        pass->dirs.push_back(std::move(name));
        full = pass->dirs.size() >= room;
        continue;
      }
    }
    files.push_back(std::move(name));
    full = files.size() >= kPassFiles;
  }
  if (reader.error() != 0) return sys_error(reader.error(), "getdents64", shown);
  pass->complete = !full;
  for (const std::string& f : files) {
    auto gone = unlink_entry(cur, f, shown + "/" + f);
    if (!gone.ok()) return gone;
  }
  return ok_status();
}

// A directory on the way down: its identity, its name in the one above, what is left to visit.
struct Level {
  Identity id;
  std::string name;
  std::vector<std::string> pending;
};

// The traveller: one descriptor down the tree and back, the levels above it, and the people's
// name of where it is (grown only up to a page: nothing ever opens it).
struct Purge {
  Purge(const Root& a, const std::string& t, std::uint64_t d) : anchor(a), top(t), dev(d) {}
  const Root& anchor;
  const std::string& top;
  std::uint64_t dev;
  Fd cur;
  std::vector<Level> stack;
  std::vector<char> buffer = std::vector<char>(32768);
  std::string shown;
  std::size_t shown_depth = 1;
  std::size_t pending = 0;  // names in all the levels' pending lists
  int regrown = 0;

  Status enter(Fd fd, std::string name, const std::string& where) {
    struct stat st;
    if (::fstat(fd.get(), &st) != 0) return sys_error(errno, "fstat", where);
    if (stack.size() >= kMaxPurgeDepth) {
      return stop(
          ELOOP, "purge", shown,
          "the temporary root is deeper than " + std::to_string(kMaxPurgeDepth) + " levels");
    }
    stack.push_back(Level{identity_of(st), std::move(name), {}});
    cur = std::move(fd);
    if (stack.size() > 1 && shown.size() < 4096) {
      shown = where;
      shown_depth = stack.size();
    }
    return ok_status();
  }

  // Down into the next directory left to visit at this level (false: none is left).
  Result<bool> down() {
    Level& here = stack.back();
    if (here.pending.empty()) return false;
    std::string name = std::move(here.pending.back());
    here.pending.pop_back();
    --pending;
    std::string where = shown + "/" + name;
    auto child = open_listing(cur.get(), name, dev, where);
    if (!child.ok()) {
      if (child.error().err == ENOENT) return true;  // gone meanwhile: nothing to remove
      return child.take_error();
    }
    auto entered = enter(child.take(), std::move(name), where);
    if (!entered.ok()) return entered.take_error();
    return true;
  }

  // This level, emptied, removed from the one above (up by "..", which must be that one). An
  // ENOTEMPTY (something added meanwhile) is met again from above, boundedly.
  Status up() {
    Level done = std::move(stack.back());
    stack.pop_back();
    int fd = retry_eintr([&] { return ::openat(cur.get(), "..", kListFlags & ~O_NOFOLLOW); });
    if (fd < 0) return sys_error(errno, "openat", shown + "/..");
    Fd parent(fd);
    struct stat ps;
    if (::fstat(fd, &ps) != 0) return sys_error(errno, "fstat", shown);
    if (identity_of(ps) != stack.back().id) {
      return refusal(Refusal::Escape, "purge", shown,
                     "'" + shown + "' was moved while it was being purged: stopped", EXDEV);
    }
    auto removed = rmdir_entry(fd, done.name, done.id, shown);
    pending -= done.pending.size();
    cur = std::move(parent);
    if (shown_depth == stack.size() + 1) {
      shown.resize(shown.rfind('/'));
      shown_depth -= 1;
    }
    if (!removed.ok() && removed.error().err != ENOENT) {
      if (removed.error().err != ENOTEMPTY || ++regrown >= kMaxRegrown) return removed;
    }
    return ok_status();
  }

  // The top itself, emptied: removed from the anchor, or (regrown) listed again.
  Result<bool> finish() {
    cur.reset();
    auto removed = rmdir_entry(anchor.fd(), top, stack.back().id, top);
    if (removed.ok() || removed.error().err == ENOENT) return true;
    if (removed.error().err != ENOTEMPTY || ++regrown >= kMaxRegrown) return removed.take_error();
    auto again = open_listing(anchor.fd(), top, dev, top);
    if (!again.ok()) return again.take_error();
    cur = again.take();
    return false;
  }

  Status run() {
    Pass pass;
    for (;;) {
      auto went = down();
      if (!went.ok()) return went.take_error();
      if (went.value()) continue;
      // Nothing left to visit here: a pass finds what remains.
      std::size_t room = std::max<std::size_t>(1, std::min(kPassDirs, kMaxPending - pending));
      auto listed = one_pass(cur.get(), dev, shown, buffer, room, &pass);
      if (!listed.ok()) return listed;
      if (!pass.dirs.empty() || !pass.complete) {
        pending += pass.dirs.size();
        stack.back().pending = std::move(pass.dirs);
        continue;
      }
      if (stack.size() > 1) {
        auto climbed = up();
        if (!climbed.ok()) return climbed;
        continue;
      }
      auto finished = finish();
      if (!finished.ok()) return finished.take_error();
      if (finished.value()) return ok_status();
    }
  }
};

}  // namespace

#ifdef PINNEDFS_TEST_HOOKS
std::uint64_t purge_entries_read() {
  return std::exchange(entries_read, 0);
}
#endif

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
  Purge p(anchor, name, dev);
  p.shown = name;
  auto entered = p.enter(top.take(), name, name);
  if (!entered.ok()) return entered;
  // The top must still be the directory named: its removal checks this identity again.
  if (p.stack.back().id != identity) {
    return refusal(Refusal::IdentityChanged, "purge", name,
                   "'" + name + "' was replaced while it was being purged", EBUSY);
  }
  return p.run();
}

}  // namespace pinnedfs::confine
