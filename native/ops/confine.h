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
//            was checked and never resolves the path again. Each member also answers the identity
//            of every directory between the anchor and it, as the kernel says its parents are
//            (".." from the parent up to the anchor), which is what the sandbox check compares
//            the sandbox's view with; and an empty directory asked to be leased is answered with a
//            read descriptor holding flock(LOCK_SH) on it, kept by the launch for its whole life.
//  prepare   a launch's directories and its final validation in one trip, over every anchor at
//            once: each anchor pinned afresh by its canonical path (and refused if discovery saw
//            another directory there), every missing directory made by one mkdirs program per
//            anchor, then, once all are made, every path held as `hold` does. It names its
//            anchors by absolute path, so it runs only on a handle pinned on "/" (the wire refuses
//            any other), which carries it to the pool.
//  cleanup   the other end: the held descriptors and leases released (closed here, not on the
//            JavaScript thread, each only while it still names the object it was opened on), then
//            each anchor pinned afresh, refused whole if it is no longer the directory prepared,
//            and its directories removed by one rmdirs program (a leased one is kept: another
//            launch relies on it) or, for the private temporary root, purged; then what the launch
//            recorded is marked done and, unless something stays, the record removed; then the
//            records of dead launches are swept (launch_record.cc).
//  sweep     the sweep alone (`pinnedfs run --cleanup`).
//  verify    (Linux) the sandbox of a started launch, checked from outside through /proc/PID/root
//            before its command may start (verify_sandbox.cc).
//
// Requests and answers are little-endian byte strings (see confine_wire.cc): names are bytes end to
// end, so a name holding a newline or invalid UTF-8 survives the trip unchanged. No N-API here.
#pragma once
#include <sys/stat.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../core/entry_kind.h"
#include "../core/error.h"
#include "../core/fd.h"
#include "../core/request.h"
#include "../core/root.h"
#include "../core/value.h"

namespace pinnedfs::confine {

enum class Kind : std::uint8_t {
  Discover = 1,
  Hold = 2,
  Prepare = 3,
  Cleanup = 4,
  Sweep = 5,
  Verify = 6,
  Strays = 7
};

// Protection levels, ordered: a larger value is stricter.

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
  // Components the patterns are stepped through before the walk starts: the anchor is a mount
  // met inside the directory the patterns are relative to, at this relative path.
  std::vector<std::string> prefix;
};

struct Match {
  std::string path;  // anchor-relative, raw bytes
  EntryKind type = EntryKind::Unknown;
  std::uint32_t pattern = 0;  // index of the first pattern that matched
  Identity identity;          // what was there when it matched (the final validation compares)
};

struct Unreadable {
  std::string path;
  int err = 0;
  Access access = Access::None;  // the strictest protection a pattern could still give inside
};

// Beneath: the path lies beneath a mount (listed in DiscoverResult::mounts): probe it from there.
enum class ProbeStatus : std::uint8_t { Missing = 0, Present = 1, Refused = 2, Beneath = 3 };

struct Probe {
  ProbeStatus status = ProbeStatus::Missing;
  EntryKind type = EntryKind::Unknown;
  int err = 0;
  Error error;        // Refused: why
  Identity identity;  // Present
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
  std::vector<std::string> mounts;   // directories the walk would have entered that are mounts
  // A directory listed that was no longer as it was listed when the walk ended (an entry renamed
  // in or out, the directory itself moved): a listing may have missed what moved; walk again.
  bool unstable = false;
  std::string unstable_path;
};

// Walks the anchor. Errors other than permission on a subtree, or a subtree that vanished during
// the walk, fail the whole discovery; `cancel` (may be null) stops it with ECANCELED. Every
// directory listed is checked again when the walk ends (identity, mtime, ctime, links): a rename
// during the walk can hide an entry from every listing, which only a changed directory tells.
Result<DiscoverResult> discover(const Root& root, const DiscoverRequest& request,
                                const std::atomic<bool>* cancel);

// Moved: the member, or a directory on the way to it, is not where it was a moment ago (a parent
// renamed while it was held, a leased directory removed just before the lease): a fresh discovery
// may find it elsewhere.
enum class HoldStatus : std::uint8_t { Held = 0, Missing = 1, Refused = 2, Moved = 3 };

struct HoldPath {
  std::string path;
  bool lease = false;  // an empty directory here is leased (flock LOCK_SH) for the launch's life
};

struct HeldMember {
  HoldStatus status = HoldStatus::Missing;
  EntryKind type = EntryKind::Unknown;
  Identity identity;
  std::uint64_t nlink = 0;
  Fd fd;     // Held, and not a link: the O_PATH descriptor of exactly what was checked
  Fd lease;  // an empty directory asked to be leased: a read descriptor holding LOCK_SH on it
  // The directories between the anchor and the member (its path's proper prefixes, shortest
  // first): zero (not compared) but for the last, the parent it was opened from.
  std::vector<Identity> chain;
  Error error;  // Refused or Moved: why
};

struct HoldResult {
  Identity anchor;
  std::vector<HeldMember> members;
};

// Most paths one hold may name: each held one is a descriptor.
constexpr std::size_t kMaxHeld = 16384;

Result<HoldResult> hold(const Root& root, const std::vector<HoldPath>& paths);

// Most anchors one prepare or cleanup may name (each is pinned for the length of the trip).
constexpr std::size_t kMaxAnchors = 1024;

// What a creation entry is for, as the record keeps it.
enum CreateFlags : std::uint8_t { kCreatePurge = 1, kCreatePermanent = 2 };

struct PrepareAnchor {
  std::string path;  // absolute and canonical: the trusted spelling, pinned afresh
  bool has_expected = false;
  Identity expected;                // what discovery pinned there; another directory is refused
  std::vector<MkdirsEntry> create;  // anchor-relative, parent before child within the program
  std::vector<std::uint8_t> create_flags;  // CreateFlags, one per create entry
  std::vector<HoldPath> hold;              // anchor-relative, as for hold()
};

// A launch's record (launch_record.cc): a descriptor the caller holds, checked before each write.
struct RecordRef {
  int fd = -1;
  Identity identity;
};

struct PrepareRequest {
  Strategy strategy = Strategy::Auto;
  RecordRef record;  // fd -1: nothing is recorded (a test's bare program)
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
// owns it and cleans it up) and then validates nothing. With a record, every anchor that makes
// something is recorded, then every directory about to be made, then every directory made.
Result<std::vector<PreparedAnchor>> prepare(const PrepareRequest& request);

struct CleanupAnchor {
  std::string path;
  Identity identity;  // as pinned when prepared
  std::vector<OwnedDir> owned;
  std::vector<bool> purge;  // per owned member: the private temporary root, purged whole
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

// Where launch records live: `parent`/`name`, `parent` an absolute directory the caller trusts (it
// may pass through links), `name` one component made 0700 when missing and required to be a
// directory of this user closed to everyone else, never followed if it is a link.
struct RuntimePlace {
  std::string parent;
  std::string name;
};

// What a sweep did with one thing a dead launch recorded.
enum class SweptStatus : std::uint8_t { Removed = 0, Kept = 1, Refused = 2 };

struct Swept {
  std::string path;  // absolute
  SweptStatus status = SweptStatus::Removed;
  std::string why;  // Kept, Refused: why
};

struct SweepResult {
  std::vector<Swept> items;
  std::uint32_t records = 0;  // records of dead launches removed whole
  std::uint32_t live = 0;     // records of live launches, left alone
};

struct CleanupRequest {
  Strategy strategy = Strategy::Auto;
  std::vector<Release> release;  // closed first
  std::vector<CleanupAnchor> anchors;
  RecordRef record;         // this launch's record: marked, then removed unless something stays
  RuntimePlace runtime;     // where it lives (and what the sweep looks at)
  std::string record_name;  // its file name there
  bool sweep = false;       // then sweep the records of dead launches
};

struct CleanupResult {
  std::uint32_t unreleased = 0;  // release entries whose descriptor named something else: left open
  std::vector<CleanedAnchor> anchors;
  SweepResult swept;
};

Result<CleanupResult> cleanup(const CleanupRequest& request);

// ---- launch records (launch_record.cc) ----------------------------------------------------------

// The runtime directory, made when missing, checked (this user's, mode 0700 or closer, not a link).
Result<Fd> open_runtime(const RuntimePlace& place);
// A fresh record `name`.launch in it, locked for the life of the descriptor answered.
Result<Fd> create_record(const RuntimePlace& place, const std::string& name);
// Appends one line to a record, only while `record` still names the file it was created as.
Status record_line(const RecordRef& record, const std::string& line);
// The record's line for an anchor and for what a program is about to make and made (paths as
// lowercase hex, so any byte survives).
std::string record_anchor(std::size_t index, const std::string& path, const Identity& identity);
std::string record_intent(std::size_t index, const std::string& relative);
std::string record_made(std::size_t index, const std::string& relative, const Identity& identity,
                        bool purge);
std::string record_done(const std::string& anchor, const std::string& relative);
// The sandbox a launch started: pid 1 of its namespace and that process's start time.
std::string record_sandbox(int pid, std::uint64_t start);
// The start time of a process (field 22 of /proc/PID/stat), 0 when it is gone.
std::uint64_t process_start(int pid);

// Every record in the runtime directory but `own` that no live launch holds: its sandbox killed
// if it still runs, its directories removed (identity-checked, through pinned parents, a leased
// one kept), its temporary root purged, and the record removed once nothing of it stays.
Result<SweepResult> sweep(const RuntimePlace& place, const std::string& own, Strategy strategy);

// ---- the private temporary root (purge.cc) ------------------------------------------------------

// Removes directory `name` of `anchor` and everything in it, iteratively at any depth, giving each
// directory its owner's rwx when a mode stands in the way, while it is still `identity`. Never
// leaves the directory's mount; never follows a link.
Status purge(const Root& anchor, const std::string& name, const Identity& identity);
#ifdef PINNEDFS_TEST_HOOKS
// The directory entries the purges of this thread have read since the last call: a wide directory
// must cost a pass over its entries, not a pass per subdirectory.
std::uint64_t purge_entries_read();
#endif

// ---- the sandbox check (verify_sandbox.cc) ------------------------------------------------------

// What one component on the way to a destination must be in the sandbox.
enum class Expect : std::uint8_t {
  Identity = 0,  // a directory of this dev:ino (the host's: a bind shows the same inode)
  Tmpfs = 1,     // a tmpfs mask's root
  Any = 2,       // inside a tmpfs mask: the sandbox's own, nothing to compare
};

enum class LayerKind : std::uint8_t {
  WritableBind = 1,
  ReadOnlyBind = 2,
  MaskDirectory = 3,
  MaskFile = 4
};

struct ExpectedStep {
  Expect expect = Expect::Identity;
  Identity identity;
};

struct ExpectedLayer {
  std::uint32_t anchor = 0;  // index into VerifyRequest::anchors
  std::string path;          // anchor-relative ("" the anchor itself)
  LayerKind kind = LayerKind::ReadOnlyBind;
  Identity identity;                // binds: what is bound
  std::uint32_t perms = 0;          // masks: the mode
  std::vector<ExpectedStep> steps;  // one per proper prefix of `path`
};

struct VerifyRequest {
  int pid = 0;        // bubblewrap's child-pid: pid 1 of the sandbox
  int block_fd = -1;  // >= 0: first wait until that process is blocked reading this descriptor
  std::uint32_t wait_ms = 0;
  RecordRef record;                                       // the sandbox is recorded there first
  std::vector<std::pair<std::string, Identity>> anchors;  // absolute paths
  std::vector<ExpectedLayer> layers;
};

struct VerifyResult {
  bool ok = false;
  bool moved = false;  // a destination is not what the final validation saw: worth a fresh try
  bool died = false;   // the sandbox exited while it set itself up (bubblewrap said why)
  std::string why;
};

Result<VerifyResult> verify_sandbox(const VerifyRequest& request);

// ---- what a refused sandbox left (strays.cc) ----------------------------------------------------

// A directory on the way to a destination, as the final validation recorded it (zero: any
// directory found at that path).
struct StrayPlace {
  std::string path;  // anchor-relative ("" the anchor itself)
  Identity identity;
};

struct StrayAnchor {
  std::string path;  // absolute, canonical
  Identity identity;
  std::vector<StrayPlace> dirs;
};

struct StraysRequest {
  Strategy strategy = Strategy::Auto;
  std::uint64_t since_ns = 0;  // the refused sandbox started then (CLOCK_REALTIME)
  RecordRef record;            // what is kept is recorded there, for a later sweep
  std::vector<StrayAnchor> anchors;
};

struct StraysResult {
  std::vector<std::string> removed;  // absolute
  // Kept (a launch leases one, or its leased child keeps it from being empty): recorded as made,
  // so the last launch relying on it, or a sweep, removes it; the caller counts them as its own.
  struct Kept {
    std::size_t anchor = 0;  // index into the request's anchors
    std::string path;        // anchor-relative
    Identity identity;
  };
  std::vector<Kept> kept;
};

// In each directory listed (still the one recorded), every directory born since `since_ns` whose
// tree holds nothing but empty directories (what bubblewrap makes for a destination that had
// moved) is removed, child before parent, identity-checked, a leased one kept. Where the file
// system keeps no birth time nothing is removed.
Result<StraysResult> remove_strays(const StraysRequest& request);

// The wire form, for the binding: decode `request`, run it, encode the answer. Descriptors in the
// answer are listed in `fds`, owned here until the caller releases them to JavaScript.
struct Answer {
  std::string bytes;
  std::vector<Fd> fds;
};

Result<Answer> run(const Root& root, std::string_view request, const std::atomic<bool>* cancel);

}  // namespace pinnedfs::confine
