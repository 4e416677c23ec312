// macOS's answers for changing names: what an unlink that met a directory says, and the
// no-replace rename (declared in platform.h).
#include <stdio.h>  // renameatx_np
#include <sys/stat.h>

#include <cerrno>

#include "../platform.h"

namespace pinnedfs::platform {

// EPERM is also a permission refusal: the entry itself is asked.
bool unlink_met_directory(int err, int dirfd, const std::string& name) {
  if (err == EISDIR) return true;
  if (err != EPERM) return false;
  struct stat st;
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
}

int rename_noreplace(int fromfd, const char* from, int tofd, const char* to) {
  return ::renameatx_np(fromfd, from, tofd, to, RENAME_EXCL);
}

int rename_exchange(int fromfd, const char* from, int tofd, const char* to) {
  return ::renameatx_np(fromfd, from, tofd, to, RENAME_SWAP);
}

}  // namespace pinnedfs::platform
