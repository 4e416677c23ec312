// The on-disk spelling of one name, for the answers that promise it (realPath, resolve).
//
// Linux compares names byte for byte, so a name that resolved is spelled on disk as requested and
// this costs nothing. The exception is a casefold directory (ext4/f2fs +F), where only a listing
// could tell the stored spelling; it is not handled, and the requested spelling is answered there.
// macOS volumes are usually case-insensitive: the stored name comes from getattrlistat
// (ATTR_CMN_NAME, FSOPT_NOFOLLOW), as Apple's realpath(3) does, one call per component
// (darwin/spelling.cc).
#pragma once
#include <string>

#include "../core/error.h"

namespace pinnedfs::ops {

#if defined(__APPLE__)
constexpr bool kSpellingMayDiffer = true;
// `name` (one component, no '/') as stored in `dirfd`; a link is described, never followed.
Result<std::string> on_disk_name(int dirfd, const std::string& name, const std::string& shown_path);
#else
constexpr bool kSpellingMayDiffer = false;
inline Result<std::string> on_disk_name(int, const std::string& name, const std::string&) {
  return name;
}
#endif

}  // namespace pinnedfs::ops
