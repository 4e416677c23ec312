// macOS: where a descriptor is. XNU has no /proc: fd_path answers ENOSYS, and the proof that a held
// directory is still beneath the root looks its path up again from the root (core/beneath.cc).
// Mounts: XNU has no mount ids and no bind mounts; every mounted volume (APFS volumes of one
// container included) has its own st_dev, so the device alone says whether a mount was crossed.
#include <sys/stat.h>

#include "../../core/resolve.h"
#include "../platform.h"

namespace pinnedfs::platform {

int fd_path(int, std::string*) {
  return ENOSYS;
}

Result<MountIdentity> mount_of(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0) return sys_error(errno, "fstat");
  MountIdentity m;
  m.dev = static_cast<std::uint64_t>(st.st_dev);
  return m;
}

}  // namespace pinnedfs::platform
