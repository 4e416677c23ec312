// Portable listing (macOS and other non-Linux POSIX systems): readdir(3) on a dup of the caller's
// descriptor, because fdopendir takes ownership of the descriptor it is given and the caller still
// needs its own to open children through. The dup shares the offset, which is harmless: the caller
// opened this description itself and lists it once (platform-notes pitfall 9).
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "../core/fd.h"
#include "../ops/dir_list.h"

namespace pinnedfs {

Status DirLister::list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out) {
  int copy;
  do copy = ::fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
  while (copy < 0 && errno == EINTR);
  if (copy < 0) return sys_error(errno, "fcntl", shown_path);
  Fd owned(copy);
  DIR* dir = ::fdopendir(owned.get());
  if (!dir) return sys_error(errno, "fdopendir", shown_path);
  owned.release();  // closedir closes it from here on
  int err = 0;
  for (;;) {
    errno = 0;
    struct dirent* e = ::readdir(dir);
    if (!e) {
      err = errno;
      if (err == EINTR) continue;
      break;
    }
    const char* name = e->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    out.push_back(DirEntry{std::string(name), entry_kind(e->d_type)});
  }
  ::closedir(dir);
  if (err != 0) return sys_error(err, "readdir", shown_path);
  return ok_status();
}

}  // namespace pinnedfs
