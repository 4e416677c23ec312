// Running out of descriptors, straight on the core, both strategies: a proof that cannot be taken
// for want of a descriptor is a resource error (EMFILE), never a departure or an escape, and a
// failure to look at /proc is not remembered past the moment it happened.
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "core/beneath.h"
#include "core/resolve.h"
#include "harness.h"

using namespace pinnedfs;

namespace {

// Takes every free descriptor below a lowered RLIMIT_NOFILE, so the next open fails with EMFILE;
// gives them back, and the limit, when it goes.
class Exhausted {
 public:
  Exhausted() {
    ::getrlimit(RLIMIT_NOFILE, &saved_);
    int top = ::fcntl(0, F_DUPFD_CLOEXEC, 0);
    struct rlimit low = saved_;
    low.rlim_cur = static_cast<rlim_t>(top + 16);
    ::close(top);
    ::setrlimit(RLIMIT_NOFILE, &low);
    for (;;) {
      int fd = ::fcntl(0, F_DUPFD_CLOEXEC, 0);
      if (fd < 0) break;
      taken_.push_back(fd);
    }
  }
  ~Exhausted() {
    for (int fd : taken_) ::close(fd);
    ::setrlimit(RLIMIT_NOFILE, &saved_);
  }
  bool full() const { return ::fcntl(0, F_DUPFD_CLOEXEC, 0) < 0 && errno == EMFILE; }

 private:
  struct rlimit saved_;
  std::vector<int> taken_;
};

Held hold(const Root& root, const std::string& rel) {
  auto lexed = lex_path(rel);
  auto held = hold_beneath(root, lexed.value(), kDirHandleFlags);
  if (!held.ok()) return Held();
  Held h = held.take();
  h.spend();
  return h;
}

std::string make_root(const std::string& inside) {
  std::string base = test::scratch_dir();
  std::string root = base + "/root";
  ::mkdir(root.c_str(), 0755);
  std::string at = root;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    std::size_t next = inside.find('/', pos);
    at = root + "/" + inside.substr(0, next);
    ::mkdir(at.c_str(), 0755);
    pos = next == std::string::npos ? next : next + 1;
  }
  return root;
}

}  // namespace

TEST(a_proof_that_cannot_open_its_lookup_is_emfile_never_an_escape) {
  // The kernel strategy proves by a confined lookup from the root: one descriptor, refused here.
  std::string root_path = make_root("a/b");
  auto root = Root::pin(root_path, Strategy::Kernel);
  if (!root.ok()) return;  // no openat2 here: the walk below covers what remains
  Held h = hold(*root.value(), "a/b");
  CHECK(h.valid());
  Status proof = ok_status();
  {
    Exhausted ex;
    CHECK(ex.full());
    proof = h.beneath(*root.value(), "unlink", "a/b/f");
  }
  CHECK(!proof.ok());
  CHECK(proof.error().err == EMFILE);
  CHECK(proof.error().refusal == Refusal::None);
  CHECK(!proof.error().moved);
  // With descriptors back, the same handle proves as before: nothing was remembered.
  CHECK(h.beneath(*root.value(), "unlink", "a/b/f").ok());
}

TEST(a_descent_out_of_descriptors_is_emfile_under_both_strategies) {
  for (Strategy s : test::strategies()) {
    std::string root_path = make_root("a/b");
    auto root = Root::pin(root_path, s);
    CHECK(root.ok());
    Held parent = hold(*root.value(), "a");
    CHECK(parent.valid());
    Result<Held> child = Held();
    {
      Exhausted ex;
      child = descend(*root.value(), parent, "b", kDirHandleFlags, "a/b");
    }
    CHECK(!child.ok());
    CHECK(child.error().err == EMFILE);
    CHECK(child.error().refusal == Refusal::None);
    CHECK(!child.error().moved);
  }
}

TEST(a_failed_look_at_proc_is_not_remembered) {
  platform::forget_procfs();
  {
    Exhausted ex;
    CHECK(ex.full());
    // /proc cannot be opened now: not procfs for this moment only.
    CHECK(!platform::proc_is_procfs());
  }
  CHECK(platform::proc_is_procfs());
  // And the walk's proof, which reads /proc, still tells a move within the root from an escape:
  // the failure above did not leave every later classification a guess of "left".
  for (Strategy s : test::strategies()) {
    std::string root_path = make_root("a/b");
    auto root = Root::pin(root_path, s);
    CHECK(root.ok());
    Held moved = hold(*root.value(), "a/b");
    CHECK(::rename((root_path + "/a/b").c_str(), (root_path + "/a/c").c_str()) == 0);
    platform::forget_procfs();
    {
      Exhausted ex;
      CHECK(!platform::proc_is_procfs());
    }
    auto proof = moved.beneath(*root.value(), "unlink", "a/b");
    CHECK(!proof.ok());
    CHECK(proof.error().moved);
    CHECK(proof.error().refusal == Refusal::IdentityChanged);
  }
}
