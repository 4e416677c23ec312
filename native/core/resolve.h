// Resolution beneath a pinned root: the one seam every operation goes through.
//
// Callers hand in a lexed, ".."-free path (see prepare_path) and get back a descriptor opened with
// no symbolic link followed anywhere. Which mechanism does it is the root's strategy; the platform
// files (linux/openat2.cc, darwin/nofollow_any.cc, posix/walk.cc) implement the primitives below.
#pragma once
#include <fcntl.h>
#include <sys/stat.h>

#include <string>
#include <string_view>

#include "error.h"
#include "fd.h"
#include "path_lex.h"
#include "root.h"

namespace pinnedfs {

// Directory handle flags for the walk and for parents: O_PATH where the platform has it (no read
// permission needed, no device open side effects), else a plain read-only directory open.
#if defined(O_PATH)
constexpr int kDirHandleFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
#elif defined(O_SEARCH) && defined(__APPLE__)
constexpr int kDirHandleFlags = O_SEARCH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kDirHandleFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
#endif

// lex_path, then physical ".." resolution: every component a ".." later pops is opened as a real
// directory (a link there is refused), and the answer is the path with the pairs removed. The final
// resolution then runs on a ".."-free path, so it can never climb out.
Result<LexedPath> prepare_path(const Root& root, std::string_view relative);

// Opens the object `path` names with `flags` (O_NOFOLLOW|O_CLOEXEC are always added). With O_PATH a
// trailing link is opened as the link itself, which is how stat/readLink/exists see links; any
// other flags refuse a trailing link. The root itself is opened as ".".
Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode = 0);

// The directory holding the first `count` components of `path` (count 0 = the root, borrowed).
Result<DirRef> open_dirs(const Root& root, const LexedPath& path, std::size_t count);

struct Parent {
  DirRef dir;
  std::string leaf;
};
// The parent directory of a non-root path, and the leaf name to act on there.
Result<Parent> open_parent(const Root& root, const LexedPath& path);

// A single component beneath an already-resolved directory, never following a link: the building
// block of the walk, of ".." resolution, and of recursive operations that descend by handle.
Result<Fd> open_child(const Root& root, int dirfd, const std::string& name, int flags,
                      mode_t mode, const std::string& shown_path);

// Explains a failed no-follow open of `name` in `dirfd`: a link there becomes our Symlink refusal,
// anything else stays the syscall's own errno.
Error explain_open_failure(int dirfd, const std::string& name, int err, const char* syscall,
                           const std::string& shown_path);

// fstat wrapper that reports errors in the core's shape.
Status fstat_fd(int fd, struct stat* st, const char* what, const std::string& shown_path);

namespace platform {
// The kernel-confined strategy, implemented per platform. Returns false from kernel_available()
// where this build or this kernel has none; the walk is then the only strategy.
bool kernel_compiled();
// Probes the kernel strategy on `rootfd` once: 0 if it works, else the errno that disabled it.
int kernel_probe(int rootfd);
// Opens `relative` (".."-free, no trailing '/', "." for the root itself) beneath `dirfd`.
Result<Fd> kernel_open(int dirfd, const std::string& relative, int flags, mode_t mode,
                       const std::string& shown_path);
}  // namespace platform

namespace walk {
Result<Fd> open_beneath(const Root& root, const LexedPath& path, int flags, mode_t mode);
Result<DirRef> open_dirs(const Root& root, const LexedPath& path, std::size_t count);
}  // namespace walk

}  // namespace pinnedfs
