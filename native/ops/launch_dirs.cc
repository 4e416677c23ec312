// prepare and cleanup: a launch's directories and its final validation, one trip each (see
// confine.h). They pin their own anchors inside the trip, so a launch that makes state roots
// costs one trip to prepare and one to clean up whatever the number of anchors it touches.
#include <sys/stat.h>
#include <unistd.h>

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
    if (request.anchors[i].create.empty()) continue;
    auto made = ops::run_mkdirs_program(*roots[i], request.anchors[i].create, options);
    if (!made.ok()) {
      out[i].error = made.take_error();
      return out;
    }
    out[i].made = made.take();
    if (out[i].made.failed) return out;
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
    r.owned = a.owned;
    auto removed = ops::rmdirs(*pinned.value(), r);
    if (!removed.ok()) {
      out[i].error = removed.take_error();
      continue;
    }
    out[i].removed = std::get<RmdirsOutcome>(removed.take());
  }
  return result;
}

}  // namespace pinnedfs::confine
