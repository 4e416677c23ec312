// readLink, realPath, resolve: the operations that talk about links without following them.
// realPath and resolve answer existing components in their on-disk spelling (platform/platform.h).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "link_text.h"
#include "ops.h"

namespace pinnedfs::ops {

namespace {
// Linux link text is at most PATH_MAX - 1 bytes; the cap only stops a misbehaving file system from
// making us grow without end.
constexpr std::size_t kMaxLinkText = 1 << 20;

Resolution reached(std::string path) {
  return Resolution{std::move(path), false, {}};
}
Resolution link_at(std::string path, std::string target) {
  return Resolution{std::move(path), true, std::move(target)};
}

// A root-relative path built one existing component at a time, each in its on-disk spelling.
struct Spelled {
  std::string path;
  Status add(int dirfd, const std::string& name, const std::string& shown_path) {
    auto stored = on_disk_name(dirfd, name, shown_path);
    if (!stored.ok()) return stored.take_error();
    if (!path.empty()) path.push_back('/');
    path += stored.value();
    return ok_status();
  }
  // This prefix, then the components from `from` on as requested (a missing one stays as asked).
  std::string with_rest(const LexedPath& lexed, std::size_t from) const {
    std::string out = path;
    for (std::size_t i = from; i < lexed.parts.size(); ++i) {
      if (!out.empty()) out.push_back('/');
      out += lexed.parts[i];
    }
    return out;
  }
};
}  // namespace

Result<std::string> read_link_at(int dirfd, const std::string& name, const std::string& shown_path,
                                 std::size_t initial) {
  std::string buf(initial == 0 ? 1 : initial, '\0');
  for (;;) {
    ssize_t n = retry_eintr([&] { return ::readlinkat(dirfd, name.c_str(), &buf[0], buf.size()); });
    if (n < 0) return sys_error(errno, "readlinkat", shown_path);
    // A text that fills the buffer may have been cut short: grow and read again.
    if (static_cast<std::size_t>(n) < buf.size()) {
      buf.resize(static_cast<std::size_t>(n));
      return buf;
    }
    if (buf.size() >= kMaxLinkText) {
      Error e = sys_error(ENAMETOOLONG, "readlinkat", shown_path);
      e.description = "link text longer than " + std::to_string(kMaxLinkText) + " bytes";
      return e;
    }
    buf.resize(buf.size() * 2);
  }
}

Result<Value> read_link(const Root& root, const Request& request) {
  auto prepared = prepare_path(root, request.path);
  if (!prepared.ok()) return prepared.take_error();
  const LexedPath& path = prepared.value();
  if (path.is_root()) {
    Error e = sys_error(EINVAL, "readlink", request.path);
    e.description = "the root is a directory, not a symbolic link";
    return e;
  }
  if (path.must_be_dir) {
    // "x/" asks for a directory through x: a link there is a link met on the way (refused by the
    // no-follow open), and a directory is not a link (EINVAL, as readlink(2) says).
    auto fd = open_beneath(root, path, kObjectHandleFlags);
    if (!fd.ok()) return fd.take_error();
    return sys_error(EINVAL, "readlink", request.path);
  }
  // Links on the way are refused by the parent's resolution; readlinkat never follows its leaf. The
  // parent is proven beneath the root first: a link's text read out there would be an outside name.
  auto text = in_parent(
      root, path, "readlink", request.path,
      [&](int dir, const std::string& leaf) { return read_link_at(dir, leaf, request.path); });
  if (!text.ok()) return text.take_error();
  return Value(Text{text.take()});
}

Result<Value> real_path(const Root& root, const Request& request) {
  auto prepared = prepare_path(root, request.path);
  if (!prepared.ok()) return prepared.take_error();
  const LexedPath& path = prepared.value();
  // The pinned handle is the root; nothing to prove.
  if (path.is_root()) return Value(Text{""});
  // Proves the path exists with no link on the way; O_PATH|O_NOFOLLOW opens a trailing link as
  // itself (never what it names), and the fstat refuses it: nothing may be followed, not even last.
  auto fd = open_beneath(root, path, kObjectHandleFlags);
  if (!fd.ok()) return fd.take_error();
  struct stat st;
  if (::fstat(fd.value().get(), &st) != 0) return sys_error(errno, "fstat", request.path);
  if (S_ISLNK(st.st_mode)) {
    return symlink_refusal("realpath", request.path, path.leaf());
  }
  if (!kSpellingMayDiffer) return Value(Text{path.joined()});
  // Where names fold (macOS), ask each component's stored name, walking again by handle.
  Spelled spelled;
  DirRef cur = DirRef::borrow(root.fd());
  for (std::size_t i = 0; i < path.parts.size(); ++i) {
    std::string here = path.joined(i + 1);
    auto name = spelled.add(cur.get(), path.parts[i], here);
    if (!name.ok()) return name.take_error();
    if (i + 1 == path.parts.size()) break;
    auto next = open_child(root, cur.get(), path.parts[i], kDirHandleFlags, 0, here);
    if (!next.ok()) return next.take_error();
    cur = DirRef::own(next.take());
  }
  return Value(Text{spelled.path});
}

namespace {

// Component by component from the root, nothing followed: intermediate components are opened as
// directories (a link there is reported, never entered); the leaf is asked with readlinkat, which
// answers a link's text or says it is none, without opening anything.
Result<Value> resolve_by_walk(const Root& root, const LexedPath& path) {
  DirRef cur = DirRef::borrow(root.fd());
  Spelled spelled;
  // The first link, at `name` in `cur`: its text (read, never opened) and its own name spelled.
  auto link_answer = [&](const std::string& name, const std::string& here,
                         Result<std::string> text) -> Result<Value> {
    if (!text.ok()) return text.take_error();
    auto stored = spelled.add(cur.get(), name, here);
    if (!stored.ok()) return stored.take_error();
    return Value(link_at(spelled.path, text.take()));
  };
  for (std::size_t i = 0; i < path.parts.size(); ++i) {
    const std::string& name = path.parts[i];
    std::string here = path.joined(i + 1);
    bool last = i + 1 == path.parts.size();
    if (last && !path.must_be_dir) {
      auto text = read_link_at(cur.get(), name, here);
      if (text.ok()) return link_answer(name, here, std::move(text));
      int err = text.error().err;
      // A missing leaf is answered as requested.
      if (err == ENOENT) return Value(reached(spelled.with_rest(path, i)));
      // EINVAL: it exists and is not a link.
      if (err != EINVAL) return text.take_error();
      auto stored = spelled.add(cur.get(), name, here);
      if (!stored.ok()) return stored.take_error();
      return Value(reached(spelled.path));
    }
    auto next = open_child(root, cur.get(), name, kDirHandleFlags, 0, here);
    if (next.ok()) {
      auto stored = spelled.add(cur.get(), name, here);
      if (!stored.ok()) return stored.take_error();
      cur = DirRef::own(next.take());
      continue;
    }
    const Error& e = next.error();
    // If it stopped being a link since the open, readlinkat fails (EINVAL) and that failure is
    // the answer: the caller asks again.
    if (e.refusal == Refusal::Symlink) {
      return link_answer(name, here, read_link_at(cur.get(), name, here));
    }
    // A missing component: it and what follows are answered as requested.
    if (e.refusal == Refusal::None && e.err == ENOENT) {
      return Value(reached(spelled.with_rest(path, i)));
    }
    // ENOTDIR (a file on the way), permissions, anything else: an error.
    return next.take_error();
  }
  return Value(reached(spelled.path));  // every component a directory ("a/b/" ended here)
}

#if defined(__linux__)
// One name directly in the root, under openat2: one look (look_in_root) says what the confined
// open, readlinkat and close say in three calls. A name not there is the request as asked (the
// open's ENOENT answer); one that is not a link is reached; a link's text is read by name, and a
// link gone since the look is the answer it would have been a moment later (reached). Unsure
// answers false: the confined open then gives the answer or its own refusal.
bool resolve_in_root(const Root& root, const LexedPath& path, Result<Value>* answer) {
  struct stat st;
  RootLook look = look_in_root(root, path, &st);
  if (look == RootLook::Unsure) return false;
  if (look == RootLook::Missing || !S_ISLNK(st.st_mode)) {
    *answer = Value(reached(path.joined()));
    return true;
  }
  auto text = read_link_at(root.fd(), path.leaf(), path.joined());
  if (text.ok()) {
    *answer = Value(link_at(path.joined(), text.take()));
    return true;
  }
  int err = text.error().err;
  if (err == ENOENT || err == EINVAL) {
    *answer = Value(reached(path.joined()));
    return true;
  }
  *answer = text.take_error();
  return true;
}
#endif

}  // namespace

Result<Value> resolve(const Root& root, const Request& request) {
  auto prepared = prepare_path(root, request.path);
  if (!prepared.ok()) return prepared.take_error();
  const LexedPath& path = prepared.value();
  if (path.is_root()) return Value(reached(""));
#if defined(__linux__)
  if (root.strategy() == Strategy::Kernel) {
    Result<Value> quick = Value(std::monostate{});
    if (resolve_in_root(root, path, &quick)) return quick;
  }
#endif
#if defined(O_PATH)
  if (root.strategy() == Strategy::Kernel) {
    // Fast path: one confined O_PATH open of the whole path. It succeeds when no link lies on the
    // way; the leaf may still be a link, opened as itself. readlinkat(fd, "") then answers its text
    // or fails ENOENT for anything that is not a link (fs/stat.c do_readlinkat: an empty name on a
    // non-link is ENOENT, a named one EINVAL). Three syscalls either way.
    auto fd = open_beneath(root, path, kObjectHandleFlags);
    if (fd.ok()) {
      auto text = read_link_at(fd.value().get(), "", path.joined());
      if (text.ok()) return Value(link_at(path.joined(), text.take()));
      int err = text.error().err;
      if (err == ENOENT || err == EINVAL) return Value(reached(path.joined()));
      return text.take_error();
    }
    // The kernel's lookup runs in order and stops at the first problem, so its error already says
    // most of the answer without a walk:
    //  - ENOENT: a component is missing and no link came before it (a link would have stopped the
    //    lookup first, ELOOP): the whole request, as requested, is the answer.
    //  - ENOTDIR without a trailing '/': a non-directory on the way; the answer is that error.
    //  - a link (ELOOP), or ENOTDIR under the O_DIRECTORY of a trailing '/' (the leaf may be a
    //    link): only the walk can say which component, so it runs.
    const Error& e = fd.error();
    if (e.refusal == Refusal::None && e.err == ENOENT) return Value(reached(path.joined()));
    bool locate = e.refusal == Refusal::Symlink ||
                  (e.refusal == Refusal::None && e.err == ENOTDIR && path.must_be_dir);
    if (!locate) return fd.take_error();
  }
#endif
  return resolve_by_walk(root, path);
}

}  // namespace pinnedfs::ops
