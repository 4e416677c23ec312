#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>

#include "harness.h"

#include "core/resolve.h"

namespace pinnedfs::test {

namespace {
int g_failures_in_case = 0;
std::vector<std::string> g_scratch;
}  // namespace

Held hold(const Root& root, const std::string& rel) {
  auto lexed = lex_path(rel);
  auto held = hold_beneath(root, lexed.value(), kDirHandleFlags);
  if (!held.ok()) return Held();
  Held h = held.take();
  h.spend();
  return h;
}

int in_mount_namespace(const std::function<int()>& body) {
  std::fflush(nullptr);
  pid_t child = ::fork();
  if (child < 0) return 2;
  if (child == 0) {
    if (::unshare(CLONE_NEWNS) != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0)
      _exit(kNoMountNamespace);
    // The kernel ignores the source and type of this call; named anyway, because valgrind checks
    // every string a syscall is given, and fails the child on a null one.
    if (::mount("none", "/", "none", MS_REC | MS_PRIVATE, nullptr) != 0) _exit(kNoMountNamespace);
    int verdict = body();
    std::fflush(nullptr);
    _exit(verdict);
  }
  int status = 0;
  if (::waitpid(child, &status, 0) != child || !WIFEXITED(status)) return 2;
  if (WEXITSTATUS(status) == kNoMountNamespace) {
    std::fprintf(stderr,
                 "    skipped: no private mount namespace here (unshare or mount refused), so no "
                 "mount could be made inside the root\n");
  }
  return WEXITSTATUS(status);
}

std::vector<Case>& registry() {
  static std::vector<Case> cases;
  return cases;
}

void fail(const char* file, int line, const std::string& what) {
  ++g_failures_in_case;
  std::fprintf(stderr, "  %s:%d: %s\n", file, line, what.c_str());
}

std::string scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string tmpl = std::string(tmp && *tmp ? tmp : "/tmp") + "/pinnedfs-native-XXXXXX";
  std::vector<char> buf(tmpl.begin(), tmpl.end());
  buf.push_back('\0');
  if (!::mkdtemp(buf.data())) {
    std::perror("mkdtemp");
    std::exit(2);
  }
  g_scratch.emplace_back(buf.data());
  return buf.data();
}

void write_file(const std::string& path, const std::string& content) {
  std::ofstream out(path, std::ios::binary);
  out << content;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const std::vector<Strategy>& strategies() {
  static const std::vector<Strategy> chosen = [] {
    const char* only = std::getenv("PINNEDFS_TEST_STRATEGIES");
    if (only && std::strcmp(only, "walk") == 0) return std::vector<Strategy>{Strategy::Walk};
    return std::vector<Strategy>{Strategy::Kernel, Strategy::Walk};
  }();
  return chosen;
}

}  // namespace pinnedfs::test

int main(int argc, char** argv) {
  using namespace pinnedfs::test;
  const char* only = argc > 1 ? argv[1] : nullptr;
  int passed = 0, failed = 0;
  for (const Case& c : registry()) {
    if (only && !std::strstr(c.name, only)) continue;
    g_failures_in_case = 0;
    c.fn();
    if (g_failures_in_case) {
      ++failed;
      std::fprintf(stderr, "FAIL %s\n", c.name);
    } else {
      ++passed;
      std::printf("ok   %s\n", c.name);
    }
  }
  for (const std::string& dir : g_scratch) {
    std::string cmd = "rm -rf '" + dir + "'";
    if (std::system(cmd.c_str()) != 0) std::fprintf(stderr, "could not remove %s\n", dir.c_str());
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
