// Native tests of the read limit (core/limits.h): a file larger than the limit is refused from its
// size before anything is allocated; a file whose content outruns what fstat said (here a procfs
// file, whose size is always 0, the same path as a file grown after fstat) is read in steps bounded
// by limit + 1 and refused once a byte past the limit arrives; no limit asked is the ceiling.
#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <string>

#include "core/cancel.h"
#include "core/execute.h"
#include "core/limits.h"
#include "core/root.h"
#include "harness.h"

using namespace pinnedfs;

namespace {

Result<Value> read(const Root& root, const std::string& path, std::uint64_t max_bytes) {
  Request r;
  r.op = Op::ReadFile;
  r.path = path;
  r.max_bytes = max_bytes;
  return execute(root, r, false);
}

}  // namespace

TEST(read_limit_refuses_a_sparse_file_from_its_size) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    std::string file = dir + "/sparse.bin";
    test::write_file(file, "");
    CHECK(::truncate(file.c_str(), static_cast<off_t>(1) << 40) == 0);
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    for (std::uint64_t limit : {std::uint64_t{0}, std::uint64_t{1} << 20, kMaxContentBytes + 1}) {
      auto r = read(*root.value(), "sparse.bin", limit);
      CHECK(!r.ok());
      CHECK(r.error().refusal == Refusal::TooLarge);
      CHECK(r.error().description.find("exceeds the read limit") != std::string::npos);
    }
  }
}

TEST(read_limit_stops_content_that_outruns_fstat) {
  for (Strategy s : test::strategies()) {
    auto root = Root::pin("/proc/self", s);
    CHECK(root.ok());
    // The test binary's environment: more than 8 bytes on any machine that runs it.
    auto over = read(*root.value(), "environ", 8);
    CHECK(!over.ok());
    CHECK(over.error().refusal == Refusal::TooLarge);
    CHECK(over.error().description.find("grew past the read limit of 8 bytes") !=
          std::string::npos);
    auto within = read(*root.value(), "environ", 0);
    CHECK(within.ok());
    const Bytes* b = std::get_if<Bytes>(&within.value());
    CHECK(b != nullptr && b->data.size() > 8);
    // Exactly at the limit is within it.
    auto exact = read(*root.value(), "environ", b->data.size());
    CHECK(exact.ok());
  }
}

TEST(read_limit_answers_a_file_at_the_limit_and_refuses_one_byte_more) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/ten.txt", "0123456789");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    auto at = read(*root.value(), "ten.txt", 10);
    CHECK(at.ok());
    CHECK(std::get<Bytes>(at.value()).data == "0123456789");
    auto under = read(*root.value(), "ten.txt", 9);
    CHECK(!under.ok());
    CHECK(under.error().refusal == Refusal::TooLarge);
  }
}

// A cancellation (core/cancel.h) raised before a large read stops it after its first 8 MiB chunk,
// so a caller's abort mid-read does not wait for the whole file; a file of one chunk or less is
// one read(2) and does not look at the flag at all.
TEST(read_stops_between_chunks_once_cancelled) {
  for (Strategy s : test::strategies()) {
    std::string dir = test::scratch_dir();
    std::string big = dir + "/big.bin";
    test::write_file(big, std::string(std::size_t{20} << 20, 'a'));
    test::write_file(dir + "/small.txt", "small");
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    std::atomic<bool> flag{true};
    {
      CancelScope scope(&flag);
      auto stopped = read(*root.value(), "big.bin", 0);
      CHECK(!stopped.ok() && stopped.error().err == ECANCELED);
      auto small = read(*root.value(), "small.txt", 0);
      CHECK(small.ok());
    }
    auto whole = read(*root.value(), "big.bin", 0);
    CHECK(whole.ok());
    const Bytes* b = std::get_if<Bytes>(&whole.value());
    CHECK(b != nullptr && b->data.size() == (std::size_t{20} << 20));
  }
}
