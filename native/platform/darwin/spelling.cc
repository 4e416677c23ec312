// macOS: a name's stored spelling from getattrlistat(ATTR_CMN_NAME), without following a link.
// Not compiled on Linux (no Mac in CI); kept to the documented getattrlist(2) buffer layout.
#include <sys/attr.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>

#include "../../core/eintr.h"
#include "../platform.h"

namespace pinnedfs::ops {

Result<std::string> on_disk_name(int dirfd, const std::string& name,
                                 const std::string& shown_path) {
  struct attrlist want;
  std::memset(&want, 0, sizeof want);
  want.bitmapcount = ATTR_BIT_MAP_COUNT;
  want.commonattr = ATTR_CMN_NAME;
  // The answer: a u_int32_t total length, an attrreference_t, then the NUL-terminated UTF-8 name
  // (255 UTF-16 units are at most 765 bytes).
  alignas(8) char buf[sizeof(std::uint32_t) + sizeof(attrreference_t) + 1024];
  int rc = retry_eintr(
      [&] { return ::getattrlistat(dirfd, name.c_str(), &want, buf, sizeof buf, FSOPT_NOFOLLOW); });
  if (rc != 0) return sys_error(errno, "getattrlistat", shown_path);
  std::uint32_t total;
  std::memcpy(&total, buf, sizeof total);
  const char* ref_at = buf + sizeof(std::uint32_t);
  attrreference_t ref;
  std::memcpy(&ref, ref_at, sizeof ref);
  const char* end = buf + std::min<std::size_t>(total, sizeof buf);
  const char* data = ref_at + ref.attr_dataoffset;
  if (ref.attr_dataoffset < 0 || ref.attr_length == 0 || data >= end ||
      ref.attr_length > static_cast<std::size_t>(end - data)) {
    Error e = sys_error(EIO, "getattrlistat", shown_path);
    e.description = "malformed ATTR_CMN_NAME answer";
    return e;
  }
  return std::string(data, ::strnlen(data, ref.attr_length));
}

}  // namespace pinnedfs::ops
