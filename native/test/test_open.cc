// open (ops/open.h): the descriptor handed out is the one checked, under both strategies. Each
// refusal is run next to a positive control (the same name through plain open(2) reaches what the
// refusal protects), so a refusal cannot pass because the scene was not set up.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/root.h"
#include "harness.h"
#include "ops/open.h"

using namespace pinnedfs;

namespace {

Request open_request(const std::string& path, OpenFlag flag) {
  Request r;
  r.op = Op::Open;
  r.path = path;
  r.flag = flag;
  return r;
}

const std::vector<Strategy>& kStrategies = test::strategies();

}  // namespace

TEST(open_reads_writes_and_truncates_only_after_the_checks) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    CHECK(::mkdir((dir + "/sub").c_str(), 0755) == 0);
    test::write_file(dir + "/sub/a.txt", "hello");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    auto r = ops::open_file(*root.value(), open_request("sub/a.txt", OpenFlag::R));
    CHECK(r.ok());
    char buf[16] = {};
    CHECK(::read(r.value().get(), buf, sizeof buf) == 5);
    CHECK(std::string(buf, 5) == "hello");
    CHECK((::fcntl(r.value().get(), F_GETFD) & FD_CLOEXEC) != 0);
    CHECK((::fcntl(r.value().get(), F_GETFL) & O_NONBLOCK) == 0);
    CHECK(::write(r.value().get(), "x", 1) < 0);  // read-only
    auto w = ops::open_file(*root.value(), open_request("sub/a.txt", OpenFlag::W));
    CHECK(w.ok());
    CHECK(test::read_file(dir + "/sub/a.txt").empty());
    CHECK(::write(w.value().get(), "new", 3) == 3);
    auto a = ops::open_file(*root.value(), open_request("sub/a.txt", OpenFlag::A));
    CHECK(a.ok());
    CHECK(::write(a.value().get(), "+", 1) == 1);
    CHECK(test::read_file(dir + "/sub/a.txt") == "new+");
    auto wx = ops::open_file(*root.value(), open_request("sub/a.txt", OpenFlag::WX));
    CHECK(!wx.ok());
    CHECK(wx.error().err == EEXIST);
    Request fresh = open_request("sub/fresh", OpenFlag::WX);
    fresh.has_mode = true;
    fresh.mode = 0600;
    CHECK(ops::open_file(*root.value(), fresh).ok());
    struct stat st;
    CHECK(::stat((dir + "/sub/fresh").c_str(), &st) == 0);
    CHECK((st.st_mode & 0777) == 0600);
    auto bad = ops::open_file(*root.value(), open_request("sub/a.txt", OpenFlag::WPlus));
    CHECK(!bad.ok());
    CHECK(bad.error().refusal == Refusal::BadArgument);
  }
}

TEST(open_refuses_link_hard_link_fifo_directory_and_escape) {
  for (Strategy strategy : kStrategies) {
    std::string dir = test::scratch_dir();
    std::string outside = test::scratch_dir();
    test::write_file(outside + "/secret", "secret");
    CHECK(::mkdir((dir + "/d").c_str(), 0755) == 0);
    CHECK(::symlink((outside + "/secret").c_str(), (dir + "/leaf").c_str()) == 0);
    CHECK(::symlink(outside.c_str(), (dir + "/parent").c_str()) == 0);
    CHECK(::link((outside + "/secret").c_str(), (dir + "/hard").c_str()) == 0);
    CHECK(::mkfifo((dir + "/fifo").c_str(), 0644) == 0);
    // Positive controls: plain open(2) follows each name outside, or would block on the FIFO.
    CHECK(test::read_file(dir + "/leaf") == "secret");
    CHECK(test::read_file(dir + "/parent/secret") == "secret");
    CHECK(test::read_file(dir + "/hard") == "secret");
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    for (OpenFlag flag : {OpenFlag::R, OpenFlag::RPlus, OpenFlag::W, OpenFlag::A}) {
      auto leaf = ops::open_file(*root.value(), open_request("leaf", flag));
      CHECK(!leaf.ok());
      CHECK(leaf.error().refusal == Refusal::Symlink);
      auto parent = ops::open_file(*root.value(), open_request("parent/secret", flag));
      CHECK(!parent.ok());
      CHECK(parent.error().refusal == Refusal::Symlink);
      auto hard = ops::open_file(*root.value(), open_request("hard", flag));
      CHECK(!hard.ok());
      CHECK(hard.error().refusal == Refusal::HardLink);
      auto fifo = ops::open_file(*root.value(), open_request("fifo", flag));
      CHECK(!fifo.ok());
      CHECK(fifo.error().refusal == Refusal::NotRegular);
      auto up = ops::open_file(*root.value(), open_request("../x", flag));
      CHECK(!up.ok());
      CHECK(up.error().refusal == Refusal::Escape);
      auto d = ops::open_file(*root.value(), open_request("d", flag));
      CHECK(!d.ok());
      CHECK(d.error().err == EISDIR);
    }
    // `w` truncated nothing it refused.
    CHECK(test::read_file(outside + "/secret") == "secret");
    struct stat st;
    CHECK(::lstat((dir + "/leaf").c_str(), &st) == 0 && S_ISLNK(st.st_mode));
  }
}
