// The platform seam under chmod and chown (ops/attr.cc): how to get a handle to the object that a
// mode or owner change can act on without following a link, and how to change it through that
// handle. Linux: linux/attr_fd.cc (O_PATH, fchmodat2 / fchownat on the descriptor). macOS:
// darwin/attr_fd.cc (O_RDONLY|O_NOFOLLOW_ANY, fchmod / fchown).
#pragma once
#include <sys/types.h>

#include <string>

#include "../core/resolve.h"

namespace pinnedfs::attr {

// Opens the object `path` names beneath the root, never following a link. Where the platform can
// (Linux O_PATH), a trailing link is opened as the link itself so the caller's fstat refuses it
// with a clear reason; elsewhere the open refuses it.
Result<Fd> open_for_change(const Root& root, const LexedPath& path, const std::string& shown);

// Act on the descriptor open_for_change gave, after the caller's fstat checks passed on it.
Status change_mode(int fd, mode_t mode, const std::string& shown);
Status change_owner(int fd, uid_t uid, gid_t gid, const std::string& shown);

#if defined(__linux__)
// chmod through /proc/self/fd/N, for kernels before 6.6 (no fchmodat2) or a seccomp filter that
// denies it. Exposed so the native tests run it on kernels that have fchmodat2.
Status change_mode_via_proc(int fd, mode_t mode, const std::string& shown);
#endif

}  // namespace pinnedfs::attr
