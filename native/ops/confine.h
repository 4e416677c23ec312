// The native half of pinnedfs/confine: the programs a launch preparation runs off the JavaScript
// thread, each in one trip.
//
//  discover  walks the anchor for protected-path globs: no link followed (children are opened by
//            handle with O_NOFOLLOW|O_DIRECTORY), names kept as raw bytes, a matched entry reported
//            and its tree pruned, an unreadable directory reported so the caller can protect it
//            whole, listed subtrees skipped (the execution target's temporary root), bounded in
//            entries, matches and depth (a bound reached is reported as truncation, never a quiet
//            partial answer), and cancellable between directories. Literal probes are answered in
//            the same trip: does this path exist, and as what, with no link followed.
//  hold      the final validation: every path the mount plan names is opened afresh beneath the
//            anchor, O_PATH|O_NOFOLLOW, with the anchor's own path rechecked before and after.
//            Each descriptor is handed to the caller, so the sandbox binds exactly the object that
//            was checked and never resolves the path again.
//  prepare   a launch's directories and its final validation in one trip, over every anchor at
//            once: each anchor pinned afresh by its canonical path (and refused if discovery saw
//            another directory there), every missing directory made by one mkdirs program per
//            anchor, then, once all are made, every path held as `hold` does. It names its
//            anchors by absolute path, so it runs only on a handle pinned on "/" (the wire refuses
//            any other), which carries it to the pool.
//  cleanup   the other end: the held descriptors released (closed here, not on the JavaScript
//            thread, each only while it still names the object it was opened on), then each anchor
//            pinned afresh, refused whole if it is no longer the directory prepared, and its
//            directories removed by one rmdirs program.
//
// Requests and answers are little-endian byte strings (see confine_wire.cc): names are bytes end to
// end, so a name holding a newline or invalid UTF-8 survives the trip unchanged. No N-API here.
#pragma once
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../core/error.h"
#include "../core/fd.h"
#include "../core/request.h"
#include "../core/root.h"
#include "../core/value.h"

namespace pinnedfs::confine {

enum class Kind : std::uint8_t { Discover = 1, Hold = 2, Prepare = 3, Cleanup = 4 };

// What a directory entry or an opened object is.
enum class Type : std::uint8_t { Unknown = 0, File = 1, Directory = 2, Link = 3, Other = 4 };

// Protection levels, ordered: a larger value is stricter.
// The type of an object from its st_mode.
inline Type type_of_mode(mode_t mode) {
  if (S_ISDIR(mode)) return Type::Directory;
  if (S_ISLNK(mode)) return Type::Link;
  if (S_ISREG(mode)) return Type::File;
  return Type::Other;
}

enum class Access : std::uint8_t { None = 0, ReadOnly = 1, Inaccessible = 2 };

enum class Truncation : std::uint8_t { None = 0, Entries = 1, Matches = 2, Depth = 3 };

struct Pattern {
  std::string glob;  // relative to the anchor, '/'-separated; dot names matched by wildcards
  Access access = Access::Inaccessible;
};

struct DiscoverRequest {
  std::uint32_t max_entries = 1000000;
  std::uint32_t max_matches = 100000;
  std::uint32_t max_depth = 256;
  std::vector<Pattern> patterns;
  std::vector<std::string> skip;    // anchor-relative directories never entered
  std::vector<std::string> probes;  // anchor-relative literal paths to look at
};

struct Match {
  std::string path;  // anchor-relative, raw bytes
  Type type = Type::Unknown;
  std::uint32_t pattern = 0;  // index of the first pattern that matched
};

struct Unreadable {
  std::string path;
  int err = 0;
  Access access = Access::None;  // the strictest protection a pattern could still give inside
};

enum class ProbeStatus : std::uint8_t { Missing = 0, Present = 1, Refused = 2 };

struct Probe {
  ProbeStatus status = ProbeStatus::Missing;
  Type type = Type::Unknown;
  int err = 0;
  Error error;  // Refused: why
};

struct DiscoverResult {
  Identity anchor;
  Truncation truncated = Truncation::None;
  std::uint32_t directories = 0;
  std::uint32_t entries = 0;
  std::vector<Match> matches;
  std::vector<Unreadable> unreadable;
  std::vector<Probe> probes;
  std::vector<std::string> skipped;  // skip entries the walk actually met
};

// Walks the anchor. Errors other than permission on a subtree, or a subtree that vanished during
// the walk, fail the whole discovery; `cancel` (may be null) stops it with ECANCELED.
Result<DiscoverResult> discover(const Root& root, const DiscoverRequest& request,
                                const std::atomic<bool>* cancel);

enum class HoldStatus : std::uint8_t { Held = 0, Missing = 1, Refused = 2 };

struct Held {
  HoldStatus status = HoldStatus::Missing;
  Type type = Type::Unknown;
  Identity identity;
  std::uint64_t nlink = 0;
  Fd fd;        // Held, and not a link: the O_PATH descriptor of exactly what was checked
  Error error;  // Refused: why
};

struct HoldResult {
  Identity anchor;
  std::vector<Held> members;
};

// Most paths one hold may name: each held one is a descriptor.
constexpr std::size_t kMaxHeld = 16384;

Result<HoldResult> hold(const Root& root, const std::vector<std::string>& paths);

// Most anchors one prepare or cleanup may name (each is pinned for the length of the trip).
constexpr std::size_t kMaxAnchors = 1024;

struct PrepareAnchor {
  std::string path;  // absolute and canonical: the trusted spelling, pinned afresh
  bool has_expected = false;
  Identity expected;                // what discovery pinned there; another directory is refused
  std::vector<MkdirsEntry> create;  // anchor-relative, parent before child within the program
  std::vector<std::string> hold;    // anchor-relative, as for hold()
};

struct PrepareRequest {
  Strategy strategy = Strategy::Auto;
  std::vector<PrepareAnchor> anchors;
};

struct PreparedAnchor {
  Identity identity;   // as pinned in this trip (zero when the pin failed)
  Error error;         // the pin failed or the anchor changed: nothing made or held here
  MkdirsOutcome made;  // what was created, even when the program then stopped
  bool held = false;   // the final validation ran on this anchor
  HoldResult holds;    // its members, descriptors included
  Error hold_error;    // the validation as a whole failed (anchor moved, out of descriptors)
};

// Stops creating at the first anchor that fails (what was made so far is answered: the caller
// owns it and cleans it up) and then validates nothing.
Result<std::vector<PreparedAnchor>> prepare(const PrepareRequest& request);

struct CleanupAnchor {
  std::string path;
  Identity identity;  // as pinned when prepared
  std::vector<OwnedDir> owned;
};

struct CleanedAnchor {
  Error error;  // the anchor could not be pinned or is no longer the one prepared: nothing removed
  RmdirsOutcome removed;
};

// A descriptor a prepare handed out, with the identity of what it was opened on: it is closed only
// while it still names that object, so a stale or corrupt request cannot close another descriptor
// of the process that happens to have the same number.
struct Release {
  int fd = -1;
  Identity identity;
};

struct CleanupRequest {
  Strategy strategy = Strategy::Auto;
  std::vector<Release> release;  // closed first
  std::vector<CleanupAnchor> anchors;
};

struct CleanupResult {
  std::uint32_t unreleased = 0;  // release entries whose descriptor named something else: left open
  std::vector<CleanedAnchor> anchors;
};

Result<CleanupResult> cleanup(const CleanupRequest& request);

// The wire form, for the binding: decode `request`, run it, encode the answer. Descriptors in the
// answer are listed in `fds`, owned here until the caller releases them to JavaScript.
struct Answer {
  std::string bytes;
  std::vector<Fd> fds;
};

Result<Answer> run(const Root& root, std::string_view request, const std::atomic<bool>* cancel);

}  // namespace pinnedfs::confine
