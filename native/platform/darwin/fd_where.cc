// macOS: where a descriptor is. XNU has no /proc: fd_path answers ENOSYS, and the proof that a held
// directory is still beneath the root looks its path up again from the root (core/beneath.cc).
// Mounts: XNU has no mount ids and no bind mounts; every mounted volume (APFS volumes of one
// container included) has its own st_dev, so the device alone says whether a mount was crossed.
#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstdint>

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

// No mount ids: the device is the whole answer, and lstat gives it.
int lstat_with_mount(int dirfd, const char* name, struct stat* st, MountIdentity* mount) {
  int rc = *name == '\0' ? ::fstat(dirfd, st) : ::fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
  if (rc != 0) return errno;
  *mount = MountIdentity{};
  mount->dev = static_cast<std::uint64_t>(st->st_dev);
  return 0;
}

}  // namespace pinnedfs::platform
