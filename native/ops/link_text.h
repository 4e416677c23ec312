// Reading a link's text without opening what it names.
#pragma once
#include <cstddef>
#include <string>

#include "../core/error.h"

namespace pinnedfs::ops {

// readlinkat(dirfd, name) into a buffer that grows while the text fills it (readlinkat truncates
// silently). `name` may be "" on Linux for an O_PATH|O_NOFOLLOW descriptor of the link itself.
// `initial` is a parameter so the native tests can make the growth happen.
Result<std::string> read_link_at(int dirfd, const std::string& name, const std::string& shown_path,
                                 std::size_t initial = 4096);

}  // namespace pinnedfs::ops
