// Strategy dispatch and the pieces both strategies share.
#include "resolve.h"

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
    auto child = open_child(root, top(), part, kDirHandleFlags, 0, shown);
    if (!child.ok()) return child.take_error();
    stack.push_back(child.take());
    names.push_back(part);
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
  if (root.strategy() == Strategy::Kernel) {
    return platform::kernel_open(root.fd(), path.is_root() ? std::string(".") : path.joined(), want,
                                 mode, path.joined());
  }
  return walk::open_beneath(root, path, want, mode);
}

Result<Held> hold_beneath(const Root& root, const LexedPath& path, int flags) {
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

}  // namespace pinnedfs
