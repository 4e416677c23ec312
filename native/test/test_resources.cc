// Running out of descriptors or memory, straight on the core, both strategies: a proof that cannot
// be taken for want of a descriptor is a resource error (EMFILE), never a departure or an escape; a
// failure to look at /proc is not remembered past the moment it happened; an allocation the system
// refuses is a false answer (then ENOMEM), never an abort; and file content holds its share of the
// process's budget until it goes.
#include <fcntl.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/alloc.h"
#include "core/beneath.h"
#include "core/budget.h"
#include "core/execute.h"
#include "core/resolve.h"
#include "harness.h"
#include "platform/platform.h"

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

// Why a refused operator new cannot be watched here, or nullptr where it can. AddressSanitizer's
// operator new reports a refused allocation as a fatal error instead of throwing std::bad_alloc,
// and valgrind's aborts ("Valgrind cannot throw exceptions"), and an address-space limit leaves
// either no room for its own bookkeeping. The plain build, which CI runs too, tests them.
const char* refused_allocation_untestable() {
#if defined(__SANITIZE_ADDRESS__)
  return "AddressSanitizer's operator new aborts instead of throwing std::bad_alloc";
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return "AddressSanitizer's operator new aborts instead of throwing std::bad_alloc";
#endif
#endif
  const char* preload = std::getenv("LD_PRELOAD");
  if (preload && std::strstr(preload, "vgpreload")) {
    return "valgrind's operator new aborts instead of throwing std::bad_alloc";
  }
  return nullptr;
}

using test::hold;

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

TEST(checked_allocation_answers_false_instead_of_aborting) {
  if (const char* why = refused_allocation_untestable()) {
    std::printf("  skipped: %s\n", why);
    return;
  }
  std::string s;
  CHECK(!try_reserve(s, s.max_size()));      // length_error
  CHECK(!try_reserve(s, s.max_size() / 2));  // bad_alloc: no process has that much
  std::vector<std::string> v;
  CHECK(!try_reserve(v, v.max_size()));
  CHECK(try_reserve(s, 4096) && s.capacity() >= 4096);
  CHECK(room_for_one(v) && v.capacity() >= 1);
}

TEST(an_address_space_limit_leaves_room_for_the_runtime) {
  if (const char* why = refused_allocation_untestable()) {
    std::printf("  skipped: %s\n", why);
    return;
  }
  struct rlimit saved;
  CHECK(::getrlimit(RLIMIT_AS, &saved) == 0);
  CHECK(room_for(std::size_t{64} << 20));
  // A limit just above what the process uses now: a large buffer would take the room that is left.
  std::ifstream statm("/proc/self/statm");
  unsigned long long pages = 0;
  statm >> pages;
  struct rlimit low = saved;
  low.rlim_cur = static_cast<rlim_t>(pages * ::sysconf(_SC_PAGESIZE) + (std::size_t{600} << 20));
  CHECK(::setrlimit(RLIMIT_AS, &low) == 0);
  bool small = room_for(std::size_t{64} << 20);
  bool large = room_for(std::size_t{512} << 20);
  std::string s;
  bool reserved = try_reserve(s, std::size_t{512} << 20);
  ::setrlimit(RLIMIT_AS, &saved);
  CHECK(small);
  CHECK(!large);
  CHECK(!reserved);
}

TEST(the_content_budget_is_held_by_reads_and_given_back) {
  std::string dir = test::scratch_dir();
  test::write_file(dir + "/f", std::string(1 << 20, 'x'));
  for (Strategy s : test::strategies()) {
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    Request r;
    r.op = Op::ReadFile;
    r.path = "f";
    CHECK(content_in_flight() == 0);
    {
      auto held = execute(*root.value(), r, false);
      CHECK(held.ok());
      // The content, and the byte that proved its end, until the value goes.
      CHECK(content_in_flight() == (1u << 20) + 1);
      set_content_budget((1u << 20) + 1);
      auto refused = execute(*root.value(), r, false);
      CHECK(!refused.ok());
      CHECK(refused.error().err == ENOMEM);
      CHECK(refused.error().description.find("content budget of 1048577 bytes") !=
            std::string::npos);
    }
    CHECK(content_in_flight() == 0);
    auto again = execute(*root.value(), r, false);
    CHECK(again.ok());
    set_content_budget(0);
    CHECK(content_budget() == kDefaultContentBudget);
  }
  CHECK(content_in_flight() == 0);
}
