// truncate: the file opened for writing beneath the root (no link followed, O_NONBLOCK so a FIFO
// never holds the worker), refused unless it is a regular file with one link, then ftruncate on
// that descriptor. As Node's fs.truncate: a longer length extends the file with zeros.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "fileops.h"

namespace pinnedfs::ops {

Result<Value> truncate(const Root& root, const Request& request) {
  if (request.length > static_cast<std::uint64_t>(INT64_MAX)) {
    return bad_argument("truncate length out of range", request.path);
  }
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) return sys_error(EISDIR, "open", request.path);
  auto fd = open_beneath(root, path.value(), O_WRONLY | O_NONBLOCK | O_NOCTTY);
  if (!fd.ok()) {
    // O_WRONLY|O_NONBLOCK on a FIFO with no reader (or a socket) is ENXIO: a special file.
    if (fd.error().refusal == Refusal::None && fd.error().err == ENXIO) {
      return refusal(Refusal::NotRegular, "open", request.path,
                     "not a regular file (FIFO, socket or device): refused, never truncated",
                     EINVAL);
    }
    return fd.take_error();
  }
  struct stat st;
  auto got = fstat_fd(fd.value().get(), &st, request.path);
  if (!got.ok()) return got.take_error();
  if (!S_ISREG(st.st_mode)) {
    return refusal(Refusal::NotRegular, "open", request.path,
                   "not a regular file (FIFO, socket or device): refused, never truncated", EINVAL);
  }
  auto hard = refuse_hard_link(st, request.path, "open");
  if (!hard.ok()) return hard.take_error();
  auto same = same_mount(root, fd.value().get(), request.path);
  if (!same.ok()) return same.take_error();
  // The change goes through a descriptor proven beneath the root right before it, as chmod's does
  // (free right after a kernel-confined lookup; under the walk, a proof of the file's path).
  Held held = Held::from_lookup(root, fd.take(), path.value().joined());
  held.know_identity(identity_of(st));
  auto done = held.act(root, "ftruncate", request.path, [&](int file) -> Status {
    int rc = retry_eintr([&] { return ::ftruncate(file, static_cast<off_t>(request.length)); });
    if (rc != 0) return sys_error(errno, "ftruncate", request.path);
    return ok_status();
  });
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
