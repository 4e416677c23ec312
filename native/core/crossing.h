// Where a path leaves its directory's mount, asked after an open beneath that directory failed or
// landed on another mount.
//
// A refusal must not depend on what lies behind it: a name inside a mount point must get the
// mount refusal whether it exists, is a file, a link or a directory, and the refusal must name the
// mount point, not the whole path. Where the kernel refuses a crossing in the lookup itself
// (openat2 RESOLVE_NO_XDEV) this is asked only to name the place; where it cannot (macOS
// O_NOFOLLOW_ANY) this is the check itself, taken on every failed or foreign open.
#pragma once
#include <cstddef>
#include <string>

#include "root.h"

namespace pinnedfs {

// The first prefix of `relative` (".."-free components joined with '/', as the kernel strategy
// opens them) whose object lies on another mount than `base`, looked at from `dirfd` one component
// at a time through descriptors held on the way, never following a link. The answer is the number
// of components in that prefix, or 0 when none is found before the path ends or the look stops: at
// a missing name, a link, a non-directory with components after it, or one that cannot be looked
// at (then whatever error the caller had stands). `base` is the mount `dirfd` lies on
// (platform::mount_of). Costs an fstatat and an open per component: for error paths.
std::size_t first_crossing(int dirfd, const MountIdentity& base, const std::string& relative);

// The first `count` components of `relative`.
std::string leading_components(const std::string& relative, std::size_t count);

}  // namespace pinnedfs
