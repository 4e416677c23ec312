// The on-disk spelling of a name (declared in platform.h). Linux compares names byte for byte, so a
// name that resolved is stored as requested. A casefold directory (ext4/f2fs +F) is the exception
// only a listing could tell; it is not handled, and the requested spelling is answered there.
#include "../platform.h"

namespace pinnedfs::ops {

Result<std::string> on_disk_name(int, const std::string& name, const std::string&) {
  return name;
}

}  // namespace pinnedfs::ops
