// hold: the final validation of a mount plan (see confine.h). Nothing observed earlier is reused:
// every path is resolved again from the anchor's handle with no link followed anywhere, and the
// descriptor that resolution produced is what the caller binds.
//
// Each member is opened from a handle of its parent, so the parent it was found in is known, and
// its identity (from that very handle) is answered with the member. That is what a sandbox check
// later compares the sandbox's view with: a protected object cannot be renamed where it is
// mounted (it is a mount point in every sandbox that protects it), so once the sandbox shows this
// parent at the destination's place, reached component by component from handles, and the
// destination there is the mount, the object is at its own place under its mount. The directories
// above the parent need no identity for that: whatever name leads to this parent, the parent holds
// the object. (They are answered as zero: not compared.)
//
// Leases: an empty directory asked to be leased is opened for reading and locked LOCK_SH, the
// lock held as long as the caller keeps the descriptor (the launch's life; the kernel drops it if
// the process dies). Cleanup removes a directory only under LOCK_EX|LOCK_NB, so no launch's
// cleanup removes what another live launch mounts. A cleanup holds LOCK_EX only for the instant of
// its rmdir: a member that finds it held retries briefly, and then checks that the directory it
// locked is still at its path and not removed meanwhile (answered Moved otherwise: a fresh
// preparation makes it again).
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>

#include "../core/eintr.h"
#include "../core/resolve.h"
#include "confine.h"
#include "stat_answer.h"

namespace pinnedfs::confine {

namespace {

// A cleanup's LOCK_EX lasts one rmdir; waiting 1 ms at a time, this is far more than enough.
constexpr int kLeaseAttempts = 200;

HeldMember moved(HeldMember out, const std::string& path, const std::string& why) {
  out.status = HoldStatus::Moved;
  out.fd.reset();
  out.lease.reset();
  out.error = sys_error(EAGAIN, "hold", path);
  out.error.description = "'" + path + "' " + why;
  return out;
}

// The chain answered for a member `above` components deep: nothing known of the directories above
// its parent (zero), then the parent's identity, from the handle it was opened from.
std::vector<Identity> chain_to(std::size_t above, const Identity& parent) {
  std::vector<Identity> out(above);
  out.back() = parent;
  return out;
}

enum class Lease : unsigned char { Taken, Moved, Failed };

// A directory's lease, in `out` (left invalid when this user cannot read it, so no launch of this
// user can lease it or tell whether it is empty). A directory with content is leased too: it can
// be emptied later by someone outside the sandbox, and a sweep that then found it empty and
// unleased would remove it from under this launch's mount. Moved: the directory was removed, or
// another one put at its name, just before the lock was had.
Lease take_lease(int member, int parent, const char* leaf, Fd* out, Error* error,
                 const std::string& path) {
  int fd = retry_eintr([&] { return ::openat(member, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC); });
  if (fd < 0) {
    if (errno == EACCES) return Lease::Taken;
    *error = sys_error(errno, "openat", path);
    return Lease::Failed;
  }
  Fd dir(fd);
  for (int attempt = 0;; ++attempt) {
    if (retry_eintr([&] { return ::flock(fd, LOCK_SH | LOCK_NB); }) == 0) break;
    if (errno != EWOULDBLOCK || attempt >= kLeaseAttempts) {
      *error = sys_error(errno, "flock", path);
      if (errno == EWOULDBLOCK) error->description = "'" + path + "' stays locked by a cleanup";
      return Lease::Failed;
    }
    struct timespec ms = {0, 1000000};
    ::nanosleep(&ms, nullptr);
  }
  struct stat locked;
  if (::fstat(fd, &locked) != 0 || locked.st_nlink == 0) return Lease::Moved;
  if (leaf != nullptr) {
    struct stat named;
    if (::fstatat(parent, leaf, &named, AT_SYMLINK_NOFOLLOW) != 0 ||
        identity_of(named) != identity_of(locked)) {
      return Lease::Moved;
    }
  }
  *out = std::move(dir);
  return Lease::Taken;
}

HeldMember hold_one(const Root& root, const HoldPath& request) {
  const std::string& path = request.path;
  HeldMember out;
  auto lexed = lex_path(path);
  if (!lexed.ok()) {
    out.status = HoldStatus::Refused;
    out.error = lexed.take_error();
    return out;
  }
  const LexedPath& p = lexed.value();
  if (p.has_dotdot) {
    out.status = HoldStatus::Refused;
    out.error = bad_argument("a held path names a place beneath the anchor, without '..'", path);
    return out;
  }
  auto gone = [&](Error e) {
    bool missing = e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR);
    if (!missing) out.status = HoldStatus::Refused;
    out.error = std::move(e);
    return std::move(out);
  };
  std::size_t above = p.parts.empty() ? 0 : p.parts.size() - 1;
  auto parent = open_dirs(root, p, above);
  if (!parent.ok()) return gone(parent.take_error());
  // O_PATH (where it exists) with O_NOFOLLOW: a trailing link is opened as the link itself, so it
  // can be seen and refused; a link anywhere before it fails the resolution.
  auto opened = p.parts.empty() ? open_beneath(root, p, kObjectHandleFlags)
                                : open_child(root, parent.value().look(), p.leaf(),
                                             kObjectHandleFlags, 0, path);
  if (!opened.ok()) return gone(opened.take_error());
  struct stat st;
  int rc = ::fstat(opened.value().get(), &st);
  answer_stat(&out, rc, st, HoldStatus::Held, HoldStatus::Refused, "fstat", path);
  if (rc != 0) return out;
  out.nlink = static_cast<std::uint64_t>(st.st_nlink);
  // A link's descriptor is never handed out: binding it would bind what it names.
  if (out.type != EntryKind::Link) out.fd = opened.take();
  if (above > 0) {
    struct stat ps;
    if (::fstat(parent.value().look(), &ps) != 0)
      return moved(std::move(out), path, "lost its parent");
    out.chain = chain_to(above, identity_of(ps));
  }
  if (request.lease && out.type == EntryKind::Directory) {
    Error e;
    const char* leaf = p.parts.empty() ? nullptr : p.parts.back().c_str();
    switch (take_lease(out.fd.get(), parent.value().look(), leaf, &out.lease, &e, path)) {
      case Lease::Taken:
        break;
      case Lease::Moved:
        return moved(std::move(out), path, "was removed or replaced while it was being leased");
      case Lease::Failed:
        out.status = HoldStatus::Refused;
        out.fd.reset();
        out.error = std::move(e);
        break;
    }
  }
  return out;
}

}  // namespace

Result<HoldResult> hold(const Root& root, const std::vector<HoldPath>& paths) {
  if (paths.size() > kMaxHeld) {
    return bad_argument("hold names " + std::to_string(paths.size()) + " paths; at most " +
                        std::to_string(kMaxHeld) + " can be held at once");
  }
  for (const HoldPath& p : paths) {
    if (p.path.find('\0') != std::string::npos)
      return bad_argument("a held path contains a NUL byte");
  }
  auto before = root.verify_path_identity();
  if (!before.ok()) return before.take_error();
  HoldResult out;
  out.anchor = root.identity();
  out.members.reserve(paths.size());
  for (const HoldPath& p : paths) {
    out.members.push_back(hold_one(root, p));
    // Out of descriptors: the plan cannot be held whole, so none of it is.
    const HeldMember& last = out.members.back();
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
