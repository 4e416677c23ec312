// The confinement programs (discover, hold, prepare, cleanup) and their byte form, straight on the
// core, both strategies.
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "harness.h"
#include "ops/confine.h"
#include "ops/ops.h"

using namespace pinnedfs;
using namespace pinnedfs::confine;

namespace {

const std::vector<Strategy>& kStrategies = test::strategies();

std::vector<HoldPath> paths(std::initializer_list<const char*> list) {
  std::vector<HoldPath> out;
  for (const char* p : list) out.push_back(HoldPath{p, false});
  return out;
}

bool has_match(const DiscoverResult& r, const std::string& path) {
  return std::any_of(r.matches.begin(), r.matches.end(),
                     [&](const Match& m) { return m.path == path; });
}

// A tree with nested repositories, a link to an outside tree that holds one too, a name with a
// newline and one that is not UTF-8.
std::string make_tree(const std::string& outside) {
  std::string dir = test::scratch_dir();
  for (const char* d : {"/.git", "/.git/objects", "/a", "/a/.git", "/a/b", "/a/b/.git", "/skipme",
                        "/skipme/.git", "/deep", "/deep/x", "/deep/x/y"}) {
    ::mkdir((dir + d).c_str(), 0755);
  }
  ::mkdir((outside + "/.git").c_str(), 0755);
  ::symlink(outside.c_str(), (dir + "/out").c_str());
  test::write_file(dir + "/a/.env.local", "TOKEN");
  test::write_file(dir + "/new\nline.pem", "k");
  test::write_file(dir + "/bad\xff.pem", "k");
  return dir;
}

DiscoverRequest git_and_pem() {
  DiscoverRequest r;
  r.patterns = {{"**/.git", Access::ReadOnly},
                {"**/*.pem", Access::Inaccessible},
                {"**/.env*", Access::Inaccessible}};
  return r;
}

}  // namespace

TEST(discover_finds_prunes_and_never_follows_a_link) {
  for (Strategy s : kStrategies) {
    std::string outside = test::scratch_dir();
    std::string dir = make_tree(outside);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    DiscoverRequest r = git_and_pem();
    r.skip = {"skipme"};
    r.probes = {".git", "missing/x", "out/.git"};
    auto found = discover(*root.value(), r, nullptr);
    CHECK(found.ok());
    const DiscoverResult& d = found.value();
    CHECK(d.truncated == Truncation::None);
    CHECK(has_match(d, ".git") && has_match(d, "a/.git") && has_match(d, "a/b/.git"));
    CHECK(has_match(d, "a/.env.local"));
    CHECK(has_match(d, "new\nline.pem") && has_match(d, "bad\xff.pem"));
    // Nothing through the link, nothing inside a matched tree, nothing in the skipped tree.
    for (const Match& m : d.matches) {
      CHECK(m.path.rfind("out", 0) != 0);
      CHECK(m.path.find(".git/") == std::string::npos);
      CHECK(m.path.rfind("skipme", 0) != 0);
    }
    CHECK(d.skipped.size() == 1 && d.skipped[0] == "skipme");
    CHECK(d.probes.size() == 3);
    CHECK(d.probes[0].status == ProbeStatus::Present && d.probes[0].type == EntryKind::Directory);
    CHECK(d.probes[1].status == ProbeStatus::Missing && d.probes[1].err == ENOENT);
    CHECK(d.probes[2].status == ProbeStatus::Refused &&
          d.probes[2].error.refusal == Refusal::Symlink);
    // Matched trees were not entered: .git, a/.git and a/b/.git would add three directories.
    CHECK(d.directories == 6);  // root, a, a/b, deep, deep/x, deep/x/y
  }
}

TEST(discover_reports_a_matched_link_as_a_link) {
  for (Strategy s : kStrategies) {
    std::string outside = test::scratch_dir();
    std::string dir = test::scratch_dir();
    CHECK(::symlink(outside.c_str(), (dir + "/.git").c_str()) == 0);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto found = discover(*root.value(), git_and_pem(), nullptr);
    CHECK(found.ok());
    CHECK(found.value().matches.size() == 1 && found.value().matches[0].type == EntryKind::Link);
  }
}

TEST(discover_stops_at_its_bounds_and_says_so) {
  for (Strategy s : kStrategies) {
    std::string outside = test::scratch_dir();
    auto root = Root::pin(make_tree(outside), s);
    CHECK(root.ok());
    DiscoverRequest r = git_and_pem();
    r.max_entries = 3;
    auto a = discover(*root.value(), r, nullptr);
    CHECK(a.ok() && a.value().truncated == Truncation::Entries);
    r = git_and_pem();
    r.max_matches = 1;
    auto b = discover(*root.value(), r, nullptr);
    CHECK(b.ok() && b.value().truncated == Truncation::Matches);
    r = git_and_pem();
    r.max_depth = 2;
    auto c = discover(*root.value(), r, nullptr);
    CHECK(c.ok() && c.value().truncated == Truncation::Depth);
  }
}

TEST(discover_is_cancelled_by_its_flag) {
  for (Strategy s : kStrategies) {
    std::string outside = test::scratch_dir();
    auto root = Root::pin(make_tree(outside), s);
    CHECK(root.ok());
    std::atomic<bool> cancel{true};
    auto found = discover(*root.value(), git_and_pem(), &cancel);
    CHECK(!found.ok() && found.error().err == ECANCELED);
  }
}

TEST(discover_refuses_patterns_that_leave_the_anchor) {
  std::string dir = test::scratch_dir();
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  for (const char* bad : {"../x", "/etc/*", "a/../../b"}) {
    DiscoverRequest r;
    r.patterns = {{bad, Access::ReadOnly}};
    auto found = discover(*root.value(), r, nullptr);
    CHECK(!found.ok() && found.error().refusal == Refusal::BadArgument);
  }
}

TEST(hold_opens_afresh_without_following_and_hands_out_descriptors) {
  for (Strategy s : kStrategies) {
    std::string outside = test::scratch_dir();
    std::string dir = make_tree(outside);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto held = hold(*root.value(), paths({"", ".git", "out", "out/.git", "nope", "a/.env.local"}));
    CHECK(held.ok());
    auto& m = held.value().members;
    CHECK(m.size() == 6);
    CHECK(m[0].status == HoldStatus::Held && m[0].type == EntryKind::Directory && m[0].fd.valid());
    CHECK(m[1].status == HoldStatus::Held && m[1].type == EntryKind::Directory && m[1].fd.valid());
    CHECK(m[2].status == HoldStatus::Held && m[2].type == EntryKind::Link && !m[2].fd.valid());
    CHECK(m[3].status == HoldStatus::Refused && m[3].error.refusal == Refusal::Symlink);
    CHECK(m[4].status == HoldStatus::Missing);
    CHECK(m[5].status == HoldStatus::Held && m[5].type == EntryKind::File && m[5].nlink == 1);
    struct stat a, b;
    CHECK(::fstat(m[1].fd.get(), &a) == 0 && ::lstat((dir + "/.git").c_str(), &b) == 0);
    CHECK(a.st_ino == b.st_ino && a.st_dev == b.st_dev);
  }
}

TEST(hold_refuses_an_anchor_whose_path_changed) {
  std::string base = test::scratch_dir();
  std::string dir = base + "/ws";
  CHECK(::mkdir(dir.c_str(), 0755) == 0);
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  CHECK(::rename(dir.c_str(), (base + "/moved").c_str()) == 0);
  CHECK(::mkdir(dir.c_str(), 0755) == 0);
  auto held = hold(*root.value(), paths({""}));
  CHECK(!held.ok() && held.error().refusal == Refusal::IdentityChanged);
}

TEST(confine_wire_refuses_malformed_requests) {
  std::string dir = test::scratch_dir();
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  const std::string bad[] = {
      std::string(),                                           // empty
      std::string("\x09", 1),                                  // unknown program
      std::string("\x01\x01\x00", 3),                          // truncated limits
      std::string("\x02\xff\xff\xff\xff", 5),                  // a list far too long
      std::string("\x02\x01\x00\x00\x00\x10\x00\x00\x00", 9),  // a string past the end
      std::string("\x02\x00\x00\x00\x00\x00", 6),              // trailing bytes
  };
  for (const std::string& b : bad) {
    auto r = run(*root.value(), b, nullptr);
    CHECK(!r.ok() && r.error().refusal == Refusal::BadArgument);
  }
  // A well-formed hold of the root answers one held member and one descriptor.
  auto ok =
      run(*root.value(), std::string("\x02\x01\x00\x00\x00\x00\x00\x00\x00\x00", 10), nullptr);
  CHECK(ok.ok() && ok.value().fds.size() == 1);
}

TEST(prepare_makes_and_holds_in_one_program_and_cleanup_removes_and_releases) {
  for (Strategy s : kStrategies) {
    std::string base = test::scratch_dir();
    CHECK(::mkdir((base + "/state").c_str(), 0755) == 0);
    CHECK(::mkdir((base + "/ws").c_str(), 0755) == 0);
    PrepareRequest r;
    r.strategy = s;
    PrepareAnchor state;
    state.path = base + "/state";
    state.create = {{"launch", 0700}, {"launch/tmp", 0700}, {"launch/cache", 0750}};
    state.hold = paths({"launch", "launch/tmp"});
    PrepareAnchor ws;
    ws.path = base + "/ws";
    ws.hold = paths({""});
    r.anchors = {state, ws};
    auto prepared = prepare(r);
    CHECK(prepared.ok());
    auto& a = prepared.value();
    CHECK(a.size() == 2 && a[0].error.err == 0 && !a[0].made.failed);
    CHECK(a[0].made.created.size() == 3);
    CHECK(a[0].held && a[0].holds.members.size() == 2 && a[1].held);
    CHECK(a[0].holds.members[0].status == HoldStatus::Held &&
          a[0].holds.members[0].identity == a[0].made.created[0].identity);
    struct stat st;
    CHECK(::stat((base + "/state/launch/cache").c_str(), &st) == 0 && (st.st_mode & 07777) == 0750);
    // Cleanup: the descriptors released (one of them named with a wrong identity stays open),
    // then the directories removed.
    CleanupRequest c;
    c.strategy = s;
    Fd& first = a[0].holds.members[0].fd;
    Fd& second = a[0].holds.members[1].fd;
    c.release = {{first.get(), a[0].holds.members[0].identity}, {second.get(), Identity{1, 1}}};
    CleanupAnchor anchor;
    anchor.path = base + "/state";
    anchor.identity = a[0].identity;
    for (const CreatedDir& d : a[0].made.created)
      anchor.owned.push_back({d.path, d.identity, true, false});
    c.anchors = {anchor};
    auto cleaned = cleanup(c);
    CHECK(cleaned.ok() && cleaned.value().unreleased == 1);
    CHECK(::fcntl(first.get(), F_GETFD) == -1 && errno == EBADF);
    first.release();
    CHECK(::fcntl(second.get(), F_GETFD) != -1);
    CHECK(cleaned.value().anchors.size() == 1 && cleaned.value().anchors[0].error.err == 0);
    for (const RmdirMember& m : cleaned.value().anchors[0].removed.members)
      CHECK(m.status == RmdirStatus::Removed);
    CHECK(::lstat((base + "/state/launch").c_str(), &st) != 0 && errno == ENOENT);
  }
}

TEST(prepare_refuses_an_anchor_that_changed_before_making_anything) {
  std::string base = test::scratch_dir();
  std::string dir = base + "/ws";
  CHECK(::mkdir(dir.c_str(), 0755) == 0);
  auto was = identify_path(dir);
  CHECK(was.ok());
  CHECK(::rename(dir.c_str(), (base + "/moved").c_str()) == 0);
  CHECK(::mkdir(dir.c_str(), 0755) == 0);
  PrepareRequest r;
  PrepareAnchor a;
  a.path = dir;
  a.has_expected = true;
  a.expected = was.value();
  a.create = {{".git", 0755}};
  a.hold = paths({""});
  r.anchors = {a};
  auto prepared = prepare(r);
  CHECK(prepared.ok() && prepared.value()[0].error.refusal == Refusal::IdentityChanged);
  CHECK(prepared.value()[0].made.created.empty() && !prepared.value()[0].held);
  struct stat st;
  CHECK(::lstat((dir + "/.git").c_str(), &st) != 0 && errno == ENOENT);
  // Cleanup of an anchor that is no longer the one prepared removes nothing there.
  CHECK(::mkdir((dir + "/made").c_str(), 0755) == 0);
  auto made = identify_path(dir + "/made");
  CHECK(made.ok());
  CleanupRequest c;
  c.anchors = {{dir, was.value(), {{"made", made.value(), true, false}}, {false}}};
  auto cleaned = cleanup(c);
  CHECK(cleaned.ok() && cleaned.value().anchors[0].error.refusal == Refusal::IdentityChanged);
  CHECK(::lstat((dir + "/made").c_str(), &st) == 0);
}

TEST(prepare_and_cleanup_run_only_on_a_handle_of_slash) {
  std::string dir = test::scratch_dir();
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  // Well-formed and empty: strategy auto, no anchors (cleanup: nothing released either).
  const std::string prepare_none("\x03\x00\x00\x00\x00\x00\x00", 7);
  // No release, no anchor, record -1 with no identity, empty runtime place and name, no sweep.
  const std::string cleanup_none = std::string("\x04\x00", 2) + std::string(8, '\0') +
                                   std::string("\xff\xff\xff\xff", 4) +
                                   std::string(16 + 12 + 1, '\0');
  for (const std::string& b : {prepare_none, cleanup_none}) {
    auto refused = run(*root.value(), b, nullptr);
    CHECK(!refused.ok() && refused.error().refusal == Refusal::BadArgument);
  }
  auto slash = Root::pin("/", Strategy::Walk);
  CHECK(slash.ok());
  for (const std::string& b : {prepare_none, cleanup_none})
    CHECK(run(*slash.value(), b, nullptr).ok());
}

namespace {

Identity id_of(const std::string& path) {
  struct stat st;
  ::lstat(path.c_str(), &st);
  return identity_of(st);
}

// Whether another open file description could take LOCK_EX on `path` right now.
bool lockable(const std::string& path) {
  Fd fd(::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  return fd.valid() && ::flock(fd.get(), LOCK_EX | LOCK_NB) == 0;
}

}  // namespace

TEST(hold_answers_the_chain_of_parents_and_leases_every_directory) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    for (const char* d : {"/a", "/a/b", "/a/b/empty", "/a/b/full"})
      ::mkdir((dir + d).c_str(), 0755);
    test::write_file(dir + "/a/b/full/f", "x");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto held = hold(*root.value(),
                     {{"a/b/empty", true}, {"a/b/full", true}, {"a", true}, {"a/b/empty", false}});
    CHECK(held.ok());
    auto& m = held.value().members;
    CHECK(m[0].status == HoldStatus::Held && m[0].chain.size() == 2);
    // The parent it was opened from; what lies above that is not needed (see hold.cc).
    CHECK(m[0].chain[0] == Identity{} && m[0].chain[1] == id_of(dir + "/a/b"));
    CHECK(m[2].chain.empty());
    // Every directory asked for is leased, and the lease stops an exclusive lock. One with content
    // too: emptied later from outside, a sweep must still find it leased and leave it.
    CHECK(m[0].lease.valid() && m[1].lease.valid() && m[2].lease.valid() && !m[3].lease.valid());
    CHECK(!lockable(dir + "/a/b/empty"));
    m[0].lease.reset();
    CHECK(lockable(dir + "/a/b/empty"));
    ::unlink((dir + "/a/b/full/f").c_str());
    CHECK(!lockable(dir + "/a/b/full"));
    m[1].lease.reset();
    CHECK(lockable(dir + "/a/b/full"));
  }
}

TEST(rmdirs_keeps_a_leased_directory_and_removes_it_once_the_lease_is_gone) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    ::mkdir((dir + "/.git").c_str(), 0755);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto held = hold(*root.value(), {{".git", true}});
    CHECK(held.ok() && held.value().members[0].lease.valid());
    Request r;
    r.op = Op::Rmdirs;
    r.owned = {OwnedDir{".git", id_of(dir + "/.git"), true, true}};
    auto kept = ops::rmdirs(*root.value(), r);
    CHECK(kept.ok());
    const RmdirMember& k = std::get<RmdirsOutcome>(kept.value()).members[0];
    CHECK(k.status == RmdirStatus::Kept && k.error.err == EBUSY);
    struct stat st;
    CHECK(::lstat((dir + "/.git").c_str(), &st) == 0);
    held.value().members[0].lease.reset();
    auto removed = ops::rmdirs(*root.value(), r);
    CHECK(removed.ok() &&
          std::get<RmdirsOutcome>(removed.value()).members[0].status == RmdirStatus::Removed);
    CHECK(::lstat((dir + "/.git").c_str(), &st) != 0 && errno == ENOENT);
  }
}

TEST(purge_reads_a_wide_directory_once_not_once_per_subdirectory) {
  std::string dir = test::scratch_dir();
  std::string top = dir + "/pinnedfs-confine-00000000000000aa";
  CHECK(::mkdir(top.c_str(), 0700) == 0);
  Fd at(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  // 3,000 subdirectories (one file in each) between 3,000 files: 9,000 entries in all.
  constexpr int kWide = 3000;
  for (int i = 0; i < kWide; ++i) {
    std::string n = std::to_string(i);
    CHECK(::mkdirat(at.get(), ("d" + n).c_str(), 0755) == 0);
    int f = ::openat(at.get(), ("f" + n).c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(f >= 0);
    ::close(f);
    f = ::openat(at.get(), ("d" + n + "/x").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
    CHECK(f >= 0);
    ::close(f);
  }
  at.reset();
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  purge_entries_read();
  CHECK(purge(*root.value(), "pinnedfs-confine-00000000000000aa", id_of(top)).ok());
  std::uint64_t read = purge_entries_read();
  struct stat st;
  CHECK(::lstat(top.c_str(), &st) != 0 && errno == ENOENT);
  // Linear: a few reads per entry at most. A pass over the whole directory per subdirectory read
  // millions (kWide * kWide).
  std::fprintf(stderr, "  purge read %llu entries for %d\n", static_cast<unsigned long long>(read),
               3 * kWide);
  CHECK(read <= 4u * 3 * kWide);
}

TEST(purge_removes_a_tree_deeper_than_path_max_with_closed_directories) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string top = dir + "/pinnedfs-confine-0123456789abcdef";
    CHECK(::mkdir(top.c_str(), 0700) == 0);
    Fd at(::open(top.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    // 600 levels of 12-byte names: 7,800 bytes of path, with closed modes on the way.
    for (int i = 0; i < 600; ++i) {
      CHECK(::mkdirat(at.get(), "level-name-x", 0755) == 0);
      int fd = ::openat(at.get(), "level-name-x", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
      CHECK(fd >= 0);
      int f = ::openat(fd, "file", O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
      ::close(f);
      if (i % 100 == 50) ::fchmod(fd, 0500);
      at = Fd(fd);
    }
    CHECK(::symlinkat("/", at.get(), "root-link") == 0);
    at.reset();
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    CHECK(
        purge(*root.value(), "pinnedfs-confine-0123456789abcdef", Identity{1, 1}).error().refusal ==
        Refusal::IdentityChanged);
    auto purged = purge(*root.value(), "pinnedfs-confine-0123456789abcdef", id_of(top));
    CHECK(purged.ok());
    struct stat st;
    CHECK(::lstat(top.c_str(), &st) != 0 && errno == ENOENT);
    CHECK(::lstat("/", &st) == 0);
  }
}

TEST(a_dead_launch_record_is_swept_and_a_live_one_left_alone) {
  for (Strategy s : kStrategies) {
    std::string base = test::scratch_dir();
    ::mkdir((base + "/ws").c_str(), 0755);
    RuntimePlace place{base, "run"};
    // A dead launch: made .git and its temporary root, recorded, then gone (its descriptor closed).
    auto record = create_record(place, std::string(32, 'a'));
    CHECK(record.ok());
    PrepareRequest r;
    r.strategy = s;
    r.record =
        RecordRef{record.value().get(), id_of(base + "/run/" + std::string(32, 'a') + ".launch")};
    PrepareAnchor ws;
    ws.path = base + "/ws";
    ws.create = {{".git", 0755}, {"pinnedfs-confine-00000000000000ff", 0700}, {"keep", 0700}};
    ws.create_flags = {0, kCreatePurge, kCreatePermanent};
    r.anchors = {ws};
    auto prepared = prepare(r);
    CHECK(prepared.ok() && prepared.value()[0].made.created.size() == 3);
    test::write_file(base + "/ws/pinnedfs-confine-00000000000000ff/junk", "x");
    record.value().reset();
    // A live launch holding a lease on the .git.
    auto live = create_record(place, std::string(32, 'b'));
    CHECK(live.ok());
    auto root = Root::pin(base + "/ws", s);
    CHECK(root.ok());
    auto leased = hold(*root.value(), {{".git", true}});
    CHECK(leased.ok() && leased.value().members[0].lease.valid());
    auto first = sweep(place, std::string(32, 'c'), s);
    CHECK(first.ok() && first.value().live == 1 && first.value().records == 0);
    struct stat st;
    CHECK(::lstat((base + "/ws/.git").c_str(), &st) == 0);  // leased: kept
    CHECK(::lstat((base + "/ws/pinnedfs-confine-00000000000000ff").c_str(), &st) != 0);  // purged
    CHECK(::lstat((base + "/ws/keep").c_str(), &st) == 0);  // permanent: never recorded
    leased.value().members[0].lease.reset();
    auto second = sweep(place, std::string(32, 'c'), s);
    CHECK(second.ok() && second.value().records == 1);
    CHECK(::lstat((base + "/ws/.git").c_str(), &st) != 0 && errno == ENOENT);
    CHECK(::lstat((base + "/run/" + std::string(32, 'a') + ".launch").c_str(), &st) != 0);
    CHECK(::lstat((base + "/run/" + std::string(32, 'b') + ".launch").c_str(), &st) == 0);
  }
}

TEST(the_runtime_directory_must_be_this_users_closed_and_not_a_link) {
  std::string base = test::scratch_dir();
  ::mkdir((base + "/open").c_str(), 0755);
  auto open = open_runtime({base, "open"});
  CHECK(!open.ok() && open.error().description.find("mode 0755") != std::string::npos);
  ::symlink(base.c_str(), (base + "/link").c_str());
  auto link = open_runtime({base, "link"});
  CHECK(!link.ok() && link.error().refusal == Refusal::Symlink);
  CHECK(!open_runtime({"relative", "x"}).ok() && !open_runtime({base, "a/b"}).ok());
  auto made = open_runtime({base, "fresh"});
  struct stat st;
  CHECK(made.ok() && ::fstat(made.value().get(), &st) == 0 && (st.st_mode & 07777) == 0700);
  CHECK(!create_record({base, "fresh"}, "not-hex").ok());
}

TEST(strays_removes_fresh_empty_trees_only_and_keeps_a_leased_one) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    // What bubblewrap makes for a moved destination, one with a file in it, a real directory, and
    // one a concurrent launch has leased.
    for (const char* d : {"/sub", "/sub/.git", "/full", "/real", "/held", "/held/.git"})
      ::mkdir((dir + d).c_str(), 0755);
    test::write_file(dir + "/full/f", "x");
    test::write_file(dir + "/real/f", "x");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto leased = hold(*root.value(), {{"held/.git", true}});
    CHECK(leased.ok() && leased.value().members[0].lease.valid());
    StraysRequest r;
    r.strategy = s;
    r.anchors = {{dir, root.value()->identity(), {{"", root.value()->identity()}}}};
    struct statx sx;
    bool btime = ::statx(AT_FDCWD, (dir + "/sub").c_str(), 0, STATX_BTIME, &sx) == 0 &&
                 (sx.stx_mask & STATX_BTIME);
    struct stat st;
    // Born before the sandbox started: not its bubblewrap's, whatever its shape.
    struct timespec ts;
    ::clock_gettime(CLOCK_REALTIME, &ts);
    r.since_ns = (static_cast<std::uint64_t>(ts.tv_sec) + 3600) * 1000000000u;
    auto none = remove_strays(r);
    CHECK(none.ok() && none.value().removed.empty());
    CHECK(::lstat((dir + "/sub/.git").c_str(), &st) == 0);
    // Born since: the trees of empty directories go, anything with a file stays, a leased one is
    // kept.
    r.since_ns = 0;
    auto out = remove_strays(r);
    CHECK(out.ok());
    CHECK(::lstat((dir + "/real/f").c_str(), &st) == 0 &&
          ::lstat((dir + "/full/f").c_str(), &st) == 0);
    if (btime) {
      CHECK(::lstat((dir + "/sub").c_str(), &st) != 0 && errno == ENOENT);
      CHECK(::lstat((dir + "/held/.git").c_str(), &st) == 0);
      CHECK(out.value().kept.size() ==
            2);  // held/.git (in use), and held, which it keeps from being empty
    } else {
      CHECK(::lstat((dir + "/sub").c_str(), &st) == 0);  // no birth time: nothing removed
    }
  }
}
