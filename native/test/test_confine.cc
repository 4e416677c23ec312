// The confinement programs (discover, hold, prepare, cleanup) and their byte form, straight on the
// core, both strategies.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>

#include "harness.h"
#include "ops/confine.h"

using namespace pinnedfs;
using namespace pinnedfs::confine;

namespace {

const std::vector<Strategy>& kStrategies = test::strategies();

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
    CHECK(d.probes[0].status == ProbeStatus::Present && d.probes[0].type == Type::Directory);
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
    CHECK(found.value().matches.size() == 1 && found.value().matches[0].type == Type::Link);
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
    auto held = hold(*root.value(), {"", ".git", "out", "out/.git", "nope", "a/.env.local"});
    CHECK(held.ok());
    auto& m = held.value().members;
    CHECK(m.size() == 6);
    CHECK(m[0].status == HoldStatus::Held && m[0].type == Type::Directory && m[0].fd.valid());
    CHECK(m[1].status == HoldStatus::Held && m[1].type == Type::Directory && m[1].fd.valid());
    CHECK(m[2].status == HoldStatus::Held && m[2].type == Type::Link && !m[2].fd.valid());
    CHECK(m[3].status == HoldStatus::Refused && m[3].error.refusal == Refusal::Symlink);
    CHECK(m[4].status == HoldStatus::Missing);
    CHECK(m[5].status == HoldStatus::Held && m[5].type == Type::File && m[5].nlink == 1);
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
  auto held = hold(*root.value(), {""});
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
  auto ok = run(*root.value(), std::string("\x02\x01\x00\x00\x00\x00\x00\x00\x00", 9), nullptr);
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
    state.hold = {"launch", "launch/tmp"};
    PrepareAnchor ws;
    ws.path = base + "/ws";
    ws.hold = {""};
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
      anchor.owned.push_back({d.path, d.identity, true});
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
  a.hold = {""};
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
  c.anchors = {{dir, was.value(), {{"made", made.value(), true}}}};
  auto cleaned = cleanup(c);
  CHECK(cleaned.ok() && cleaned.value().anchors[0].error.refusal == Refusal::IdentityChanged);
  CHECK(::lstat((dir + "/made").c_str(), &st) == 0);
}

TEST(prepare_and_cleanup_run_only_on_a_handle_of_slash) {
  std::string dir = test::scratch_dir();
  auto root = Root::pin(dir, Strategy::Walk);
  CHECK(root.ok());
  // Well-formed and empty: strategy auto, no anchors (cleanup: nothing released either).
  const std::string prepare_none("\x03\x00\x00\x00\x00\x00", 6);
  const std::string cleanup_none("\x04\x00\x00\x00\x00\x00\x00\x00\x00\x00", 10);
  for (const std::string& b : {prepare_none, cleanup_none}) {
    auto refused = run(*root.value(), b, nullptr);
    CHECK(!refused.ok() && refused.error().refusal == Refusal::BadArgument);
  }
  auto slash = Root::pin("/", Strategy::Walk);
  CHECK(slash.ok());
  for (const std::string& b : {prepare_none, cleanup_none})
    CHECK(run(*slash.value(), b, nullptr).ok());
}
