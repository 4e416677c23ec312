// The one rule for handles an operation keeps after its lookup: before a mutation or a listing
// through one, prove that it is still what its root-relative path names beneath the root.
//
// A lookup confined by the kernel (openat2 RESOLVE_BENEATH) proves the directory was beneath the
// root when the lookup ended. It says nothing about a moment later: an attacker with write access
// on both sides can rename the directory (or an ancestor) out of the root while we hold it, and
// every *at() call through the held descriptor then acts out there. So each act through a held
// handle is preceded by Held::prove(), the only source of a descriptor to act through: free exactly
// once right after a kernel-confined lookup from the root (that lookup was the proof, taken an
// instant before), a proof otherwise:
//  - kernel strategy, up to kLookupDepth components: the root-relative path is looked up again
//    from the root, confined (openat2, one atomic beneath check in the kernel), and the object
//    found must be the held one (dev:ino);
//  - walk strategy, and deeper paths under the kernel strategy (where that lookup, which walks
//    every component again, would make a deep program quadratic): the kernel's own account of
//    where the descriptor is (readlink of /proc/self/fd/N) must be the root's account plus the
//    relative path, read as root, held, root again so a root that moved in between is caught.
//    Where /proc is not procfs, or the path is longer than the kernel will print, the lookup
//    (the root's strategy) is the proof.
// A held handle that fails its proof is refused. Out of the root (as the kernel tells where the
// descriptor is, or as climbing ".." from it finds) it is an escape: PermissionDenied, "moved out
// of the root". Moved or replaced within the root, or where neither can tell, it is answered as
// what its path names now (Busy, NotFound-like, a link). Either way nothing is done through it,
// and the error is marked `moved` so a listing can skip a subtree that a concurrent change took
// away. A proof that could not be taken for want of a resource (EMFILE, ENFILE, ENOMEM, EAGAIN)
// is that error, unmarked: a retryable resource error, never a departure or an escape. What remains
// is the time between a proof and the act that follows it; docs/moved-out.md measures it and
// README's residual-risk section states it.
//
// Mounts: every handle acted on must be on the root's mount (Linux mount id; st_dev where the
// platform has no mount ids). The kernel strategy refuses crossings in the lookup itself
// (RESOLVE_NO_XDEV); the walk checks what it opens. Descending never leaves a mount it has crossed
// into, so checking the handle acted on is enough.
#pragma once
#include <cstdint>
#include <string>

#include "error.h"
#include "fd.h"
#include "path_lex.h"
#include "root.h"

namespace pinnedfs {

// Up to this depth a lookup from the root is the proof (and a descent looks its child up from the
// root, arriving proven); past it the lookup's cost, which grows with every component, exceeds
// /proc's account and a proof taken from the parent.
constexpr std::size_t kLookupDepth = 32;

class Held;

// A held handle just proven beneath the root: the one way to a descriptor to act through (create,
// unlink, rename, change, list). Only Held::prove makes one, so an act written without a proof
// does not compile; keep it for the one act that follows, never across a wait.
class Proven {
 public:
  int fd() const { return fd_; }

 private:
  friend class Held;
  explicit Proven(int fd) : fd_(fd) {}
  int fd_;
};

class Held {
 public:
  Held() = default;
  // The pinned root itself: beneath by definition, never proven.
  static Held root(const Root& root);
  // Opened by one kernel-confined lookup from the root handle just now (kernel strategy only).
  static Held fresh(Fd fd, std::string rel);
  // Opened any other way (the walk, a child opened from its parent, a ".." climb).
  static Held unproven(Fd fd, std::string rel);
  // What a lookup from the root gave: fresh under the kernel strategy, unproven under the walk.
  static Held from_lookup(const Root& root, Fd fd, std::string rel);

  // The descriptor, for looking only: fstat, fstatat, readlinkat, opening a child that is itself
  // proven before anything is done through it. Every act and every listing goes through prove().
  int look() const { return dir_.get(); }
  bool valid() const { return dir_.get() >= 0; }
  bool is_root() const { return root_; }
  const std::string& rel() const { return rel_; }

  // Before every mutation or listing through this handle. Spends the lookup's proof, or proves
  // again; refuses (Escape, "moved out of the root") when the handle is no longer beneath.
  Result<Proven> prove(const Root& root, const char* syscall, const std::string& shown);
  // The same proof as a Status, handing out nothing: for a proof taken again during an act already
  // under way (a listing's later batches).
  Status beneath(const Root& root, const char* syscall, const std::string& shown) {
    auto proven = prove(root, syscall, shown);
    if (!proven.ok()) return proven.take_error();
    return ok_status();
  }
  // prove(), then `act(fd)` through the proven descriptor; `act` returns a Result (or Status).
  template <class Act>
  auto act(const Root& root, const char* syscall, const std::string& shown, Act&& act)
      -> decltype(act(0)) {
    auto proven = prove(root, syscall, shown);
    if (!proven.ok()) return proven.take_error();
    return act(proven.value().fd());
  }
  // The handle's dev:ino, from one fstat the first time it is asked.
  Result<Identity> identity(const std::string& shown);
  void know_identity(const Identity& id) {
    id_ = id;
    have_id_ = true;
  }
  // For a handle kept to act through later, not at once: the lookup's proof does not carry over.
  void spend() { fresh_ = false; }
  void reset() { *this = Held(); }

 private:
  DirRef dir_;
  std::string rel_;
  bool root_ = false;
  bool fresh_ = false;
  bool have_id_ = false;
  Identity id_;
};

// The proof itself, for a descriptor `fd` that should be the object `rel` ("a/b", non-empty)
// names beneath the root. `known` is its identity when the caller has it (saves an fstat).
Status prove_beneath(const Root& root, int fd, const Identity* known, const std::string& rel,
                     const char* syscall, const std::string& shown);

// The refusal of a handle found departed.
Error moved_out(const char* syscall, const std::string& shown, const std::string& rel);

// Refuses `fd` when it lies on another mount than the root (a bind mount, a file system mounted
// inside the workspace): PermissionDenied, saying it is a mount point.
Status same_mount(const Root& root, int fd, const std::string& shown);

// What a look that told a mount (platform::lstat_with_mount) says of the no-crossing rule. Unknown
// only on Linux before 5.8, where no mount id came with it and a handle of the object must be
// asked.
enum class MountTold { Root, Other, Unknown };
MountTold mount_told(const Root& root, const MountIdentity& told);
// same_mount for an open `fd` whose look told `told`: the look's answer where it settles the rule,
// else `fd`'s own (a handle asked, as same_mount asks it).
Status same_mount_told(const Root& root, const MountIdentity& told, int fd,
                       const std::string& shown);

// One look at a name directly in the root (`path` one plain component, no trailing '/'): an lstat
// in the root's descriptor that tells the mount (platform::lstat_with_mount), with no link followed
// and no automount. One lookup in the pinned directory climbs nowhere and follows nothing, so
// Missing (ENOENT) says the name is not there with nothing hidden behind it, and Found says it is
// there, on the root's mount, as `st` describes it (a link as itself). Unsure: a longer path, any
// other failure, another mount, or a look that could not tell one; the caller's general path then
// answers, or refuses, in its own words.
enum class RootLook { Unsure, Missing, Found };
RootLook look_in_root(const Root& root, const LexedPath& path, struct stat* st);

// The refusal of a mount crossing at `where` (root-relative).
Error mount_point(const char* syscall, const std::string& shown, const std::string& where);

}  // namespace pinnedfs
