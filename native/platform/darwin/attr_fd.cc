// macOS: mode and owner changes on a descriptor opened without following any link.
//
// XNU has no O_PATH: the object is opened O_RDONLY (O_NONBLOCK so a FIFO does not wait for a
// writer, O_NOCTTY so a terminal is not adopted), and a trailing link is refused by the open
// itself (O_NOFOLLOW_ANY, or O_NOFOLLOW at the end of the walk). A file we may not read but may
// write is retried O_WRONLY, as cap-std does. A file we may neither read nor write (mode 000, our
// own) cannot be chmod'ed this way: EACCES, where chmod(2) by path would have worked; the price of
// acting only on a checked handle.
#include <fcntl.h>
#include <unistd.h>

#include "../../core/eintr.h"
#include "../../core/resolve.h"
#include "../platform.h"

namespace pinnedfs::attr {

Result<Fd> open_for_change(const Root& root, const LexedPath& path) {
  auto fd = open_beneath(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY);
  if (fd.ok() || fd.error().refusal != Refusal::None || fd.error().err != EACCES) return fd;
  auto writable = open_beneath(root, path, O_WRONLY | O_NONBLOCK | O_NOCTTY);
  // A directory answers EISDIR to O_WRONLY: the first answer (EACCES) is the one that explains.
  if (!writable.ok() && writable.error().refusal == Refusal::None &&
      writable.error().err == EISDIR) {
    return fd;
  }
  return writable;
}

Status change_mode(int fd, mode_t mode, const std::string& shown) {
  int rc = retry_eintr([&] { return ::fchmod(fd, mode); });
  if (rc != 0) return sys_error(errno, "fchmod", shown);
  return ok_status();
}

Status change_owner(int fd, uid_t uid, gid_t gid, const std::string& shown) {
  int rc = retry_eintr([&] { return ::fchown(fd, uid, gid); });
  if (rc != 0) return sys_error(errno, "fchown", shown);
  return ok_status();
}

}  // namespace pinnedfs::attr
