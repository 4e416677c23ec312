// The core pieces behind PinnedRoot's signal, openRoot and sorted listings: a cancelled operation
// stops before its next act (and a replacement before its rename), a root pinned beneath another
// resolves as the parent does and cannot climb out of itself, a listing answers sorted.
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "core/cancel.h"
#include "core/execute.h"
#include "harness.h"

using namespace pinnedfs;

namespace {
Request request_of(Op op, const std::string& path) {
  Request r;
  r.op = op;
  r.path = path;
  return r;
}
bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
}  // namespace

TEST(cancel_stops_a_recursive_remove_and_a_replacement_and_a_listing) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/t").c_str(), 0755) == 0);
    test::write_file(dir + "/t/f", "x");
    test::write_file(dir + "/keep", "old");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    std::atomic<bool> flag{true};
    {
      CancelScope scope(&flag);
      Request rm = request_of(Op::Remove, "t");
      rm.recursive = true;
      auto removed = execute(*root.value(), rm, false, "");
      CHECK(!removed.ok() && removed.error().err == ECANCELED);
      Request w = request_of(Op::WriteFile, "keep");
      w.data = "new";
      auto written = execute(*root.value(), w, false, "");
      CHECK(!written.ok() && written.error().err == ECANCELED);
      Request ls = request_of(Op::ReadDirectory, "");
      auto listed = execute(*root.value(), ls, false, "");
      CHECK(!listed.ok() && listed.error().err == ECANCELED);
    }
    CHECK(exists(dir + "/t/f"));
    CHECK(test::read_file(dir + "/keep") == "old");
    // No temporary left beside the file the write did not replace.
    auto after = execute(*root.value(), request_of(Op::ReadDirectory, ""), false, "");
    CHECK(after.ok());
    CHECK((std::get<Names>(after.value()).names == std::vector<std::string>{"keep", "t"}));
    // Outside the scope the same flag is nobody's: the remove runs.
    Request rm = request_of(Op::Remove, "t");
    rm.recursive = true;
    CHECK(execute(*root.value(), rm, false, "").ok());
    CHECK(!exists(dir + "/t"));
  }
}

TEST(listing_answers_sorted_by_bytes) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    for (const char* n : {"b", "a", "B", "_", "a-b", "\xc3\xa9"})
      test::write_file(dir + "/" + n, "");
    CHECK(::mkdir((dir + "/a.d").c_str(), 0755) == 0);
    test::write_file(dir + "/a.d/z", "");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request ls = request_of(Op::ReadDirectory, "");
    ls.recursive = true;
    auto listed = execute(*root.value(), ls, false, "");
    CHECK(listed.ok());
    CHECK((std::get<Names>(listed.value()).names ==
           std::vector<std::string>{"B", "_", "a", "a-b", "a.d", "a.d/z", "b", "\xc3\xa9"}));
  }
}

TEST(pin_beneath_resolves_as_the_parent_and_cannot_climb_out) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/a").c_str(), 0755) == 0);
    test::write_file(dir + "/a/f", "in a");
    test::write_file(dir + "/top", "parent");
    CHECK(::symlink("a", (dir + "/link").c_str()) == 0);
    auto parent = Root::pin(dir, s);
    CHECK(parent.ok());
    auto sub = Root::pin_beneath(*parent.value(), "a");
    CHECK(sub.ok());
    CHECK(sub.value()->strategy() == parent.value()->strategy());
    CHECK(sub.value()->path() == dir + "/a");
    auto direct = Root::pin(dir + "/a", s);
    CHECK(direct.ok() && direct.value()->root_identity() == sub.value()->root_identity());
    auto up = execute(*sub.value(), request_of(Op::ReadFile, "../top"), false, "");
    CHECK(!up.ok() && up.error().refusal == Refusal::Escape);
    auto in = execute(*sub.value(), request_of(Op::ReadFile, "f"), false, "");
    CHECK(in.ok());
    auto linked = Root::pin_beneath(*parent.value(), "link");
    CHECK(!linked.ok() && linked.error().refusal == Refusal::Symlink);
    auto out = Root::pin_beneath(*parent.value(), "..");
    CHECK(!out.ok() && out.error().refusal == Refusal::Escape);
    auto file = Root::pin_beneath(*parent.value(), "top");
    CHECK(!file.ok() && file.error().err == ENOTDIR);
  }
}
