// The recursive remove's held path (ops/remove_tree.cc): every file held from the first, as where
// freeing is slow, the handles closed by the remover's threads under a descriptor limit low enough
// that the bound on held handles is what paces the removal. The tree goes, a link inside goes as
// the entry and its target stays, and no descriptor is left open.
#include <dirent.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/execute.h"
#include "harness.h"
#include "ops/remove_tree.h"

using namespace pinnedfs;

namespace {
bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}
int open_descriptors() {
  DIR* d = ::opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  int n = 0;
  while (::readdir(d) != nullptr) ++n;
  ::closedir(d);
  return n;
}
}  // namespace

TEST(a_remove_holding_every_file_under_a_low_descriptor_limit_removes_all_and_leaks_nothing) {
  struct rlimit was;
  CHECK(::getrlimit(RLIMIT_NOFILE, &was) == 0);
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/target", "kept");
    CHECK(::mkdir((dir + "/t").c_str(), 0755) == 0);
    for (int d = 0; d < 3; ++d) {
      std::string sub = dir + "/t/s" + std::to_string(d);
      CHECK(::mkdir(sub.c_str(), 0755) == 0);
      for (int i = 0; i < 200; ++i) test::write_file(sub + "/f" + std::to_string(i), "x");
      CHECK(::symlink("../../target", (sub + "/lnk").c_str()) == 0);
    }
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    int before = open_descriptors();
    // An eighth of 128: 16 handles held at once, far fewer than the 600 files.
    struct rlimit low = was;
    low.rlim_cur = 128;
    CHECK(::setrlimit(RLIMIT_NOFILE, &low) == 0);
    ops::hold_every_file(true);
    Request rm = test::request(Op::Remove, "t");
    rm.recursive = true;
    auto done = execute(*root.value(), rm, false, "");
    ops::hold_every_file(false);
    CHECK(::setrlimit(RLIMIT_NOFILE, &was) == 0);
    CHECK(done.ok());
    CHECK(!exists(dir + "/t"));
    CHECK(test::read_file(dir + "/target") == "kept");
    CHECK(open_descriptors() == before);
  }
}
