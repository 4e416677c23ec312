// A minimal test registry for the standalone native test binary: no framework to install, and the
// closing line is the plain "N passed, N failed" that CI reads.
#pragma once
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/beneath.h"
#include "core/request.h"
#include "core/root.h"

namespace pinnedfs::test {

struct Case {
  const char* name;
  std::function<void()> fn;
};

std::vector<Case>& registry();
void fail(const char* file, int line, const std::string& what);
// A scratch directory under $TMPDIR, removed at exit; each call gives a new one.
std::string scratch_dir();
void write_file(const std::string& path, const std::string& content);
// The whole content of `path`, or "" when it cannot be read.
std::string read_file(const std::string& path);
// The strategies a test runs under: kernel and walk, or only those named in
// PINNEDFS_TEST_STRATEGIES ("walk"). scripts/valgrind.sh names only the walk: valgrind 3.19 does
// not know openat2 (syscall 437) and answers ENOSYS, so a kernel pin cannot succeed under memcheck.
const std::vector<Strategy>& strategies();
// A directory `rel` beneath the pinned root, held as its strategy would hold it after a lookup,
// its freshness spent: the next proof is a real one. Invalid when it cannot be opened.
Held hold(const Root& root, const std::string& rel);

// Runs `body` in a forked child given a private mount namespace (unshare, in a new user namespace
// where privilege is missing, and "/" made private), so the mounts it makes never reach the test
// binary's view. The child's verdict: 0 passed, kNoMountNamespace when no namespace could be had
// or `body` could not mount (the skip and its reason are printed), anything else a failure.
constexpr int kNoMountNamespace = 77;
int in_mount_namespace(const std::function<int()>& body);

// A request for `op` on `path`, every other field at its default: what a test then adjusts.
inline Request request(Op op, std::string path) {
  Request r;
  r.op = op;
  r.path = std::move(path);
  return r;
}

struct Register {
  Register(const char* name, std::function<void()> fn) {
    registry().push_back({name, std::move(fn)});
  }
};

}  // namespace pinnedfs::test

#define PFS_CAT2(a, b) a##b
#define PFS_CAT(a, b) PFS_CAT2(a, b)
#define TEST(name)                                                                     \
  static void PFS_CAT(test_, name)();                                                  \
  static ::pinnedfs::test::Register PFS_CAT(reg_, name)(#name, &PFS_CAT(test_, name)); \
  static void PFS_CAT(test_, name)()
#define CHECK(cond)                                                   \
  do {                                                                \
    if (!(cond)) {                                                    \
      ::pinnedfs::test::fail(__FILE__, __LINE__, "CHECK(" #cond ")"); \
      return;                                                         \
    }                                                                 \
  } while (0)
