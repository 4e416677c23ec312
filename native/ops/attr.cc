// chmod, chown: resolve to a handle, check that handle, change that handle (never the path again).
// The handle is the object itself; before the change it is proven beneath the root (free right
// after a kernel-confined lookup; under the walk, a proof: the walk may have been carried out).
#include "../platform/platform.h"

#include <sys/stat.h>

#include "ops.h"

namespace pinnedfs::ops {

namespace {

// The handle every attribute change acts on, checked: not a link (Linux O_PATH opens a trailing
// link as itself), not a hard-linked file of any kind (its other name may lie outside the root),
// and still beneath the root.
Result<Held> checked_handle(const Root& root, const Request& request, const char* syscall) {
  const std::string& shown = request.path;
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  auto fd = attr::open_for_change(root, path.value());
  if (!fd.ok()) return fd.take_error();
  struct stat st;
  auto got = fstat_fd(fd.value().get(), &st, shown);
  if (!got.ok()) return got.take_error();
  if (S_ISLNK(st.st_mode)) {
    return symlink_refusal(syscall, shown,
                           path.value().is_root() ? std::string(".") : path.value().leaf());
  }
  auto hard = refuse_hard_link(st, shown, syscall);
  if (!hard.ok()) return hard.take_error();
  Held held = Held::from_lookup(root, fd.take(), path.value().joined());
  held.know_identity(
      Identity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
  auto still = held.beneath(root, syscall, shown);
  if (!still.ok()) return still.take_error();
  return held;
}

}  // namespace

Result<Value> chmod(const Root& root, const Request& request) {
  if (!request.has_mode) return bad_argument("chmod needs a mode", request.path);
  auto fd = checked_handle(root, request, "chmod");
  if (!fd.ok()) return fd.take_error();
  auto done = attr::change_mode(fd.value().fd(), static_cast<mode_t>(request.mode), request.path);
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

Result<Value> chown(const Root& root, const Request& request) {
  auto fd = checked_handle(root, request, "chown");
  if (!fd.ok()) return fd.take_error();
  // -1 (all ones once converted) leaves that id unchanged, as chown(2) defines.
  auto done = attr::change_owner(fd.value().fd(), static_cast<uid_t>(request.uid),
                                 static_cast<gid_t>(request.gid), request.path);
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
