// Setting a mode on a descriptor we already hold and have checked, never by a path name.
#pragma once
#include <sys/types.h>

#include <string>

#include "../core/error.h"

namespace pinnedfs::ops {

// chmod of the object `fd` refers to (an O_PATH handle on Linux). Linux 6.6+: fchmodat2(fd, "",
// AT_EMPTY_PATH); older kernels or a seccomp filter that refuses it: chmod of /proc/self/fd/N once
// /proc is known to be procfs (what glibc 2.32-2.38 and Go do). Elsewhere: fchmod(fd).
// The caller has already checked the handle's type; a link can never reach here because every
// handle passed in was opened with O_NOFOLLOW|O_DIRECTORY.
Status chmod_handle(int fd, mode_t mode, const std::string& shown_path);

}  // namespace pinnedfs::ops
