// Linux's answers for changing names: what an unlink that met a directory says, and the
// no-replace rename (declared in platform.h).
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>

#include "../platform.h"

namespace pinnedfs::platform {

bool unlink_met_directory(int err, int, const std::string&) {
  return err == EISDIR;
}

int rename_noreplace(int fromfd, const char* from, int tofd, const char* to) {
  constexpr unsigned kNoReplace = 1;  // RENAME_NOREPLACE, <linux/fs.h>
  return static_cast<int>(::syscall(SYS_renameat2, fromfd, from, tofd, to, kNoReplace));
}

int rename_exchange(int fromfd, const char* from, int tofd, const char* to) {
  constexpr unsigned kExchange = 2;  // RENAME_EXCHANGE, <linux/fs.h>
  return static_cast<int>(::syscall(SYS_renameat2, fromfd, from, tofd, to, kExchange));
}

}  // namespace pinnedfs::platform
