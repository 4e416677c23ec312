#include "beneath.h"

#include <fcntl.h>
#include <sys/stat.h>

#include "../platform/platform.h"
#include "eintr.h"
#include "resolve.h"

namespace pinnedfs {

namespace {

// Marks an error as the failed proof of a held handle (callers that list skip such a subtree).
Error proof_failed(Error e) {
  e.moved = true;
  return e;
}

// A lookup that could not be made for want of a resource (descriptors, kernel memory) or that the
// kernel asked to retry says nothing about where the held handle is: it is its own error, never a
// failed proof, so no caller reads it as a departure (a listing would skip the subtree, a remover
// would report an escape).
bool could_not_look(const Error& e) {
  return e.refusal == Refusal::None &&
         (e.err == EMFILE || e.err == ENFILE || e.err == ENOMEM || e.err == EAGAIN);
}

// Looks `rel` up again from the root with the root's own strategy and requires the held object.
// Under the kernel strategy the lookup is one openat2 whose beneath check is atomic; under the
// walk it is the walk, with the walk's own residual (see README). What stands at the path now
// decides the answer: nothing (or a lookup that left the root) is "moved out"; a link, a file
// where a directory was, or another directory answer as the path does today.
Status prove_by_lookup(const Root& root, int fd, const Identity* known, const std::string& rel,
                       const char* syscall, const std::string& shown) {
  Result<Fd> again = Fd();
  if (root.strategy() == Strategy::Kernel) {
    again = platform::kernel_open(root.fd(), rel, kObjectHandleFlags, 0, shown);
  } else {
    auto lexed = lex_path(rel);
    if (!lexed.ok()) return lexed.take_error();
    again = walk::open_beneath(root, lexed.value(), kObjectHandleFlags, 0);
  }
  if (!again.ok()) {
    Error e = again.take_error();
    if (could_not_look(e)) {
      e.path = shown;
      return e;
    }
    bool gone = (e.refusal == Refusal::Escape && !e.mount) ||
                (e.refusal == Refusal::None && e.err == ENOENT);
    if (gone) {
      return proof_failed(refusal(Refusal::IdentityChanged, syscall, shown,
                                  "'" + rel +
                                      "' was moved away from its path while this operation "
                                      "held it: nothing is done there",
                                  EBUSY));
    }
    e.path = shown;
    return proof_failed(std::move(e));
  }
  struct stat now;
  if (::fstat(again.value().get(), &now) != 0) return sys_error(errno, "fstat", shown);
  struct stat mine;
  if (!known && ::fstat(fd, &mine) != 0) return sys_error(errno, "fstat", shown);
  Identity held = known ? *known : identity_of(mine);
  if (identity_of(now) == held) return ok_status();
  // Not the held object: what stands there now says how to answer (ours is looked at only now).
  if (known && ::fstat(fd, &mine) != 0) return sys_error(errno, "fstat", shown);
  if (S_ISLNK(now.st_mode)) {
    return proof_failed(
        refusal(Refusal::Symlink, syscall, shown, "'" + rel + "' is a symbolic link now", ELOOP));
  }
  if (S_ISDIR(mine.st_mode) && !S_ISDIR(now.st_mode)) {
    Error e = sys_error(ENOTDIR, syscall, shown);
    e.description = "'" + rel + "' is no longer a directory";
    return proof_failed(std::move(e));
  }
  return proof_failed(refusal(Refusal::IdentityChanged, syscall, shown,
                              "'" + rel + "' is no longer the " +
                                  (S_ISDIR(mine.st_mode) ? "directory" : "file") +
                                  " this operation holds (" + held.str() + " is now " +
                                  identity_of(now).str() + "): it was moved or replaced",
                              EBUSY));
}

enum class Place : unsigned char { Beneath, Left, Unknown };

// Most ".." steps a climb takes looking for the root: far past any tree pinnedfs walks (256 levels
// below a root that itself sits at most PATH_MAX/2 levels deep).
constexpr int kMaxClimb = 4096;

// Where ".." leads from `fd`: to the root's identity (beneath), or to the top of the file system
// (the one directory that is its own parent) without meeting it (left). Unknown when a step cannot
// be taken (out of descriptors, a handle on a non-directory, a directory with no search right).
Place climb_to_root(const Root& root, int fd) {
  Fd cur;
  struct stat st;
  if (::fstat(fd, &st) != 0) return Place::Unknown;
  Identity here = identity_of(st);
  for (int i = 0; i < kMaxClimb; ++i) {
    if (here == root.identity()) return Place::Beneath;
    // ".." is never a link.
    int up =
        retry_eintr([&] { return ::openat(cur.valid() ? cur.get() : fd, "..", kDirHandleFlags); });
    if (up < 0) return Place::Unknown;
    cur = Fd(up);
    if (::fstat(cur.get(), &st) != 0) return Place::Unknown;
    Identity above = identity_of(st);
    if (above == here) return Place::Left;
    here = above;
  }
  return Place::Unknown;
}

// Where `fd` is now: outside the root, beneath it, or unknown when neither /proc nor a climb can
// tell. Only classifies a failed proof, so its own race cannot let anything through; and it never
// answers "left" without having looked, so a lookup that failed for want of descriptors is never
// reported as an escape.
Place left_the_root(const Root& root, int fd) {
  std::string base, where;
  if (platform::fd_path(root.fd(), &base) == 0 && platform::fd_path(fd, &where) == 0) {
    std::string prefix = base == "/" ? "/" : base + "/";
    return where.compare(0, prefix.size(), prefix) == 0 ? Place::Beneath : Place::Left;
  }
  return climb_to_root(root, fd);
}

// The most a /proc link prints: one page, less the terminating NUL.
constexpr std::size_t kPrintable = 4095;

enum class Account : unsigned char { Agrees, Differs, Silent };

// The kernel's account of where `fd` is, against the root's: root, held, root again, so that a
// root renamed between the reads is not mistaken for the held directory's new home. Silent where
// /proc cannot say (not procfs, or a path longer than it prints).
Account proc_account(const Root& root, int fd, const std::string& rel) {
  std::string before, where, after;
  if (platform::fd_path(root.fd(), &before) != 0) return Account::Silent;
  if (platform::fd_path(fd, &where) != 0) return Account::Silent;
  if (platform::fd_path(root.fd(), &after) != 0) return Account::Silent;
  std::string expected = before == "/" ? "/" + rel : before + "/" + rel;
  return before == after && where == expected ? Account::Agrees : Account::Differs;
}

// For a held directory whose absolute path is longer than /proc prints. The lookup the walk would
// fall back to costs a syscall per component, which at every level of a deep program is quadratic
// again; instead climb ".." from the handle to the deepest ancestor /proc can print and take that
// ancestor's account (or, climbed all the way, compare with the root's identity). Like everything
// in the walk it is not atomic; it answers whether the handle is beneath the root (its ancestors
// lead there), not that it is at its own path. Silent when it cannot tell.
Account climbed_account(const Root& root, int fd, const std::string& rel) {
  std::string base;
  if (platform::fd_path(root.fd(), &base) != 0) return Account::Silent;
  std::size_t room = base.size() + 1 < kPrintable ? kPrintable - base.size() - 1 : 0;
  std::size_t components = 1, keep = 0, keep_len = 0;
  for (char c : rel) components += c == '/';
  for (std::size_t end = rel.find('/'); end != std::string::npos && end <= room;
       end = rel.find('/', end + 1)) {
    ++keep;
    keep_len = end;
  }
  Fd cur;
  for (std::size_t i = keep; i < components; ++i) {
    // ".." is never a link.
    int up =
        retry_eintr([&] { return ::openat(cur.valid() ? cur.get() : fd, "..", kDirHandleFlags); });
    if (up < 0) return Account::Silent;
    cur = Fd(up);
  }
  if (keep == 0) {
    struct stat st;
    if (::fstat(cur.get(), &st) != 0) return Account::Silent;
    return identity_of(st) == root.identity() ? Account::Agrees : Account::Differs;
  }
  return proc_account(root, cur.get(), rel.substr(0, keep_len));
}

}  // namespace

Error moved_out(const char* syscall, const std::string& shown, const std::string& rel) {
  Error e = refusal(Refusal::Escape, syscall, shown,
                    "'" + rel +
                        "' was moved out of the root while this operation held it: "
                        "nothing is done there",
                    EXDEV);
  e.moved = true;
  return e;
}

Error mount_point(const char* syscall, const std::string& shown, const std::string& where) {
  Error e =
      refusal(Refusal::Escape, syscall, shown,
              "'" + where + "' is a mount point: pinnedfs never crosses into another mount", EXDEV);
  e.mount = true;
  return e;
}

Status prove_beneath(const Root& root, int fd, const Identity* known, const std::string& rel,
                     const char* syscall, const std::string& shown) {
  if (rel.empty()) return ok_status();  // the root: nothing above it to leave
  std::size_t depth = 1;
  for (char c : rel) depth += c == '/';
  bool by_proc = root.strategy() == Strategy::Walk || depth > kLookupDepth;
  if (by_proc) {
    Account told = proc_account(root, fd, rel);
    // The walk's lookup costs a syscall per component: past what /proc prints, climb instead.
    if (told == Account::Silent && root.strategy() == Strategy::Walk)
      told = climbed_account(root, fd, rel);
    if (told == Account::Agrees) return ok_status();
  }
  auto proven = prove_by_lookup(root, fd, known, rel, syscall, shown);
  if (proven.ok() || !proven.error().moved) return proven;
  // Not where its path says: out of the root is the escape this exists for; moved or replaced
  // within it is a concurrent change, refused as what the path names now.
  if (left_the_root(root, fd) == Place::Left) return moved_out(syscall, shown, rel);
  return proven;
}

Status same_mount(const Root& root, int fd, const std::string& shown) {
  auto mount = platform::mount_of(fd);
  if (!mount.ok()) {
    Error e = mount.take_error();
    e.path = shown;
    return e;
  }
  if (!root.mount().same_as(mount.value())) return mount_point("openat", shown, shown);
  return ok_status();
}

MountTold mount_told(const Root& root, const MountIdentity& told) {
#if defined(__linux__)
  // A device number is not enough where bind mounts exist: the same file system mounted twice.
  if (!(told.has_id && root.mount().has_id)) return MountTold::Unknown;
#endif
  return root.mount().same_as(told) ? MountTold::Root : MountTold::Other;
}

RootLook look_in_root(const Root& root, const LexedPath& path, struct stat* st) {
  if (path.parts.size() != 1 || path.must_be_dir || path.has_dotdot) return RootLook::Unsure;
  MountIdentity told;
  int looked = platform::lstat_with_mount(root.fd(), path.leaf().c_str(), st, &told);
  if (looked == ENOENT) return RootLook::Missing;
  if (looked != 0 || mount_told(root, told) != MountTold::Root) return RootLook::Unsure;
  return RootLook::Found;
}

Status same_mount_told(const Root& root, const MountIdentity& told, int fd,
                       const std::string& shown) {
  switch (mount_told(root, told)) {
    case MountTold::Root:
      return ok_status();
    case MountTold::Other:
      return mount_point("openat", shown, shown);
    case MountTold::Unknown:
      break;
  }
  return same_mount(root, fd, shown);
}

Held Held::root(const Root& root) {
  Held h;
  h.dir_ = DirRef::borrow(root.fd());
  h.root_ = true;
  h.fresh_ = true;
  h.know_identity(root.identity());
  return h;
}

Held Held::fresh(Fd fd, std::string rel) {
  Held h;
  h.dir_ = DirRef::own(std::move(fd));
  h.rel_ = std::move(rel);
  h.fresh_ = true;
  return h;
}

Held Held::unproven(Fd fd, std::string rel) {
  Held h;
  h.dir_ = DirRef::own(std::move(fd));
  h.rel_ = std::move(rel);
  return h;
}

Held Held::from_lookup(const Root& root, Fd fd, std::string rel) {
  if (rel.empty()) {
    // "." from the root: the root itself, reopened.
    Held h = fresh(std::move(fd), std::string());
    h.root_ = true;
    return h;
  }
  return root.strategy() == Strategy::Kernel ? fresh(std::move(fd), std::move(rel))
                                             : unproven(std::move(fd), std::move(rel));
}

Result<Proven> Held::prove(const Root& root, const char* syscall, const std::string& shown) {
  if (root_) return Proven(dir_.get());
  if (fresh_) {
    fresh_ = false;
    return Proven(dir_.get());
  }
  if (root.strategy() == Strategy::Kernel) {
    // The lookup proof compares identities: learn ours once, not at every proof.
    auto id = identity(shown);
    if (!id.ok()) return id.take_error();
  }
  auto proven = prove_beneath(root, dir_.get(), have_id_ ? &id_ : nullptr, rel_, syscall, shown);
  if (!proven.ok()) return proven.take_error();
  return Proven(dir_.get());
}

Result<Identity> Held::identity(const std::string& shown) {
  if (!have_id_) {
    struct stat st;
    if (::fstat(dir_.get(), &st) != 0) return sys_error(errno, "fstat", shown);
    know_identity(identity_of(st));
  }
  return id_;
}

}  // namespace pinnedfs
