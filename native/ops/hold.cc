// hold: the final validation of a mount plan (see confine.h). Nothing observed earlier is reused:
// every path is resolved again from the anchor's handle with no link followed anywhere, and the
// descriptor that resolution produced is what the caller binds.
#include <fcntl.h>
#include <sys/stat.h>

#include "../core/resolve.h"
#include "confine.h"

namespace pinnedfs::confine {

namespace {

Held hold_one(const Root& root, const std::string& path) {
  Held out;
  auto lexed = lex_path(path);
  if (!lexed.ok()) {
    out.status = HoldStatus::Refused;
    out.error = lexed.take_error();
    return out;
  }
  if (lexed.value().has_dotdot) {
    out.status = HoldStatus::Refused;
    out.error = bad_argument("a held path names a place beneath the anchor, without '..'", path);
    return out;
  }
  // O_PATH (where it exists) with O_NOFOLLOW: a trailing link is opened as the link itself, so it
  // can be seen and refused; a link anywhere before it fails the resolution.
  auto opened = open_beneath(root, lexed.value(), kObjectHandleFlags);
  if (!opened.ok()) {
    Error e = opened.take_error();
    if (e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR)) {
      out.error = std::move(e);
      return out;  // Missing
    }
    out.status = HoldStatus::Refused;
    out.error = std::move(e);
    return out;
  }
  struct stat st;
  if (::fstat(opened.value().get(), &st) != 0) {
    out.status = HoldStatus::Refused;
    out.error = sys_error(errno, "fstat", path);
    return out;
  }
  out.status = HoldStatus::Held;
  out.type = type_of_mode(st.st_mode);
  out.identity = identity_of(st);
  out.nlink = static_cast<std::uint64_t>(st.st_nlink);
  // A link's descriptor is never handed out: binding it would bind what it names.
  if (out.type != Type::Link) out.fd = opened.take();
  return out;
}

}  // namespace

Result<HoldResult> hold(const Root& root, const std::vector<std::string>& paths) {
  if (paths.size() > kMaxHeld) {
    return bad_argument("hold names " + std::to_string(paths.size()) + " paths; at most " +
                        std::to_string(kMaxHeld) + " can be held at once");
  }
  for (const std::string& p : paths) {
    if (p.find('\0') != std::string::npos) return bad_argument("a held path contains a NUL byte");
  }
  auto before = root.verify_path_identity();
  if (!before.ok()) return before.take_error();
  HoldResult out;
  out.anchor = root.identity();
  out.members.reserve(paths.size());
  for (const std::string& p : paths) {
    out.members.push_back(hold_one(root, p));
    // Out of descriptors: the plan cannot be held whole, so none of it is.
    const Held& last = out.members.back();
    if (last.status == HoldStatus::Refused && last.error.refusal == Refusal::None &&
        (last.error.err == EMFILE || last.error.err == ENFILE)) {
      return last.error;
    }
  }
  auto after = root.verify_path_identity();
  if (!after.ok()) return after.take_error();
  return out;
}

}  // namespace pinnedfs::confine
