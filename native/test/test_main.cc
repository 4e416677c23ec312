#include <sys/stat.h>
#include <unistd.h>

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
