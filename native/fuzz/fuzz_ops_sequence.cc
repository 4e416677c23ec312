// libFuzzer target: a sequence of up to eight operations (or one batch of them) through
// pinnedfs::execute over a scratch tree full of traps, under either strategy. After every input:
// no answer carried the canary, the canary tree is unchanged, and no descriptor leaked.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "requests.h"

namespace {
using namespace pinnedfs;
using namespace pinnedfs::fuzz;

World* g_world = nullptr;
std::shared_ptr<Root> g_roots[2];
std::set<std::pair<std::uint64_t, std::uint64_t>> g_canary;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_world = new World(World::make());
  g_canary = canary_identities(*g_world);
  for (int i = 0; i < 2; ++i) {
    auto pinned = Root::pin(g_world->root, i == 0 ? Strategy::Kernel : Strategy::Walk);
    must(pinned.ok(), "pin scratch root", pinned.ok() ? "" : pinned.error().description);
    g_roots[i] = pinned.take();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  g_world->reset();
  int fds_before = open_fd_count();
  const Root& root = *g_roots[in.ConsumeBool() ? 1 : 0];
  bool as_batch = in.ConsumeIntegralInRange<int>(0, 7) == 0;
  bool verify = in.ConsumeBool();
  int count = in.ConsumeIntegralInRange<int>(1, 8);
  std::vector<Request> requests;
  for (int i = 0; i < count && in.remaining_bytes() > 0; ++i) requests.push_back(grammar_request(*g_world, in));
  if (as_batch) {
    BatchLimits limits;
    limits.size = 8;
    limits.response = 64;
    for (const auto& r : execute_batch(root, requests, limits, verify)) check_answer(r, g_canary);
  } else {
    for (const auto& r : requests) check_answer(execute(root, r, verify), g_canary);
  }
  must(open_fd_count() == fds_before, "descriptor leaked",
       std::to_string(fds_before) + " -> " + std::to_string(open_fd_count()));
  g_world->check_canary();
  return 0;
}
