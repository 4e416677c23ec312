// Strategy dispatch and the pieces both strategies share.
#include "resolve.h"

#include <unistd.h>

#include <vector>

#include "../platform/platform.h"
#include "eintr.h"

namespace pinnedfs {

Status fstat_fd(int fd, struct stat* st, const std::string& shown_path) {
  if (::fstat(fd, st) != 0) return sys_error(errno, "fstat", shown_path);
  return ok_status();
}

Error explain_open_failure(int dirfd, const std::string& name, int err, const char* syscall,
                           const std::string& shown_path) {
  // With O_NOFOLLOW a trailing link gives ELOOP; with O_DIRECTORY|O_NOFOLLOW the directory check
  // runs first and a link gives ENOTDIR (Linux and XNU alike). Ask the entry itself which it was.
  if (err == ELOOP || err == ENOTDIR || err == EMLINK) {
    struct stat st;
    if (::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      return symlink_refusal(syscall, shown_path, name);
    }
    if (err == ELOOP) {
      return symlink_refusal(syscall, shown_path, {});
    }
  }
  return sys_error(err, syscall, shown_path);
}

Status on_root_mount(const Root& root, int fd, const std::string& where, const std::string& shown) {
  auto same = same_mount(root, fd, where);
  if (same.ok()) return same;
  Error e = same.take_error();
  e.path = shown;
  return e;
}

Error mount_leaf(const Root& root, int dirfd, const std::string& leaf, Error failed,
                 const std::string& where, const std::string& shown) {
  if (failed.refusal != Refusal::None || failed.err == ENOENT) return failed;
  int fd = retry_eintr([&] { return ::openat(dirfd, leaf.c_str(), kObjectHandleFlags); });
  if (fd < 0) return failed;
  Fd held(fd);
  auto mount = platform::mount_of(held.get());
  if (!mount.ok() || root.mount().same_as(mount.value())) return failed;
  Error e = mount_point(failed.syscall, where, where);
  e.path = shown;
  return e;
}

Result<Fd> open_child(const Root& root, int dirfd, const std::string& name, int flags, mode_t mode,
                      const std::string& shown_path) {
  if (root.strategy() == Strategy::Kernel) {
    return platform::kernel_open(dirfd, name, flags, mode, shown_path);
  }
  int fd = retry_eintr(
      [&] { return ::openat(dirfd, name.c_str(), flags | O_NOFOLLOW | O_CLOEXEC, mode); });
  if (fd < 0) return explain_open_failure(dirfd, name, errno, "openat", shown_path);
  return Fd(fd);
}

Result<LexedPath> prepare_path(const Root& root, std::string_view relative) {
  auto lexed = lex_path(relative);
  if (lexed.ok() && root.links() == Links::Within) {
    return within::prepare(root, lexed.take(), std::string(relative));
  }
  if (!lexed.ok() || !lexed.value().has_dotdot) return lexed;
  LexedPath in = lexed.take();
  // Walk with a stack of handles so ".." returns to the handle we came from: every component
  // before the last ".." is opened as a real directory (a link there is refused).
  std::vector<Fd> stack;
  std::vector<std::string> names;
  auto top = [&]() { return stack.empty() ? root.fd() : stack.back().get(); };
  std::string shown(relative);
  // Components after the last ".." are never popped, so they need no handle here: the final
  // resolution opens them (and refuses a link there). Opening them would also make "a/../new/x"
  // fail for a "new" that mkdir -p is about to create.
  std::size_t last_dotdot = 0;
  for (std::size_t i = 0; i < in.parts.size(); ++i) {
    if (in.parts[i] == "..") last_dotdot = i;
  }
  for (std::size_t i = 0; i < in.parts.size(); ++i) {
    const std::string& part = in.parts[i];
    if (i > last_dotdot) {
      names.push_back(part);
      continue;
    }
    if (part == "..") {
      // The lexer guarantees the depth never goes negative.
      if (!stack.empty()) stack.pop_back();
      names.pop_back();
      continue;
    }
    bool last = i + 1 == in.parts.size();
    if (last) {
      names.push_back(part);
      break;
    }
    std::string where;
    for (const auto& n : names) where += n + "/";
    where += part;
    auto child = open_child(root, top(), part, kDirHandleFlags, 0, shown);
    if (!child.ok()) {
      // openat2 from a held directory names the mount point relative to it: name it from the root.
      if (child.error().mount) return mount_point(child.error().syscall, shown, where);
      return child.take_error();
    }
    stack.push_back(child.take());
    names.push_back(part);
    if (root.strategy() != Strategy::Kernel) {
      // Refused at the mount point before anything behind it is looked up (openat2 does the same).
      auto same = on_root_mount(root, stack.back().get(), where, shown);
      if (!same.ok()) return same.take_error();
    }
  }
  LexedPath out;
  out.parts = std::move(names);
  out.must_be_dir = in.must_be_dir;
  out.has_dotdot = false;
  return out;
}

Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode) {
  if (path.has_dotdot) return bad_argument("internal: unresolved '..' reached open_beneath");
  int want = flags | (path.must_be_dir ? O_DIRECTORY : 0);
  if (root.links() == Links::Within && within::follows_final(flags) && !path.is_root()) {
    return within::open_final(root, path, want, mode);
  }
  if (root.strategy() == Strategy::Kernel) {
    return platform::kernel_open(root.fd(), path.is_root() ? std::string(".") : path.joined(), want,
                                 mode, path.joined());
  }
  return walk::open_beneath(root, path, want, mode);
}

Result<Fd> strict_open(const Root& root, const LexedPath& path, int want, mode_t mode) {
  if (root.strategy() == Strategy::Kernel) {
    return platform::kernel_open(root.fd(), path.is_root() ? std::string(".") : path.joined(), want,
                                 mode, path.joined());
  }
  return walk::open_beneath(root, path, want, mode);
}

Result<Held> hold_beneath(const Root& root, const LexedPath& path, int flags) {
  if (root.links() == Links::Within && within::follows_final(flags) && !path.is_root()) {
    // A held directory is proven again by its path, so it is held by the link-free one.
    auto real = within::resolve(root, path, true, path.joined());
    if (!real.ok()) return real.take_error();
    auto fd = strict_open(root, real.value(), flags | (real.value().must_be_dir ? O_DIRECTORY : 0));
    if (!fd.ok()) return fd.take_error();
    return Held::from_lookup(root, fd.take(), real.value().joined());
  }
  auto fd = open_beneath(root, path, flags);
  if (!fd.ok()) return fd.take_error();
  return Held::from_lookup(root, fd.take(), path.joined());
}

Result<Held> open_dirs(const Root& root, const LexedPath& path, std::size_t count) {
  if (count == 0) return Held::root(root);
  if (root.strategy() == Strategy::Kernel) {
    std::string rel = path.joined(count);
    auto fd = platform::kernel_open(root.fd(), rel, kDirHandleFlags, 0, rel);
    if (!fd.ok()) return fd.take_error();
    return Held::fresh(fd.take(), std::move(rel));
  }
  return walk::open_dirs(root, path, count);
}

Result<Parent> open_parent(const Root& root, const LexedPath& path) {
  if (path.is_root()) return bad_argument("the root itself has no parent to act in");
  auto dir = open_dirs(root, path, path.parts.size() - 1);
  if (!dir.ok()) return dir.take_error();
  return Parent{dir.take(), path.leaf()};
}

namespace {

// The child could not be opened because it is gone, is a link now, or left mid-lookup: maybe the
// child changed, maybe the parent left the root. Only a proof of the parent tells which.
bool changed_or_gone(const Error& e) {
  if (e.refusal == Refusal::Symlink) return true;
  if (e.refusal == Refusal::Escape) return !e.mount;
  return e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR);
}
}  // namespace

Result<Held> descend(const Root& root, const Held& parent, const std::string& name, int flags,
                     const std::string& shown) {
  std::string rel = parent.rel().empty() ? name : parent.rel() + "/" + name;
  std::size_t depth = 1;
  for (char c : rel) depth += c == '/';
  if (root.strategy() == Strategy::Kernel && depth <= kLookupDepth) {
    auto fd = platform::kernel_open(root.fd(), rel, flags, 0, shown);
    if (fd.ok()) return Held::fresh(fd.take(), std::move(rel));
    if (changed_or_gone(fd.error()) && !parent.is_root()) {
      auto still = prove_beneath(root, parent.look(), nullptr, parent.rel(), "openat2", shown);
      if (!still.ok()) return still.take_error();
    }
    return fd.take_error();
  }
  // An unproven child: proven before anything is done through it.
  auto fd = open_child(root, parent.look(), name, flags, 0, shown);
  if (!fd.ok()) return fd.take_error();
  if (root.strategy() != Strategy::Kernel) {
    auto same = same_mount(root, fd.value().get(), shown);
    if (!same.ok()) return same.take_error();
  }
  return Held::unproven(fd.take(), std::move(rel));
}

// ---- links within the root (Links::Within) ------------------------------------------------------
//
// The resolution Go's os.Root and libpathrs's O_PATH resolver do: one component at a time, each
// opened no-follow from a directory already held; a link met is read where it stands (readlinkat
// on the held parent) and its text pushed in front of the components still to resolve; ".." goes
// back to the held directory it came from (never an open of ".."), and one that would climb above
// the root is refused, as is an absolute link text (both would leave the root, as openat2's
// RESOLVE_BENEATH says); at most kMaxLinks links on one path. Every directory entered is checked
// against the root's mount before anything in it is looked up. The answer is the link-free path
// of what was reached, so everything after it (the operation's own strict lookup, the proofs of
// held directories, the names in errors of listings) works on a path with no link in it: a link
// changed in between makes that lookup refuse it, never follow it out.
namespace within {

namespace {

// Linux's MAXSYMLINKS, and what openat2 allows on one lookup.
constexpr int kMaxLinks = 40;

Error escape(const std::string& shown, const std::string& why) {
  return refusal(Refusal::Escape, "readlinkat", shown, why, EXDEV);
}

std::string join(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : "/") + n;
  return out;
}

// The text of the link `name` in `dirfd`: 0 and the text, or an errno (EINVAL: not a link).
int read_link(int dirfd, const std::string& name, std::string* text) {
  std::string buf(kPathMax, '\0');
  ssize_t n = retry_eintr([&] { return ::readlinkat(dirfd, name.c_str(), &buf[0], buf.size()); });
  if (n < 0) return errno;
  if (static_cast<std::size_t>(n) >= buf.size()) return ENAMETOOLONG;
  buf.resize(static_cast<std::size_t>(n));
  *text = std::move(buf);
  return 0;
}

}  // namespace

bool follows_final(int flags) {
#if defined(O_PATH)
  if (flags & O_PATH) return false;
#else
  // Without O_PATH the object handle (stat, readLink, exists) is a read-only open: the link itself.
  if ((flags | O_DIRECTORY) == (kObjectHandleFlags | O_DIRECTORY)) return false;
#endif
  return (flags & O_ACCMODE) == O_RDONLY && (flags & (O_CREAT | O_TRUNC)) == 0;
}

Result<LexedPath> resolve(const Root& root, const LexedPath& in, bool follow_final,
                          const std::string& shown) {
  std::vector<Fd> held;  // held[i]: the directory names[0..i] reached
  std::vector<std::string> names;
  std::vector<std::string> todo(in.parts.rbegin(), in.parts.rend());  // next component at the back
  int links = 0;
  while (!todo.empty()) {
    std::string part = std::move(todo.back());
    todo.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      if (names.empty()) return escape(shown, "a symbolic link's '..' leads above the root");
      names.pop_back();
      held.pop_back();
      continue;
    }
    int dirfd = held.empty() ? root.fd() : held.back().get();
    std::string here = names.empty() ? part : join(names) + "/" + part;
    bool last = todo.empty();
    bool is_link = false;
    if (!last) {
      auto dir = open_child(root, dirfd, part, kDirHandleFlags, 0, shown);
      if (dir.ok()) {
        if (root.strategy() != Strategy::Kernel) {
          auto same = on_root_mount(root, dir.value().get(), here, shown);
          if (!same.ok()) return same.take_error();
        }
        held.push_back(dir.take());
        names.push_back(std::move(part));
        continue;
      }
      Error e = dir.take_error();
      // openat2 from a held directory names the mount point relative to it: name it from the root.
      if (e.mount) return mount_point(e.syscall, shown, here);
      if (e.refusal != Refusal::Symlink) {
        // A missing directory with nothing to climb back through is for the operation to create
        // or report (mkdir -p); the rest is left as asked.
        bool climbs = false;
        for (const auto& t : todo) climbs = climbs || t == "..";
        if (e.refusal != Refusal::None || e.err != ENOENT || climbs) return e;
        names.push_back(std::move(part));
        while (!todo.empty()) {
          if (!todo.back().empty() && todo.back() != ".") names.push_back(std::move(todo.back()));
          todo.pop_back();
        }
        break;
      }
      is_link = true;
    } else if (follow_final) {
      struct stat st;
      is_link =
          ::fstatat(dirfd, part.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
    }
    if (!is_link) {
      names.push_back(std::move(part));
      break;
    }
    if (++links > kMaxLinks) {
      Error e = symlink_refusal("readlinkat", shown, {});
      e.description = "too many levels of symbolic links (more than 40 on one path)";
      return e;
    }
    std::string text;
    int err = read_link(dirfd, part, &text);
    if (err == EINVAL) return symlink_refusal("readlinkat", shown, here);  // changed under us
    if (err != 0) return sys_error(err, "readlinkat", shown);
    if (text.empty()) return sys_error(ENOENT, "readlinkat", shown);
    if (text[0] == '/') {
      return escape(shown,
                    "'" + here + "' is a symbolic link to an absolute path, which leaves the root");
    }
    // The link's components go in front of the rest, first one last (todo's back is next).
    std::vector<std::string> pieces;
    for (std::size_t from = 0; from <= text.size();) {
      std::size_t slash = text.find('/', from);
      if (slash == std::string::npos) slash = text.size();
      pieces.push_back(text.substr(from, slash - from));
      from = slash + 1;
    }
    todo.insert(todo.end(), pieces.rbegin(), pieces.rend());
  }
  auto out = lex_path(join(names));
  if (!out.ok()) return out.take_error();
  LexedPath path = out.take();
  path.must_be_dir = in.must_be_dir;
  return path;
}

Result<LexedPath> prepare(const Root& root, LexedPath lexed, const std::string& shown) {
  if (!lexed.has_dotdot && lexed.parts.size() <= 1) return lexed;
  if (root.strategy() == Strategy::Kernel && !lexed.has_dotdot) {
    // One confined lookup tells whether the directories on the way hold a link at all; only a path
    // that does pays for the resolution one component at a time.
    auto dirs = platform::kernel_open(root.fd(), lexed.joined(lexed.parts.size() - 1),
                                      kDirHandleFlags, 0, shown);
    if (dirs.ok() || dirs.error().refusal != Refusal::Symlink) return lexed;
  }
  return resolve(root, lexed, false, shown);
}

Result<Fd> open_final(const Root& root, const LexedPath& path, int want, mode_t mode) {
  if (root.strategy() == Strategy::Kernel && platform::kernel_follows_within()) {
    // The path has no link on the way any more (prepare); the kernel follows a final one, confined.
    return platform::kernel_open_within(root.fd(), path.joined(), want, mode, path.joined());
  }
  auto real = resolve(root, path, true, path.joined());
  if (!real.ok()) return real.take_error();
  return strict_open(root, real.value(), want | (real.value().must_be_dir ? O_DIRECTORY : 0), mode);
}

}  // namespace within
// ---- end of links within the root
// -----------------------------------------------------------------

}  // namespace pinnedfs
