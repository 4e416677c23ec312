// The fileops operations at the core's level: copyFile's publish (no temporary left, EXCL decided
// by the publish), the fallback copy loop across sizes, cp of a tree with links, the link-text
// check, and the refusals, under both strategies.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dirent.h>

#include <string>
#include <vector>

#include "core/execute.h"
#include "harness.h"
#include "ops/fileops.h"

using namespace pinnedfs;

namespace {

Result<Value> run(const Root& root, Op op, const std::string& path, const std::string& to = {},
                  std::uint32_t copy_mode = 0, bool recursive = false) {
  Request r;
  r.op = op;
  r.path = path;
  r.to = to;
  r.copy_mode = copy_mode;
  r.recursive = recursive;
  r.force = true;
  return execute(root, r, false);
}

std::vector<std::string> names(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (d == nullptr) return out;
  while (struct dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  return out;
}

}  // namespace

TEST(link_text_within_follows_the_lexical_resolution_from_the_links_directory) {
  std::vector<std::string> top;
  std::vector<std::string> two{"a", "b"};
  CHECK(ops::link_text_within(top, "x", "symlink", "l").ok());
  CHECK(ops::link_text_within(two, "../../x", "symlink", "l").ok());
  CHECK(ops::link_text_within(two, "../c/../../x/./y", "symlink", "l").ok());
  CHECK(ops::link_text_within(two, "x//y/", "symlink", "l").ok());
  for (const char* bad : {"..", "../x", "./../x", "x/../../y"}) {
    auto r = ops::link_text_within(top, bad, "symlink", "l");
    CHECK(!r.ok() && r.error().refusal == Refusal::Escape);
  }
  auto three = ops::link_text_within(two, "../../../x", "symlink", "l");
  CHECK(!three.ok() && three.error().refusal == Refusal::Escape);
  auto abs = ops::link_text_within(two, "/etc", "symlink", "l");
  CHECK(!abs.ok() && abs.error().refusal == Refusal::Escape);
  auto empty = ops::link_text_within(two, "", "symlink", "l");
  CHECK(!empty.ok() && empty.error().refusal == Refusal::BadArgument);
  auto nul = ops::link_text_within(two, std::string("a\0b", 3), "symlink", "l");
  CHECK(!nul.ok() && nul.error().refusal == Refusal::BadArgument);
}

TEST(copy_file_publishes_whole_files_and_leaves_no_temporary) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    // Sizes around the loop's buffer and copy_file_range's chunks: nothing lost at a boundary.
    std::vector<std::size_t> sizes{0, 1, 4095, 262144, 262145, 1000003};
    for (std::size_t n : sizes) {
      std::string content(n, '\0');
      for (std::size_t i = 0; i < n; ++i) content[i] = static_cast<char>('a' + (i * 7) % 26);
      test::write_file(dir + "/src" + std::to_string(n), content);
    }
    ::chmod((dir + "/src1").c_str(), 0751);
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    for (std::size_t n : sizes) {
      std::string from = "src" + std::to_string(n);
      CHECK(run(root, Op::CopyFile, from, "dst" + std::to_string(n)).ok());
      CHECK(test::read_file(dir + "/dst" + std::to_string(n)) == test::read_file(dir + "/" + from));
    }
    struct stat st;
    CHECK(::stat((dir + "/dst1").c_str(), &st) == 0 && (st.st_mode & 07777) == 0751);
    // EXCL: decided by the publish; the existing file is untouched.
    auto excl = run(root, Op::CopyFile, "src1", "dst4095", ops::kCopyExcl);
    CHECK(!excl.ok() && excl.error().err == EEXIST);
    CHECK(test::read_file(dir + "/dst4095") == test::read_file(dir + "/src4095"));
    for (const std::string& n : names(dir)) CHECK(n.rfind(".pinnedfs-", 0) != 0);
    auto bad = run(root, Op::CopyFile, "src1", "x", 8);
    CHECK(!bad.ok() && bad.error().refusal == Refusal::BadArgument);
  }
}

TEST(copy_file_refuses_links_hard_links_and_special_files) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    std::string out = test::scratch_dir();
    test::write_file(out + "/secret", "outside");
    test::write_file(dir + "/f", "inside");
    CHECK(::symlink((out + "/secret").c_str(), (dir + "/ln").c_str()) == 0);
    CHECK(::symlink(out.c_str(), (dir + "/out").c_str()) == 0);
    CHECK(::link((out + "/secret").c_str(), (dir + "/hard").c_str()) == 0);
    CHECK(::mkfifo((dir + "/fifo").c_str(), 0600) == 0);
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    CHECK(run(root, Op::CopyFile, "ln", "x").error().refusal == Refusal::Symlink);
    CHECK(run(root, Op::CopyFile, "out/secret", "x").error().refusal == Refusal::Symlink);
    CHECK(run(root, Op::CopyFile, "f", "out/planted").error().refusal == Refusal::Symlink);
    CHECK(run(root, Op::CopyFile, "f", "ln").error().refusal == Refusal::Symlink);
    CHECK(run(root, Op::CopyFile, "hard", "x").error().refusal == Refusal::HardLink);
    CHECK(run(root, Op::CopyFile, "fifo", "x").error().refusal == Refusal::NotRegular);
    CHECK(run(root, Op::CopyFile, "../secret", "x").error().refusal == Refusal::Escape);
    CHECK(::access((dir + "/x").c_str(), F_OK) != 0);
    CHECK(test::read_file(out + "/secret") == "outside");
    CHECK(names(out).size() == 1);
  }
}

TEST(cp_copies_a_tree_with_in_root_links_and_refuses_one_that_leaves) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/t").c_str(), 0750) == 0);
    CHECK(::mkdir((dir + "/t/d").c_str(), 0700) == 0);
    test::write_file(dir + "/t/a", "a");
    test::write_file(dir + "/t/d/b", "b");
    CHECK(::symlink("../a", (dir + "/t/d/up").c_str()) == 0);
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    auto flat = run(root, Op::Cp, "t", "u");
    CHECK(!flat.ok() && flat.error().err == EISDIR);
    CHECK(run(root, Op::Cp, "t", "u", 0, true).ok());
    CHECK(test::read_file(dir + "/u/d/b") == "b");
    char text[16] = {0};
    CHECK(::readlink((dir + "/u/d/up").c_str(), text, sizeof text - 1) == 4);
    CHECK(std::string(text) == "../a");
    struct stat st;
    CHECK(::stat((dir + "/u").c_str(), &st) == 0 && (st.st_mode & 07777) == 0750);
    auto self = run(root, Op::Cp, "t", "t/inner", 0, true);
    CHECK(!self.ok() && self.error().err == EINVAL);
    CHECK(::symlink("../../..", (dir + "/t/d/bad").c_str()) == 0);
    auto bad = run(root, Op::Cp, "t", "v", 0, true);
    CHECK(!bad.ok() && bad.error().refusal == Refusal::Escape);
    CHECK(::access((dir + "/v/d/bad").c_str(), F_OK) != 0);
  }
}

TEST(truncate_and_utimes_act_on_the_checked_object) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/f", "0123456789");
    CHECK(::symlink("f", (dir + "/ln").c_str()) == 0);
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    Request t;
    t.op = Op::Truncate;
    t.path = "f";
    t.length = 3;
    CHECK(execute(root, t, false).ok());
    CHECK(test::read_file(dir + "/f") == "012");
    t.path = "ln";
    CHECK(execute(root, t, false).error().refusal == Refusal::Symlink);
    Request u;
    u.op = Op::Utimes;
    u.path = "f";
    u.atime = 1000.5;
    u.mtime = 2000.25;
    CHECK(execute(root, u, false).ok());
    struct stat st;
    CHECK(::stat((dir + "/f").c_str(), &st) == 0);
    CHECK(st.st_mtime == 2000 && st.st_atime == 1000);
#if defined(__linux__)
    CHECK(st.st_mtim.tv_nsec == 250000000 && st.st_atim.tv_nsec == 500000000);
#endif
    u.path = "ln";
    CHECK(execute(root, u, false).error().refusal == Refusal::Symlink);
  }
}
