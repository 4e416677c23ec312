// A recursive remove asked to split (Request::split): a directory holding two or more directories
// loses its other entries and answers its identity and those directories' names, kept for the
// caller; a narrower one goes whole. A remove bound to a parent identity does nothing where another
// directory stands in that parent's place.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "core/execute.h"
#include "harness.h"

using namespace pinnedfs;

namespace {
Request remove_of(const std::string& path) {
  Request r;
  r.op = Op::Remove;
  r.path = path;
  r.recursive = true;
  return r;
}
bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
std::string identity_at(const std::string& path) {
  struct stat st;
  if (::lstat(path.c_str(), &st) != 0) return "";
  return std::to_string(st.st_dev) + ":" + std::to_string(st.st_ino);
}
void wide_tree(const std::string& dir) {
  CHECK(::mkdir((dir + "/t").c_str(), 0755) == 0);
  for (const char* d : {"a", "b", "c"}) {
    CHECK(::mkdir((dir + "/t/" + d).c_str(), 0755) == 0);
    test::write_file(dir + "/t/" + d + "/f", "x");
  }
  test::write_file(dir + "/t/top", "x");
  CHECK(::symlink("a", (dir + "/t/lnk").c_str()) == 0);
}
}  // namespace

TEST(a_split_keeps_a_wide_directory_and_answers_its_identity_and_directories) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    wide_tree(dir);
    std::string id = identity_at(dir + "/t");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request rm = remove_of("t");
    rm.split = true;
    auto split = execute(*root.value(), rm, false, "");
    CHECK(split.ok());
    auto names = std::get<Names>(split.value()).names;
    CHECK(!names.empty() && names[0] == id);
    std::vector<std::string> dirs(names.begin() + 1, names.end());
    std::sort(dirs.begin(), dirs.end());
    CHECK((dirs == std::vector<std::string>{"a", "b", "c"}));
    // The file and the link went; the link's target did not.
    CHECK(!exists(dir + "/t/top") && !exists(dir + "/t/lnk") && exists(dir + "/t/a/f"));
    // Narrow now? No: three directories still, so a second split answers them again.
    auto again = execute(*root.value(), rm, false, "");
    CHECK(again.ok() && std::holds_alternative<Names>(again.value()));
    // Without split, the whole tree.
    CHECK(execute(*root.value(), remove_of("t"), false, "").ok());
    CHECK(!exists(dir + "/t"));
  }
}

TEST(a_split_of_a_narrow_directory_removes_it_whole) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/n").c_str(), 0755) == 0);
    CHECK(::mkdir((dir + "/n/only").c_str(), 0755) == 0);
    test::write_file(dir + "/n/only/f", "x");
    test::write_file(dir + "/n/g", "x");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request rm = remove_of("n");
    rm.split = true;
    auto done = execute(*root.value(), rm, false, "");
    CHECK(done.ok() && std::holds_alternative<std::monostate>(done.value()));
    CHECK(!exists(dir + "/n"));
  }
}

TEST(a_remove_bound_to_a_parent_identity_does_nothing_in_another_directory) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    wide_tree(dir);
    std::string id = identity_at(dir + "/t");
    CHECK(::rename((dir + "/t").c_str(), (dir + "/moved").c_str()) == 0);
    CHECK(::mkdir((dir + "/t").c_str(), 0755) == 0);
    CHECK(::mkdir((dir + "/t/a").c_str(), 0755) == 0);
    test::write_file(dir + "/t/a/precious", "p");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request rm = remove_of("t/a");
    rm.force = true;
    // Bound to the directory that was split, now moved away.
    struct stat split;
    CHECK(::lstat((dir + "/moved").c_str(), &split) == 0);
    CHECK(identity_at(dir + "/moved") == id);
    rm.has_expect_identity = true;
    rm.expect_identity = identity_of(split);
    CHECK(execute(*root.value(), rm, false, "").ok());
    CHECK(exists(dir + "/t/a/precious"));
    // Bound to the directory that is there now, it acts.
    struct stat now;
    CHECK(::lstat((dir + "/t").c_str(), &now) == 0);
    rm.expect_identity = identity_of(now);
    CHECK(execute(*root.value(), rm, false, "").ok());
    CHECK(!exists(dir + "/t/a") && exists(dir + "/moved/a/f"));
  }
}
