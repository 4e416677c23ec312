// libFuzzer target: one request decoded field by field straight from the bytes (unknown operations
// and flags, modes and ids out of range, arbitrary path bytes), through validate(), execute() and
// execute_batch() over the scratch tree. Malformed input must come back as an Error, never a crash;
// what passes must keep the same invariants as the sequence target.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "requests.h"

using namespace pinnedfs;
using namespace pinnedfs::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const Root& root = root_of(in);
  bool batch = in.ConsumeBool();
  Request r = raw_request(in);
  auto valid = validate(r);
  if (!valid.ok()) {
    must(valid.error().refusal == Refusal::BadArgument, "validate refused without BadArgument");
    // Anything validate refuses must be refused by execute too, before any syscall.
    auto again = execute(root, r, false);
    must(!again.ok() && again.error().refusal == Refusal::BadArgument,
         "execute ran what validate refused");
    return 0;
  }
  harness->world.reset();
  int fds_before = open_fd_count();
  if (batch) {
    BatchLimits limits;
    limits.size = 4;
    limits.response = 32;
    for (const auto& res : execute_batch(root, {r, r}, limits, true))
      check_answer(res, harness->canary);
  } else {
    check_answer(execute(root, r, false), harness->canary);
  }
  must(open_fd_count() == fds_before, "descriptor leaked");
  harness->world.check_canary();
  return 0;
}
