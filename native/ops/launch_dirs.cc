// prepare and cleanup: a launch's directories and its final validation, one trip each (see
// confine.h). They pin their own anchors inside the trip, so a launch that makes state roots
// costs one trip to prepare and one to clean up whatever the number of anchors it touches.
//
// With a record (launch_record.cc), prepare writes down each anchor that makes something, then
// every directory it is about to make (each prefix of each path, since mkdirs makes missing
// parents too), then every directory it made: whatever moment a SIGKILL picks, what exists is
// on record. Cleanup writes down what it removed and removes the record when nothing stays.
#include <sys/stat.h>
#include <unistd.h>

#include <set>

#include "confine.h"
#include "mkdirs.h"
#include "ops.h"

namespace pinnedfs::confine {

namespace {

Error anchor_changed(const std::string& path, const Identity& was, const Identity& now) {
  return refusal(Refusal::IdentityChanged, "pin", path,
                 "'" + path + "' is no longer the directory prepared (" + was.str() + " is now " +
                     now.str() + ")",
                 EBUSY);
}

// The directories a creation program may make, as prefixes of its entries, minus the permanent.
std::vector<std::string> intents(const PrepareAnchor& a) {
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (std::size_t k = 0; k < a.create.size(); ++k) {
    if (a.create_flags.size() > k && (a.create_flags[k] & kCreatePermanent)) continue;
    const std::string& p = a.create[k].path;
    for (std::size_t cut = p.find('/');; cut = p.find('/', cut + 1)) {
      std::string prefix = p.substr(0, cut);
      if (!prefix.empty() && seen.insert(prefix).second) out.push_back(prefix);
      if (cut == std::string::npos) break;
    }
  }
  return out;
}

bool within(const std::string& path, const std::string& dir) {
  return path == dir || (path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
                         path[dir.size()] == '/');
}

Status announce(const RecordRef& record, std::size_t i, const PrepareAnchor& a,
                const Identity& identity) {
  if (record.fd < 0) return ok_status();
  std::string lines = record_anchor(i, a.path, identity);
  for (const std::string& p : intents(a)) lines += record_intent(i, p);
  return record_line(record, lines);
}

// Every directory made, but those a permanent entry needed (they stay after the launch).
Status record_created(const RecordRef& record, std::size_t i, const PrepareAnchor& a,
                      const MkdirsOutcome& made) {
  if (record.fd < 0 || made.created.empty()) return ok_status();
  std::string lines;
  for (const CreatedDir& c : made.created) {
    bool permanent = false;
    bool purge = false;
    for (std::size_t k = 0; k < a.create.size(); ++k) {
      std::uint8_t flags = a.create_flags.size() > k ? a.create_flags[k] : 0;
      if ((flags & kCreatePermanent) && within(a.create[k].path, c.path)) permanent = true;
      if ((flags & kCreatePurge) && a.create[k].path == c.path) purge = true;
    }
    if (!permanent) lines += record_made(i, c.path, c.identity, purge);
  }
  return lines.empty() ? ok_status() : record_line(record, lines);
}

}  // namespace

Result<std::vector<PreparedAnchor>> prepare(const PrepareRequest& request) {
  if (request.anchors.size() > kMaxAnchors) {
    return bad_argument("prepare names more than " + std::to_string(kMaxAnchors) + " anchors");
  }
  std::size_t holding = 0;
  for (const PrepareAnchor& a : request.anchors) holding += a.hold.size();
  if (holding > kMaxHeld) {
    return bad_argument("prepare holds " + std::to_string(holding) + " paths; at most " +
                        std::to_string(kMaxHeld) + " can be held at once");
  }
  // Every anchor pinned, and checked against what discovery saw, before anything is made: a
  // changed anchor refuses the launch with nothing to undo.
  std::vector<std::shared_ptr<Root>> roots;
  std::vector<PreparedAnchor> out(request.anchors.size());
  for (std::size_t i = 0; i < request.anchors.size(); ++i) {
    const PrepareAnchor& a = request.anchors[i];
    auto pinned = Root::pin(a.path, request.strategy);
    if (!pinned.ok()) {
      out[i].error = pinned.take_error();
      return out;
    }
    roots.push_back(pinned.take());
    out[i].identity = roots.back()->identity();
    if (a.has_expected && out[i].identity != a.expected) {
      out[i].error = anchor_changed(a.path, a.expected, out[i].identity);
      return out;
    }
  }
  ops::ProgramOptions options;
  for (std::size_t i = 0; i < request.anchors.size(); ++i) {
    const PrepareAnchor& a = request.anchors[i];
    if (a.create.empty()) continue;
    auto announced = announce(request.record, i, a, out[i].identity);
    if (!announced.ok()) {
      out[i].error = announced.take_error();
      return out;
    }
    auto made = ops::run_mkdirs_program(*roots[i], a.create, options);
    if (!made.ok()) {
      out[i].error = made.take_error();
      return out;
    }
    out[i].made = made.take();
    auto kept = record_created(request.record, i, a, out[i].made);
    if (!kept.ok()) out[i].error = kept.take_error();
    if (out[i].made.failed || !kept.ok()) return out;
  }
  // The final validation comes after every creation: nothing it sees is older than the last
  // directory made.
  for (std::size_t i = 0; i < request.anchors.size(); ++i) {
    if (request.anchors[i].hold.empty()) continue;
    auto held = hold(*roots[i], request.anchors[i].hold);
    out[i].held = true;
    if (held.ok()) {
      out[i].holds = held.take();
    } else {
      out[i].hold_error = held.take_error();
    }
  }
  return out;
}

namespace {

// Refused because the path no longer holds the directory the launch made (a link there now, or
// another directory): that path is no longer the launch's to remove, now or ever. Left in the
// record, a later sweep would find it by dev:ino alone, and a file system that hands a freed inode
// number to the next directory made (ext4 does at once) would have it remove a directory this
// launch never made.
bool replaced(const Error& e) {
  return e.refusal == Refusal::IdentityChanged || e.refusal == Refusal::Symlink;
}

// Marks what this launch removed done in its record; removes the record when nothing stays, and
// closes it (the lock goes with it).
void settle_record(const CleanupRequest& request, const CleanupResult& result) {
  const RecordRef& record = request.record;
  if (record.fd < 0) return;
  struct stat st;
  if (::fstat(record.fd, &st) != 0 || identity_of(st) != record.identity)
    return;  // not ours to close
  Fd owned(record.fd);
  std::string lines;
  bool stays = false;
  for (std::size_t i = 0; i < request.anchors.size() && i < result.anchors.size(); ++i) {
    const CleanedAnchor& a = result.anchors[i];
    if (a.error.err != 0 || a.error.refusal != Refusal::None) {
      stays = true;
      continue;
    }
    // Kept because another launch relies on it (or on something inside it): the last of them, or
    // a sweep, removes it.
    std::vector<std::string> staying;
    for (const RmdirMember& m : a.removed.members) {
      if ((m.status == RmdirStatus::Refused && !replaced(m.error)) ||
          (m.status == RmdirStatus::Kept && m.error.err == EBUSY))
        staying.push_back(m.path);
    }
    for (const RmdirMember& m : a.removed.members) {
      bool held = false;
      for (const std::string& p : staying) held = held || p == m.path || within(p, m.path);
      if (held) {
        stays = true;
        continue;
      }
      lines += record_done(request.anchors[i].path, m.path);
    }
  }
  if (!lines.empty()) (void)record_line(record, lines);
  if (stays) return;
  auto dir = open_runtime(request.runtime);
  if (!dir.ok()) return;
  std::string name = request.record_name + ".launch";
  struct stat named;
  if (::fstatat(dir.value().get(), name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
      identity_of(named) == record.identity) {
    ::unlinkat(dir.value().get(), name.c_str(), 0);
  }
}

}  // namespace

Result<CleanupResult> cleanup(const CleanupRequest& request) {
  if (request.anchors.size() > kMaxAnchors) {
    return bad_argument("cleanup names more than " + std::to_string(kMaxAnchors) + " anchors");
  }
  if (request.release.size() > kMaxHeld) {
    return bad_argument("cleanup releases more than " + std::to_string(kMaxHeld) + " descriptors");
  }
  CleanupResult result;
  // Released first: they are the caller's, handed here to be closed off the JavaScript thread.
  // close(2) is not retried: on Linux the number is gone even when it fails.
  for (const Release& r : request.release) {
    struct stat st;
    if (r.fd < 0 || ::fstat(r.fd, &st) != 0 || identity_of(st) != r.identity) {
      result.unreleased += 1;
      continue;
    }
    ::close(r.fd);
  }
  std::vector<CleanedAnchor>& out = result.anchors;
  out.resize(request.anchors.size());
  for (std::size_t i = 0; i < request.anchors.size(); ++i) {
    const CleanupAnchor& a = request.anchors[i];
    auto pinned = Root::pin(a.path, request.strategy);
    if (!pinned.ok()) {
      out[i].error = pinned.take_error();
      continue;
    }
    if (pinned.value()->identity() != a.identity) {
      out[i].error = anchor_changed(a.path, a.identity, pinned.value()->identity());
      continue;
    }
    Request r;
    r.op = Op::Rmdirs;
    std::vector<std::size_t> purged;
    for (std::size_t k = 0; k < a.owned.size(); ++k) {
      if (a.purge.size() > k && a.purge[k])
        purged.push_back(k);
      else
        r.owned.push_back(a.owned[k]);
    }
    // The private temporary root is the child's: purged whole, whatever the child left in it.
    for (std::size_t k : purged) {
      RmdirMember m;
      m.path = a.owned[k].path;
      auto gone = purge(*pinned.value(), a.owned[k].path, a.owned[k].identity);
      m.status = gone.ok()                    ? RmdirStatus::Removed
                 : gone.error().err == ENOENT ? RmdirStatus::Missing
                                              : RmdirStatus::Refused;
      if (!gone.ok() && m.status == RmdirStatus::Refused) m.error = gone.take_error();
      out[i].removed.members.push_back(std::move(m));
    }
    if (!r.owned.empty()) {
      auto removed = ops::rmdirs(*pinned.value(), r);
      if (!removed.ok()) {
        out[i].error = removed.take_error();
        continue;
      }
      for (RmdirMember& m : std::get<RmdirsOutcome>(removed.value()).members)
        out[i].removed.members.push_back(std::move(m));
    }
  }
  settle_record(request, result);
  if (request.sweep && !request.runtime.parent.empty()) {
    auto swept = sweep(request.runtime, request.record_name, request.strategy);
    if (swept.ok())
      result.swept = swept.take();
    else
      result.swept.items.push_back(
          {request.runtime.parent + "/" + request.runtime.name, SweptStatus::Refused,
           swept.error().description.empty() ? errno_name(swept.error().err)
                                             : swept.error().description});
  }
  return result;
}

}  // namespace pinnedfs::confine
