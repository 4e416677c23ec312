// libFuzzer target: one request decoded field by field straight from the bytes (unknown operations
// and flags, modes and ids out of range, arbitrary path bytes), through validate(), execute() and
// execute_batch() over the scratch tree. Malformed input must come back as an Error, never a crash;
// what passes must keep the same invariants as the sequence target.
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
    must(pinned.ok(), "pin scratch root");
    g_roots[i] = pinned.take();
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider in(data, size);
  const Root& root = *g_roots[in.ConsumeBool() ? 1 : 0];
  bool batch = in.ConsumeBool();
  Request r = raw_request(in);
  auto valid = validate(r);
  if (!valid.ok()) {
    must(valid.error().refusal == Refusal::BadArgument, "validate refused without BadArgument");
    // Anything validate refuses must be refused by execute too, before any syscall.
    auto again = execute(root, r, false);
    must(!again.ok() && again.error().refusal == Refusal::BadArgument, "execute ran what validate refused");
    return 0;
  }
  g_world->reset();
  int fds_before = open_fd_count();
  if (batch) {
    BatchLimits limits;
    limits.size = 4;
    limits.response = 32;
    for (const auto& res : execute_batch(root, {r, r}, limits, true)) check_answer(res, g_canary);
  } else {
    check_answer(execute(root, r, false), g_canary);
  }
  must(open_fd_count() == fds_before, "descriptor leaked");
  g_world->check_canary();
  return 0;
}
