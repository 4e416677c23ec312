// Native tests for the paths the JavaScript suite cannot select on this machine: the named-temp
// fallback of atomic writes (file systems without O_TMPFILE, and macOS), its cleanup after a real
// write failure, and the /proc route of chmod (kernels before fchmodat2).
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>

#include "core/root.h"
#include "harness.h"
#include "ops/write.h"
#include "platform/platform.h"

using namespace pinnedfs;

namespace {

std::vector<std::string> listing(const std::string& dir) {
  std::vector<std::string> out;
  DIR* d = ::opendir(dir.c_str());
  if (!d) return out;
  while (dirent* e = ::readdir(d)) {
    std::string n = e->d_name;
    if (n != "." && n != "..") out.push_back(n);
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

Request atomic_write(const std::string& path, std::string data) {
  Request r;
  r.op = Op::WriteFile;
  r.path = path;
  r.flag = OpenFlag::W;
  r.atomic = true;
  r.data = std::move(data);
  return r;
}

Result<ops::Replaced> run_atomic(const Root& root, const Request& r, bool allow_tmpfile) {
  auto path = prepare_path(root, r.path);
  if (!path.ok()) return path.take_error();
  return ops::write_atomic_with(root, path.value(), r, allow_tmpfile);
}

const std::vector<Strategy>& kStrategies = test::strategies();

}  // namespace

TEST(atomic_named_temp_replaces_and_keeps_mode) {
  for (Strategy strategy : kStrategies) {
    std::string dir = pinnedfs::test::scratch_dir();
    CHECK(::mkdir((dir + "/sub").c_str(), 0755) == 0);
    pinnedfs::test::write_file(dir + "/sub/script.sh", "old");
    CHECK(::chmod((dir + "/sub/script.sh").c_str(), 0755) == 0);
    auto root = Root::pin(dir, strategy);
    CHECK(root.ok());
    CHECK(root.value()->strategy() == strategy);
    CHECK(run_atomic(*root.value(), atomic_write("sub/script.sh", "new"), false).ok());
    CHECK(test::read_file(dir + "/sub/script.sh") == "new");
    struct stat st;
    CHECK(::stat((dir + "/sub/script.sh").c_str(), &st) == 0);
    CHECK((st.st_mode & 07777) == 0755);
    CHECK(run_atomic(*root.value(), atomic_write("sub/fresh", "f"), false).ok());
    CHECK(test::read_file(dir + "/sub/fresh") == "f");
    CHECK((listing(dir + "/sub") == std::vector<std::string>{"fresh", "script.sh"}));
  }
}

TEST(atomic_create_publishes_only_where_nothing_has_the_name_on_both_paths) {
  for (Strategy strategy : kStrategies) {
    for (bool allow_tmpfile : {true, false}) {
      std::string dir = pinnedfs::test::scratch_dir();
      pinnedfs::test::write_file(dir + "/taken", "theirs");
      CHECK(::symlink("nowhere", (dir + "/link").c_str()) == 0);
      auto root = Root::pin(dir, strategy);
      CHECK(root.ok());
      for (const char* name : {"taken", "link"}) {
        Request r = atomic_write(name, "mine");
        r.flag = OpenFlag::WX;
        auto refused = run_atomic(*root.value(), r, allow_tmpfile);
        CHECK(!refused.ok());
        CHECK(refused.error().err == EEXIST);
      }
      Request fresh = atomic_write("fresh", "created");
      fresh.flag = OpenFlag::WXPlus;
      fresh.durable = true;
      auto made = run_atomic(*root.value(), fresh, allow_tmpfile);
      CHECK(made.ok());
      CHECK(made.value() == ops::Replaced::Done);
      CHECK(test::read_file(dir + "/fresh") == "created");
      CHECK(test::read_file(dir + "/taken") == "theirs");
      CHECK((listing(dir) == std::vector<std::string>{"fresh", "link", "taken"}));
    }
  }
}

// RLIMIT_FSIZE turns the data write into EFBIG after the temp file exists: the cleanup path runs
// from a real failure. In a child, so the limit and the ignored SIGXFSZ stay there.
TEST(atomic_write_failure_leaves_target_and_no_temp) {
  for (Strategy strategy : kStrategies) {
    for (bool allow_tmpfile : {true, false}) {
      std::string dir = pinnedfs::test::scratch_dir();
      pinnedfs::test::write_file(dir + "/target", "original");
      pid_t pid = ::fork();
      CHECK(pid >= 0);
      if (pid == 0) {
        ::signal(SIGXFSZ, SIG_IGN);
        struct rlimit lim = {4096, 4096};
        if (::setrlimit(RLIMIT_FSIZE, &lim) != 0) ::_exit(3);
        auto root = Root::pin(dir, strategy);
        if (!root.ok()) ::_exit(4);
        auto a = run_atomic(*root.value(), atomic_write("target", std::string(65536, 'x')),
                            allow_tmpfile);
        auto b =
            run_atomic(*root.value(), atomic_write("new", std::string(65536, 'y')), allow_tmpfile);
        bool ok = !a.ok() && a.error().err == EFBIG && !b.ok() && b.error().err == EFBIG;
        ::_exit(ok ? 0 : 1);
      }
      int status = 0;
      CHECK(::waitpid(pid, &status, 0) == pid);
      CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
      CHECK(test::read_file(dir + "/target") == "original");
      CHECK((listing(dir) == std::vector<std::string>{"target"}));
    }
  }
}

#if defined(__linux__)
TEST(chmod_through_proc_acts_on_the_handle) {
  std::string dir = pinnedfs::test::scratch_dir();
  pinnedfs::test::write_file(dir + "/f", "x");
  int fd = ::open((dir + "/f").c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
  CHECK(fd >= 0);
  Fd held(fd);
  CHECK(attr::change_mode_via_proc(held.get(), 0640, "f").ok());
  struct stat st;
  CHECK(::stat((dir + "/f").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(attr::change_mode(held.get(), 0600, "f").ok());
  CHECK(::stat((dir + "/f").c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0600);
}
#endif
