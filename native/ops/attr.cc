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
// and proven beneath the root by the act (change_attr) that follows.
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
  return held;
}

// Checks the handle, then proves it beneath the root and changes it.
template <class Change>
Result<Value> change_attr(const Root& root, const Request& request, const char* syscall,
                          Change&& change) {
  auto held = checked_handle(root, request, syscall);
  if (!held.ok()) return held.take_error();
  auto done = held.value().act(root, syscall, request.path, change);
  if (!done.ok()) return done.take_error();
  return Value(std::monostate{});
}

}  // namespace

Result<Value> chmod(const Root& root, const Request& request) {
  if (!request.has_mode) return bad_argument("chmod needs a mode", request.path);
  return change_attr(root, request, "chmod", [&](int fd) {
    return attr::change_mode(fd, static_cast<mode_t>(request.mode), request.path);
  });
}

Result<Value> chown(const Root& root, const Request& request) {
  // -1 (all ones once converted) leaves that id unchanged, as chown(2) defines.
  return change_attr(root, request, "chown", [&](int fd) {
    return attr::change_owner(fd, static_cast<uid_t>(request.uid), static_cast<gid_t>(request.gid),
                              request.path);
  });
}

}  // namespace pinnedfs::ops
