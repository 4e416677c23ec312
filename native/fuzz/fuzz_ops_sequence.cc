// libFuzzer target: a sequence of up to eight operations (or one batch of them) through
// pinnedfs::execute over a scratch tree full of traps, under either strategy. After every input:
// no answer carried the canary, the canary tree is unchanged, and no descriptor leaked.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "requests.h"

using namespace pinnedfs;
using namespace pinnedfs::fuzz;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  harness->world.reset();
  int fds_before = open_fd_count();
  const Root& root = root_of(in);
  bool as_batch = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  bool verify = in.ConsumeBool();
  int count = in.ConsumeIntegralInRange<int>(1, 8);
  std::vector<Request> requests;
  for (int i = 0; i < count && in.remaining_bytes() > 0; ++i)
    requests.push_back(grammar_request(harness->world, in));
  if (as_batch) {
    BatchLimits limits;
    limits.size = 8;
    limits.response = 64;
    for (const auto& r : execute_batch(root, requests, limits, verify))
      check_answer(r, harness->canary);
  } else {
    for (const auto& r : requests) check_answer(execute(root, r, verify), harness->canary);
  }
  must(open_fd_count() == fds_before, "descriptor leaked",
       std::to_string(fds_before) + " -> " + std::to_string(open_fd_count()));
  harness->world.check_canary();
  return 0;
}
