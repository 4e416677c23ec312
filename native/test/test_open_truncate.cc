// open "w" (ops/open.cc): the file is emptied only once its descriptor has passed the checks, and
// what changes between those checks and the ftruncate is caught again right before it. The change
// is made from the test hook at that exact point (not raced): the file's directory moved out of the
// root, or a second link made to the file from outside. Each case has its positive control (the
// hook ran, and its change is on disk), and the file outside the root keeps its bytes. Under both
// strategies.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <functional>

#include "core/root.h"
#include "harness.h"
#include "ops/open.h"

using namespace pinnedfs;

namespace {

std::function<void()> g_meddle;
int g_calls = 0;

void trampoline() {
  ++g_calls;
  if (g_meddle) g_meddle();
}

// Opens `path` with "w" while `meddle` runs at the hook; the hook is cleared after.
Result<Fd> open_w_meddled(const Root& root, const std::string& path, std::function<void()> meddle) {
  g_meddle = std::move(meddle);
  g_calls = 0;
  ops::open_truncate_test_hook = &trampoline;
  Request r;
  r.op = Op::Open;
  r.path = path;
  r.flag = OpenFlag::W;
  auto out = ops::open_file(root, r);
  ops::open_truncate_test_hook = nullptr;
  g_meddle = nullptr;
  return out;
}

const std::vector<Strategy>& kStrategies = test::strategies();

}  // namespace

TEST(open_w_refuses_a_file_whose_directory_left_the_root_before_the_truncate) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string outside = test::scratch_dir();
    CHECK(::mkdir((dir + "/sub").c_str(), 0755) == 0);
    test::write_file(dir + "/sub/f", "keep me");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    auto r = open_w_meddled(*root.value(), "sub/f", [&] {
      CHECK(::rename((dir + "/sub").c_str(), (outside + "/sub").c_str()) == 0);
    });
    // Positive control: the hook ran once, and the directory is outside the root now.
    CHECK(g_calls == 1);
    struct stat st;
    CHECK(::stat((outside + "/sub/f").c_str(), &st) == 0);
    CHECK(::stat((dir + "/sub").c_str(), &st) != 0 && errno == ENOENT);
    CHECK(!r.ok());
    CHECK(r.error().refusal == Refusal::Escape);
    CHECK(r.error().description.find("moved out of the root") != std::string::npos);
    CHECK(test::read_file(outside + "/sub/f") == "keep me");
  }
}

TEST(open_w_refuses_a_file_linked_from_outside_before_the_truncate) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string outside = test::scratch_dir();
    test::write_file(dir + "/f", "keep me");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    auto r = open_w_meddled(*root.value(), "f", [&] {
      CHECK(::link((dir + "/f").c_str(), (outside + "/g").c_str()) == 0);
    });
    CHECK(g_calls == 1);
    struct stat st;
    CHECK(::stat((outside + "/g").c_str(), &st) == 0 && st.st_nlink == 2);
    CHECK(!r.ok());
    CHECK(r.error().refusal == Refusal::HardLink);
    CHECK(test::read_file(outside + "/g") == "keep me");
  }
}

TEST(open_w_with_nothing_changed_at_the_hook_empties_the_file) {
  // The control of the two above: the same open with a hook that changes nothing empties the file,
  // so their refusals come from the change, not from the hook.
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/sub").c_str(), 0755) == 0);
    test::write_file(dir + "/sub/f", "old");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    auto r = open_w_meddled(*root.value(), "sub/f", [] {});
    CHECK(g_calls == 1);
    CHECK(r.ok());
    CHECK(test::read_file(dir + "/sub/f").empty());
  }
}
