// cp: fs.promises.cp for a file, a link or, with recursive, a tree, beneath one root.
//
// Every step acts from a held directory: the source tree is descended handle by handle (descend:
// no link entered, no mount crossed, each directory proven beneath the root before it is listed),
// the destination likewise, one level at a time. Memory is bounded by the depth (kMaxTreeDepth),
// not the tree: each level holds one directory reader and its buffer; no list of the tree, or of a
// directory, is ever built. Links are copied as links, their text unchanged, and only when that
// text stays beneath the root from where the copy is made. Each file is published whole
// (copy_into); the tree as a whole is not (as Node's): an interrupted cp leaves the files done so
// far, each complete.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <memory>
#include <vector>

#include "../core/eintr.h"
#include "../core/limits.h"
#include "../platform/platform.h"
#include "fileops.h"
#include "link_text.h"
#include "temp.h"

namespace pinnedfs::ops {

namespace {

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

class Copier {
 public:
  Copier(const Root& root, const Request& request) : root_(root), request_(request) {}

  // Copies `sname` in `sdir` to `dname` in `ddir`. `dparts`: the root-relative components of
  // `ddir` (where a copied link's text is checked from).
  Status entry(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
               const std::string& dname, const std::string& dshown,
               std::vector<std::string>& dparts, std::size_t depth);

 private:
  Status file(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
              const std::string& dname, const std::string& dshown);
  Status symlink(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
                 const std::string& dname, const std::string& dshown,
                 const std::vector<std::string>& dparts);
  Status directory(Held& sdir, const std::string& sname, const std::string& sshown,
                   const struct stat& st, Held& ddir, const std::string& dname,
                   const std::string& dshown, std::vector<std::string>& dparts, std::size_t depth);
  // An existing destination when force is off: errorOnExist makes it EEXIST, else it is kept.
  Status exists(const std::string& dshown) {
    if (request_.error_on_exist) return sys_error(EEXIST, "cp", dshown);
    return ok_status();
  }

  const Root& root_;
  const Request& request_;
  std::vector<std::unique_ptr<std::vector<char>>> buffers_;  // one reader buffer per level
};

Status Copier::entry(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
                     const std::string& dname, const std::string& dshown,
                     std::vector<std::string>& dparts, std::size_t depth) {
  auto still = sdir.beneath(root_, "lstat", sshown);
  if (!still.ok()) return still;
  struct stat st;
  if (::fstatat(sdir.look(), sname.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return sys_error(errno, "lstat", sshown);
  }
  if (S_ISLNK(st.st_mode)) return symlink(sdir, sname, sshown, ddir, dname, dshown, dparts);
  if (S_ISDIR(st.st_mode)) {
    return directory(sdir, sname, sshown, st, ddir, dname, dshown, dparts, depth);
  }
  return file(sdir, sname, sshown, ddir, dname, dshown);
}

Status Copier::file(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
                    const std::string& dname, const std::string& dshown) {
  struct stat st;
  auto src = open_copy_source(root_, sdir.look(), sname, sshown, &st);
  if (!src.ok()) return src.take_error();
  Target target;
  auto checked = check_target(root_, ddir.look(), dname, "copyfile", dshown, false, &target);
  if (target.exists && !request_.force) return exists(dshown);
  if (!checked.ok()) return checked;
  if (target.exists && target.st.st_dev == st.st_dev && target.st.st_ino == st.st_ino) {
    return sys_error(EINVAL, "cp", dshown);  // Node: src and dest cannot be the same
  }
  bool excl = (request_.copy_mode & kCopyExcl) != 0;
  auto done = copy_into(root_, src.value().get(), st, ddir, dname, request_.copy_mode,
                        !target.exists || excl || !request_.force, dshown);
  if (!done.ok() && !target.exists && !excl && request_.force && done.error().err == EEXIST &&
      done.error().refusal == Refusal::None) {
    // Appeared since it was looked at: force replaces it, once it passes the same checks.
    Target again;
    auto recheck = check_target(root_, ddir.look(), dname, "copyfile", dshown, false, &again);
    if (!recheck.ok()) return recheck;
    done = copy_into(root_, src.value().get(), st, ddir, dname, request_.copy_mode, false, dshown);
  }
  return done;
}

Status Copier::symlink(Held& sdir, const std::string& sname, const std::string& sshown, Held& ddir,
                       const std::string& dname, const std::string& dshown,
                       const std::vector<std::string>& dparts) {
  auto text = read_link_at(sdir.look(), sname, sshown);
  if (!text.ok()) return text.take_error();
  auto within = link_text_within(dparts, text.value(), "symlink", sshown);
  if (!within.ok()) return within;
  struct stat dst;
  bool there = ::fstatat(ddir.look(), dname.c_str(), &dst, AT_SYMLINK_NOFOLLOW) == 0;
  if (!there && errno != ENOENT) return sys_error(errno, "lstat", dshown);
  if (there) {
    if (!request_.force) return exists(dshown);
    if (S_ISDIR(dst.st_mode)) return sys_error(EISDIR, "cp", dshown);
    auto hard = refuse_hard_link(dst, dshown, "cp");
    if (!hard.ok()) return hard;
  }
  // One proof for the few acts that follow it at once (the link, or the link under a temporary
  // name, its rename and, on failure, its removal).
  auto still = ddir.prove(root_, "symlink", dshown);
  if (!still.ok()) return still.take_error();
  int dirfd = still.value().fd();
  if (!there) {
    if (::symlinkat(text.value().c_str(), dirfd, dname.c_str()) == 0) return ok_status();
    if (errno != EEXIST || !request_.force) return sys_error(errno, "symlink", dshown);
  }
  // Replacing a name: the link is made under a temporary name and renamed over it, so the name is
  // never missing and never half made.
  char tmp[48];
  static std::atomic<unsigned> counter{0};
  std::snprintf(tmp, sizeof tmp, ".pinnedfs-%d-%u.link", static_cast<int>(::getpid()),
                counter.fetch_add(1));
  if (::symlinkat(text.value().c_str(), dirfd, tmp) != 0) {
    return sys_error(errno, "symlink", dshown);
  }
  if (::renameat(dirfd, tmp, dirfd, dname.c_str()) != 0) {
    int err = errno;
    ::unlinkat(dirfd, tmp, 0);
    return sys_error(err, "rename", dshown);
  }
  return ok_status();
}

Status Copier::directory(Held& sdir, const std::string& sname, const std::string& sshown,
                         const struct stat& st, Held& ddir, const std::string& dname,
                         const std::string& dshown, std::vector<std::string>& dparts,
                         std::size_t depth) {
  if (!request_.recursive) {
    Error e = sys_error(EISDIR, "cp", sshown);
    e.description = "a directory is copied only with recursive: true";
    return e;
  }
  if (depth >= kMaxTreeDepth) {
    return refusal(Refusal::TooLarge, "cp", sshown,
                   "directory tree is deeper than the recursive copy limit of " +
                       std::to_string(kMaxTreeDepth) + " levels",
                   ENAMETOOLONG);
  }
  auto opened = descend(root_, sdir, sname, O_RDONLY | O_DIRECTORY | O_NONBLOCK, sshown);
  if (!opened.ok()) return opened.take_error();
  Held from = opened.take();

  struct stat dst;
  bool created = false;
  if (::fstatat(ddir.look(), dname.c_str(), &dst, AT_SYMLINK_NOFOLLOW) != 0) {
    if (errno != ENOENT) return sys_error(errno, "lstat", dshown);
    // Private until its content is in; then the source's bits, as Node's cp sets them.
    auto made = ddir.act(root_, "mkdir", dshown, [&](int dirfd) -> Status {
      if (::mkdirat(dirfd, dname.c_str(), 0700) != 0) return sys_error(errno, "mkdir", dshown);
      return ok_status();
    });
    if (!made.ok()) return made;
    created = true;
  } else if (S_ISLNK(dst.st_mode)) {
    return symlink_refusal("cp", dshown, dname);
  } else if (!S_ISDIR(dst.st_mode)) {
    Error e = sys_error(ENOTDIR, "cp", dshown);
    e.description = "cannot overwrite a non-directory with a directory";
    return e;
  }
  auto into = descend(root_, ddir, dname, kDirHandleFlags, dshown);
  if (!into.ok()) return into.take_error();
  Held to = into.take();

  if (buffers_.size() <= depth) buffers_.push_back(std::make_unique<std::vector<char>>());
  // A listing goes through a descriptor proven just before it, as every act does.
  auto listable = from.prove(root_, "getdents64", sshown);
  if (!listable.ok()) return listable.take_error();
  dparts.push_back(dname);
  DirectoryReader reader(listable.value().fd(), *buffers_[depth]);
  std::string_view name;
  unsigned char type = 0;
  std::string child;
  while (reader.next(&name, &type)) {
    child.assign(name.data(), name.size());
    auto one =
        entry(from, child, join(sshown, child), to, child, join(dshown, child), dparts, depth + 1);
    if (!one.ok()) return one;
  }
  dparts.pop_back();
  if (reader.error() != 0) return sys_error(reader.error(), "getdents64", sshown);
  if (!created) return ok_status();
  return to.act(root_, "chmod", dshown,
                [&](int fd) { return attr::change_mode(fd, st.st_mode & 07777, dshown); });
}

bool within(const LexedPath& inner, const LexedPath& outer) {
  if (inner.parts.size() < outer.parts.size()) return false;
  for (std::size_t i = 0; i < outer.parts.size(); ++i) {
    if (inner.parts[i] != outer.parts[i]) return false;
  }
  return true;
}

}  // namespace

Result<Value> cp(const Root& root, const Request& request) {
  if (request.copy_mode > (kCopyExcl | kCopyFiclone | kCopyFicloneForce)) {
    return bad_argument("cp mode must be a combination of fs.constants.COPYFILE_*", request.path);
  }
  auto from = prepare_path(root, request.path);
  if (!from.ok()) return from.take_error();
  auto to = prepare_path(root, request.to);
  if (!to.ok()) return to.take_error();
  if (from.value().is_root() || to.value().is_root()) {
    return bad_argument("cp copies from and to a path beneath the root, not the root itself",
                        from.value().is_root() ? request.path : request.to);
  }
  // Node refuses both before it copies anything: a copy into its own subtree would copy forever.
  if (within(to.value(), from.value())) {
    Error e = sys_error(EINVAL, "cp", request.to);
    e.description = to.value().parts.size() == from.value().parts.size()
                        ? "src and dest cannot be the same"
                        : "cannot copy a directory into a subdirectory of itself";
    return e;
  }
  auto source = held_parent(root, from.value(), "cp", request.path);
  if (!source.ok()) return source.take_error();
  auto target = held_parent(root, to.value(), "cp", request.to);
  if (!target.ok()) return target.take_error();
  std::vector<std::string> dparts(to.value().parts.begin(), to.value().parts.end() - 1);
  Copier copier(root, request);
  auto done = copier.entry(source.value().dir, source.value().leaf, from.value().joined(),
                           target.value().dir, target.value().leaf, to.value().joined(), dparts, 0);
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
