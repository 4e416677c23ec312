// Native tests of compare-and-swap (ops/unchanged.cc): a writer that changes the file inside the
// operation, after its first check and before the rename (BeforeMove), or after the rename through
// a descriptor it already held (AfterMove), keeps its bytes: the operation is refused as Changed
// and undone, and no temporary or private name is left behind. The writer runs from the test hook,
// so the interleaving is exact, not raced. Under both strategies.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <functional>

#include "core/execute.h"
#include "harness.h"
#include "ops/unchanged.h"

using namespace pinnedfs;

namespace {

std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    out.push_back(entry.path().filename().string());
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::function<void(ops::UnchangedPhase)> g_meddle;

void trampoline(ops::UnchangedPhase phase) {
  if (g_meddle) g_meddle(phase);
}

// Runs `fn` with `meddle` called at every phase, and the hook cleared after.
template <class Fn>
auto with_hook(std::function<void(ops::UnchangedPhase)> meddle, Fn fn) -> decltype(fn()) {
  g_meddle = std::move(meddle);
  ops::unchanged_test_hook = &trampoline;
  auto out = fn();
  ops::unchanged_test_hook = nullptr;
  g_meddle = nullptr;
  return out;
}

Request cas(Op op, const std::string& path, std::string expect, std::string data = {}) {
  Request r;
  r.op = op;
  r.path = path;
  r.expect = std::move(expect);
  r.has_expect = true;
  r.data = std::move(data);
  return r;
}

bool is_changed(const Result<Value>& r) {
  return !r.ok() && r.error().refusal == Refusal::Changed && r.error().err == EBUSY;
}

// Appends `bytes` through `fd` once, at `when`.
std::function<void(ops::UnchangedPhase)> write_at(ops::UnchangedPhase when, int fd,
                                                  const std::string& bytes, bool* wrote) {
  return [=](ops::UnchangedPhase phase) {
    if (phase != when || *wrote) return;
    *wrote = ::write(fd, bytes.data(), bytes.size()) == static_cast<ssize_t>(bytes.size());
  };
}

const std::vector<Strategy>& kStrategies = test::strategies();
const Op kBoth[] = {Op::ReplaceIfUnchanged, Op::RemoveIfUnchanged};

}  // namespace

TEST(unchanged_replaces_and_removes_what_is_as_expected) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/sub").c_str(), 0755) == 0);
    test::write_file(dir + "/sub/f", "old");
    CHECK(::chmod((dir + "/sub/f").c_str(), 0751) == 0);
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    CHECK(
        execute(*root.value(), cas(Op::ReplaceIfUnchanged, "sub/f", "old", "new"), false, "").ok());
    CHECK(test::read_file(dir + "/sub/f") == "new");
    struct stat st;
    CHECK(::stat((dir + "/sub/f").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0751);
    // An identity alone: the same inode, unchanged in size and time.
    Request by_id;
    by_id.op = Op::RemoveIfUnchanged;
    by_id.path = "sub/f";
    by_id.has_expect_identity = true;
    by_id.expect_identity = identity_of(st);
    CHECK(execute(*root.value(), by_id, false, "").ok());
    CHECK(names_in(dir + "/sub").empty());
  }
}

TEST(unchanged_refuses_a_file_that_is_not_as_expected) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/f", "theirs");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    for (Op op : kBoth) {
      CHECK(is_changed(execute(*root.value(), cas(op, "f", "ours", "new"), false, "")));
      CHECK(is_changed(execute(*root.value(), cas(op, "f", "theirs!", "new"), false, "")));
      Request other = cas(op, "f", "theirs", "new");
      other.has_expect_identity = true;
      other.expect_identity = Identity{1, 2};
      CHECK(is_changed(execute(*root.value(), other, false, "")));
      CHECK(test::read_file(dir + "/f") == "theirs");
      CHECK((names_in(dir) == std::vector<std::string>{"f"}));
    }
  }
}

// A writer that holds the file open writes through its descriptor before the rename (the first
// check is then stale), or after it (its bytes reach the old inode under its private name): the
// second check finds both, and the rename is undone.
TEST(unchanged_catches_a_write_before_or_after_the_rename_and_undoes_it) {
  for (Strategy strategy : kStrategies) {
    for (auto when : {ops::UnchangedPhase::BeforeMove, ops::UnchangedPhase::AfterMove}) {
      for (Op op : kBoth) {
        std::string dir = test::scratch_dir();
        test::write_file(dir + "/f", "old");
        auto root = Root::pin(dir, strategy);
        CHECK(root.ok());
        int writer = ::open((dir + "/f").c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
        CHECK(writer >= 0);
        bool wrote = false;
        auto result = with_hook(write_at(when, writer, "+theirs", &wrote), [&] {
          return execute(*root.value(), cas(op, "f", "old", "new"), false, "");
        });
        ::close(writer);
        CHECK(wrote);
        CHECK(is_changed(result));
        CHECK(test::read_file(dir + "/f") == "old+theirs");
        CHECK((names_in(dir) == std::vector<std::string>{"f"}));
      }
    }
  }
}

TEST(unchanged_catches_a_file_renamed_over_the_name_before_the_rename) {
  for (Strategy strategy : kStrategies) {
    for (Op op : kBoth) {
      std::string dir = test::scratch_dir();
      test::write_file(dir + "/f", "old");
      test::write_file(dir + "/g", "old");
      auto root = Root::pin(dir, strategy);
      CHECK(root.ok());
      bool moved = false;
      auto result = with_hook(
          [&](ops::UnchangedPhase phase) {
            if (phase != ops::UnchangedPhase::BeforeMove || moved) return;
            moved = ::rename((dir + "/g").c_str(), (dir + "/f").c_str()) == 0;
          },
          [&] { return execute(*root.value(), cas(op, "f", "old", "new"), false, ""); });
      CHECK(moved);
      CHECK(is_changed(result));
      CHECK(test::read_file(dir + "/f") == "old");
      CHECK((names_in(dir) == std::vector<std::string>{"f"}));
    }
  }
}

TEST(unchanged_refuses_links_dirs_root_and_no_expectation) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/f", "x");
    CHECK(::symlink("f", (dir + "/l").c_str()) == 0);
    CHECK(::link((dir + "/f").c_str(), (dir + "/h").c_str()) == 0);
    CHECK(::mkdir((dir + "/d").c_str(), 0755) == 0);
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    for (Op op : kBoth) {
      auto link = execute(*root.value(), cas(op, "l", "x", "new"), false, "");
      CHECK(!link.ok() && link.error().refusal == Refusal::Symlink);
      auto hard = execute(*root.value(), cas(op, "h", "x", "new"), false, "");
      CHECK(!hard.ok() && hard.error().refusal == Refusal::HardLink);
      auto d = execute(*root.value(), cas(op, "d", "", "new"), false, "");
      CHECK(!d.ok() && d.error().err == EISDIR);
      auto top = execute(*root.value(), cas(op, "", "", "new"), false, "");
      CHECK(!top.ok() && top.error().refusal == Refusal::BadArgument);
      auto up = execute(*root.value(), cas(op, "../f", "x", "new"), false, "");
      CHECK(!up.ok() && up.error().refusal != Refusal::None);
      Request none;
      none.op = op;
      none.path = "f";
      auto bare = execute(*root.value(), none, false, "");
      CHECK(!bare.ok() && bare.error().refusal == Refusal::BadArgument);
    }
    CHECK(test::read_file(dir + "/f") == "x");
  }
}

TEST(unchanged_refuses_a_directory_moved_out_during_the_call) {
  for (Strategy strategy : kStrategies) {
    for (Op op : kBoth) {
      std::string base = test::scratch_dir();
      CHECK(::mkdir((base + "/root").c_str(), 0755) == 0);
      CHECK(::mkdir((base + "/root/sub").c_str(), 0755) == 0);
      CHECK(::mkdir((base + "/out").c_str(), 0755) == 0);
      test::write_file(base + "/root/sub/f", "old");
      auto root = Root::pin(base + "/root", strategy);
      CHECK(root.ok());
      bool moved = false;
      auto result = with_hook(
          [&](ops::UnchangedPhase phase) {
            if (phase != ops::UnchangedPhase::BeforeMove || moved) return;
            moved = ::rename((base + "/root/sub").c_str(), (base + "/out/sub").c_str()) == 0;
          },
          [&] { return execute(*root.value(), cas(op, "sub/f", "old", "new"), false, ""); });
      CHECK(moved);
      // The rename goes through the held directory, proven beneath the root first: moved out, it
      // is refused, and the file outside keeps its content and its name.
      CHECK(!result.ok() && result.error().refusal == Refusal::Escape);
      CHECK(test::read_file(base + "/out/sub/f") == "old");
      CHECK(names_in(base + "/root").empty());
    }
  }
}
