// The process's budget of content bytes in flight: file content read into native memory and not yet
// handed to JavaScript (a read's buffer, a batch's answers waiting to be settled, the packed small
// contents of a compact batch). One read stays under its own limit (core/limits.h), but many at
// once do not: eight concurrent 400 MiB reads of sparse files cost an attacker nothing and need
// 3.2 GB here. The budget bounds their sum for the whole process, every worker thread included.
//
// A read that would take the process past it fails at once with ENOMEM ("content budget"), and a
// batch member alone; it never waits. Waiting would hold a libuv thread-pool thread (shared with
// node:fs, dns and zlib) until other callers' answers were settled, a batch holding part of the
// budget could wait on itself, and nothing before the worker's fstat knows how large a read will
// be. The caller retries once others have settled, or raises the budget.
#pragma once
#include <cstdint>
#include <string>

#include "error.h"

namespace pinnedfs {

// 2 GiB: one read of the largest content there is (kMaxContentBytes, plus the byte that proves
// the end) always fits alone, so the budget never refuses a read the limits allow when nothing
// else is in flight.
constexpr std::uint64_t kDefaultContentBudget = std::uint64_t{1} << 31;

std::uint64_t content_budget();
// 0 restores the default.
void set_content_budget(std::uint64_t bytes);
std::uint64_t content_in_flight();

// A share of the budget, held until released or destroyed; moves with the content it covers.
class Charge {
 public:
  Charge() = default;
  Charge(const Charge&) = delete;
  Charge& operator=(const Charge&) = delete;
  Charge(Charge&& other) noexcept : held_(other.held_) { other.held_ = 0; }
  Charge& operator=(Charge&& other) noexcept {
    if (this != &other) {
      release();
      held_ = other.held_;
      other.held_ = 0;
    }
    return *this;
  }
  ~Charge() { release(); }

  // Holds `bytes` of the budget in all (more than now: the difference is taken); false, holding
  // what it held, when that would take the process past the budget.
  bool hold(std::uint64_t bytes);
  void release();
  std::uint64_t held() const { return held_; }

 private:
  std::uint64_t held_ = 0;
};

// The refusal of `bytes` more content than the budget has room for.
Error over_content_budget(std::uint64_t bytes, const char* syscall, std::string path);

}  // namespace pinnedfs
