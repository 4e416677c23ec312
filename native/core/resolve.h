// Resolution beneath a pinned root: the one seam every operation goes through.
//
// Callers hand in a lexed, ".."-free path (see prepare_path) and get back a descriptor opened with
// no symbolic link followed anywhere and no mount crossed. Which mechanism does it is the root's
// strategy: the kernel-confined open a platform provides (platform/platform.h), or the walk
// (core/walk.cc), compiled everywhere. A root pinned with Links::Within first resolves the links on
// the way beneath the root (within:: below), so what reaches the rest is a link-free path still.
// A directory kept to act in is a Held (core/beneath.h): it is
// proven beneath the root again before every mutation or listing through it.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "beneath.h"
#include "error.h"
#include "fd.h"
#include "path_lex.h"
#include "root.h"

namespace pinnedfs {

// lex_path, then physical ".." resolution: every component a ".." later pops is opened as a real
// directory (a link there is refused), and the answer is the path with the pairs removed. The final
// resolution then runs on a ".."-free path, so it can never climb out.
Result<LexedPath> prepare_path(const Root& root, std::string_view relative);

// Opens the object `path` names with `flags` (O_NOFOLLOW|O_CLOEXEC are always added). With O_PATH a
// trailing link is opened as the link itself, which is how stat/readLink/exists see links; any
// other flags refuse a trailing link. The root itself is opened as ".". Under the walk, flags that
// create or write prove the parent beneath the root before the leaf is opened in it. A root with
// Links::Within follows a trailing link for the flags within::follows_final names (reads).
Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode = 0);
// The same, kept as a Held (a directory to list, an object to change).
Result<Held> hold_beneath(const Root& root, const LexedPath& path, int flags);

// The directory holding the first `count` components of `path` (count 0 = the root).
Result<Held> open_dirs(const Root& root, const LexedPath& path, std::size_t count);

struct Parent {
  Held dir;
  std::string leaf;
};
// The parent directory of a non-root path, and the leaf name to act on there. Its handle hands
// out a descriptor to act through only by proving itself (Held::prove, Held::act); in_parent does
// all of it in one call.
Result<Parent> open_parent(const Root& root, const LexedPath& path);

// Acts in the parent, as Go's os.Root does (doInRoot): opens the parent of `path` (a non-root
// path), proves it beneath the root, and only then calls `act(parent_fd, leaf)`, which makes the
// one system call (or the few) on `leaf` in `parent_fd` and returns a Result (or Status). Every
// operation that acts on a name goes through here or, for later acts on a handle it keeps, through
// Held::act: neither hands out a descriptor to act through before the proof. `syscall` and `shown`
// name the act in a refusal.
template <class Act>
auto in_parent(const Root& root, const LexedPath& path, const char* syscall,
               const std::string& shown, Act&& act)
    -> decltype(act(0, std::declval<const std::string&>())) {
  auto parent = open_parent(root, path);
  if (!parent.ok()) return parent.take_error();
  const std::string& leaf = parent.value().leaf;
  return parent.value().dir.act(root, syscall, shown, [&](int dirfd) { return act(dirfd, leaf); });
}
// The same from the caller's relative path: prepare_path first (a ".." is resolved physically).
template <class Act>
auto in_parent(const Root& root, std::string_view relative, const char* syscall, Act&& act)
    -> decltype(act(0, std::declval<const std::string&>())) {
  auto path = prepare_path(root, relative);
  if (!path.ok()) return path.take_error();
  return in_parent(root, path.value(), syscall, std::string(relative), std::forward<Act>(act));
}

// A single component beneath an already-resolved directory, never following a link: the building
// block of the walk and of ".." resolution.
Result<Fd> open_child(const Root& root, int dirfd, const std::string& name, int flags, mode_t mode,
                      const std::string& shown_path);

// The child `name` of a held directory, for recursive operations that descend (listing, glob,
// remove). Under the kernel strategy it is looked up from the root by its whole relative path,
// confined (so it arrives proven), up to a depth where that lookup costs more than a proof; past
// it, and under the walk, it is opened from the parent's handle and proven before use. A child
// that cannot be opened because its parent has left the root is refused as moved out; one that
// is a mount point is refused with Error::mount set.
Result<Held> descend(const Root& root, const Held& parent, const std::string& name, int flags,
                     const std::string& shown);

// Explains a failed no-follow open of `name` in `dirfd`: a link there becomes our Symlink refusal,
// anything else stays the syscall's own errno.
Error explain_open_failure(int dirfd, const std::string& name, int err, const char* syscall,
                           const std::string& shown_path);

// Refuses `fd` when it lies on another mount than the root, naming the mount point `where` (the
// error keeps the path the caller asked, `shown`). A refusal must not depend on what lies behind a
// mount point, or a caller could probe the mounted file system's names (ENOENT for one, ENOTDIR for
// another, the refusal for a third), so the walk checks each directory it opens before it looks
// anything up in it, as openat2's RESOLVE_NO_XDEV does in the kernel.
Status on_root_mount(const Root& root, int fd, const std::string& where, const std::string& shown);

// A leaf that could not be acted on as asked (a write of a directory answers EISDIR) may be a mount
// point: then the mount refusal is the answer, naming `where`, as openat2's RESOLVE_NO_XDEV gives
// it, so that no refusal depends on what the mount holds. `failed` otherwise. Error path only.
Error mount_leaf(const Root& root, int dirfd, const std::string& leaf, Error failed,
                 const std::string& where, const std::string& shown);

// fstat wrapper that reports errors in the core's shape.
Status fstat_fd(int fd, struct stat* st, const std::string& shown_path);

// The refuse-every-link open of a ".."-free path, whatever the root's Links: what open_beneath does
// for a root that refuses links.
Result<Fd> strict_open(const Root& root, const LexedPath& path, int want, mode_t mode = 0);

// Links::Within (core/resolve.cc, "links within the root").
namespace within {
// Whether an open with these flags follows a final link: reads and listings do; an object handle
// (stat, readLink, exists, chmod) and anything that writes or creates act on the link itself.
bool follows_final(int flags);
// The link-free path of what `in` reaches, every link on the way followed beneath the root (and the
// final one when `follow_final`). A missing directory ends the resolution: the rest is kept as is.
Result<LexedPath> resolve(const Root& root, const LexedPath& in, bool follow_final,
                          const std::string& shown);
// prepare_path for such a root: the path with every link before its final component resolved.
Result<LexedPath> prepare(const Root& root, LexedPath lexed, const std::string& shown);
// open_beneath of a final component that may be a link to follow.
Result<Fd> open_final(const Root& root, const LexedPath& path, int want, mode_t mode);
}  // namespace within

namespace walk {
Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode);
// count >= 1: the directory of the first `count` components, on the root's mount (unproven).
Result<Held> open_dirs(const Root& root, const LexedPath& path, std::size_t count);
}  // namespace walk

}  // namespace pinnedfs
