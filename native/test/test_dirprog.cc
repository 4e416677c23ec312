// The directory programs and recursive removal, straight on the core (no N-API), both strategies.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/execute.h"
#include "harness.h"

using namespace pinnedfs;

namespace {

const std::vector<Strategy>& kStrategies = test::strategies();

mode_t mode_of(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0 ? (st.st_mode & 07777) : 0xFFFF;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

Request mkdirs_request(std::initializer_list<const char*> paths, std::uint32_t mode) {
  Request r;
  r.op = Op::Mkdirs;
  for (const char* p : paths) r.plan.push_back(MkdirsEntry{p, mode});
  return r;
}

}  // namespace

TEST(mkdirs_creates_a_plan_with_exact_modes_and_rmdirs_removes_it) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    mode_t old = ::umask(077);
    auto made =
        execute(*root.value(), mkdirs_request({"a/b/c", "a", "a/d", "a/b", "e"}, 0755), false);
    ::umask(old);
    CHECK(made.ok());
    auto& outcome = std::get<MkdirsOutcome>(made.value());
    CHECK(!outcome.failed);
    CHECK(outcome.created.size() == 5);
    CHECK(outcome.created[0].path == "a" && outcome.created[1].path == "a/b");
    for (const char* p : {"a", "a/b", "a/b/c", "a/d", "e"}) CHECK(mode_of(dir + "/" + p) == 0755);

    Request rm;
    rm.op = Op::Rmdirs;
    for (auto& c : outcome.created) rm.owned.push_back(OwnedDir{c.path, c.identity, false});
    auto gone = execute(*root.value(), rm, false);
    CHECK(gone.ok());
    auto& r = std::get<RmdirsOutcome>(gone.value());
    CHECK(!r.stopped);
    CHECK(r.members.size() == 5);
    for (auto& m : r.members) CHECK(m.status == RmdirStatus::Removed);
    CHECK(!exists(dir + "/a"));
  }
}

TEST(mkdirs_conflict_after_planning_stops_before_chmod_and_keeps_ownership) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/x").c_str(), 0700) == 0);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request r = mkdirs_request({"x/a", "x/b", "x/c"}, 0777);
    r.after_plan.push_back(HookStep{HookStep::Kind::Mkdir, "x/b", ""});
    mode_t old = ::umask(077);
    auto made = execute(*root.value(), r, false);
    ::umask(old);
    CHECK(made.ok());
    auto& outcome = std::get<MkdirsOutcome>(made.value());
    CHECK(outcome.failed);
    CHECK(outcome.error.err == EEXIST);
    CHECK(outcome.created.size() == 1 && outcome.created[0].path == "x/a");
    CHECK(mode_of(dir + "/x/a") == 0777);
    CHECK(mode_of(dir + "/x/b") == 0700);  // the newcomer: never chmod'ed
    CHECK(!exists(dir + "/x/c"));
  }
}

TEST(mkdirs_refuses_an_existing_link_and_creates_nothing) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string outside = test::scratch_dir();
    CHECK(::symlink(outside.c_str(), (dir + "/ln").c_str()) == 0);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto made = execute(*root.value(), mkdirs_request({"fresh", "ln/sub"}, 0700), false);
    CHECK(made.ok());
    auto& outcome = std::get<MkdirsOutcome>(made.value());
    CHECK(outcome.failed && outcome.error.refusal == Refusal::Symlink);
    CHECK(outcome.created.empty());
    CHECK(!exists(dir + "/fresh"));
    CHECK(!exists(outside + "/sub"));
  }
}

TEST(remove_recursive_removes_links_as_entries) {
  for (Strategy s : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string outside = test::scratch_dir();
    test::write_file(outside + "/keep", "keep");
    CHECK(::mkdir((dir + "/t").c_str(), 0700) == 0);
    CHECK(::mkdir((dir + "/t/sub").c_str(), 0700) == 0);
    test::write_file(dir + "/t/sub/f", "f");
    CHECK(::symlink(outside.c_str(), (dir + "/t/sub/out").c_str()) == 0);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request r;
    r.op = Op::Remove;
    r.path = "t";
    auto plain = execute(*root.value(), r, false);
    CHECK(!plain.ok() && plain.error().err == EISDIR);
    r.recursive = true;
    CHECK(execute(*root.value(), r, false).ok());
    CHECK(!exists(dir + "/t"));
    CHECK(exists(outside + "/keep"));
    r.path = "";
    auto whole = execute(*root.value(), r, false);
    CHECK(!whole.ok() && whole.error().refusal == Refusal::BadArgument);
  }
}
