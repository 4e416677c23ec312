#include "budget.h"

#include <atomic>

namespace pinnedfs {

namespace {
std::atomic<std::uint64_t> g_budget{kDefaultContentBudget};
std::atomic<std::uint64_t> g_in_flight{0};
}  // namespace

std::uint64_t content_budget() {
  return g_budget.load(std::memory_order_relaxed);
}

void set_content_budget(std::uint64_t bytes) {
  g_budget.store(bytes == 0 ? kDefaultContentBudget : bytes, std::memory_order_relaxed);
}

std::uint64_t content_in_flight() {
  return g_in_flight.load(std::memory_order_relaxed);
}

bool Charge::hold(std::uint64_t bytes) {
  if (bytes <= held_) return true;
  std::uint64_t more = bytes - held_;
  std::uint64_t limit = content_budget();
  std::uint64_t now = g_in_flight.load(std::memory_order_relaxed);
  do {
    if (more > limit || now > limit - more) return false;
  } while (!g_in_flight.compare_exchange_weak(now, now + more, std::memory_order_relaxed));
  held_ = bytes;
  return true;
}

void Charge::release() {
  if (held_ == 0) return;
  g_in_flight.fetch_sub(held_, std::memory_order_relaxed);
  held_ = 0;
}

Error over_content_budget(std::uint64_t bytes, const char* syscall, std::string path) {
  Error e = sys_error(ENOMEM, syscall, std::move(path));
  e.description = std::to_string(bytes) +
                  " bytes of content would take the process past its content budget of " +
                  std::to_string(content_budget()) + " bytes (" +
                  std::to_string(content_in_flight()) +
                  " in flight): retry once other reads have settled, or raise the budget";
  return e;
}

}  // namespace pinnedfs
