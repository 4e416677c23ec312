// Paces the settling of finished operations so a flood of completions cannot hold the JavaScript
// thread for one long turn of the event loop.
//
// libuv hands every thread-pool job that has finished to the loop in one go: with 256 reads in
// flight, one turn settles all 256 promises and runs every continuation behind them before a timer
// or a socket is looked at (measured: 256 completions per turn, 20 to 50 ms each, for PinnedRoot
// and the extension). The pacer lets completions settle at once while the current turn has spent
// less than its budget, and queues the rest; the queue is settled in later turns, one slice of at
// most the budget per turn, in the order the work finished, so timers and I/O run between slices.
//
// Everything here runs on the environment's own JavaScript thread: no locks. Uses Node-API and
// libuv only (the loop is the environment's, from napi_get_uv_event_loop).
#ifndef PINNEDFS_SETTLE_PACER_H
#define PINNEDFS_SETTLE_PACER_H

#include <node_api.h>

#include <cstdint>
#include <deque>
#include <memory>

namespace pinnedfs {

// A finished operation whose promise is still to be settled.
class PendingSettle {
 public:
  virtual ~PendingSettle() = default;
  // Settles the promise (or drops the answer when the environment is stopping).
  virtual void deliver(napi_env env) = 0;
};

class SettlePacer {
 public:
  // Longest a turn of the loop spends settling before the rest waits for the next turn. Small
  // against the 5 ms a turn may take in all, large against one settle (tens of microseconds), so
  // a turn still settles dozens and the extra turns cost little.
  static constexpr std::uint64_t kBudgetNs = 1'000'000;

  // The environment's pacer, or nullptr when none could be made (completions then settle at once,
  // as they would without one). Torn down by the environment's cleanup: queued answers are
  // dropped unseen, as every answer is once the environment stops.
  static SettlePacer* make(napi_env env);

  // Takes a finished operation: settles it now when this turn has budget left and nothing is
  // queued ahead of it, else queues it for a later turn.
  void take(napi_env env, std::unique_ptr<PendingSettle> job);

  // Completions that waited for a later turn so far (for tests that check a flood was paced).
  double waited() const { return waited_; }

 private:
  struct Handles;
  explicit SettlePacer(napi_env env);
  bool over_budget();
  void drain();
  static void teardown(napi_async_cleanup_hook_handle handle, void* arg);

  napi_env env_;
  Handles* uv_ = nullptr;
  napi_ref resource_ = nullptr;
  napi_async_context context_ = nullptr;
  napi_async_cleanup_hook_handle cleanup_ = nullptr;
  std::deque<std::unique_ptr<PendingSettle>> queue_;
  // When this turn's first settle began (0: none yet this turn).
  std::uint64_t slice_start_ = 0;
  bool closing_ = false;
  double waited_ = 0;
};

}  // namespace pinnedfs

#endif
