// Paces the settling of finished operations so a flood of completions cannot hold the JavaScript
// thread for one long turn of the event loop.
//
// Finished operations arrive from the pool (post(), from the runners of trip.h), a batch of them
// per wake of the loop. Settled all at once, a flood's batch would hold the loop: with 256 reads in
// flight, one turn would settle all 256 promises and run every continuation behind them before a
// timer or a socket is looked at (measured with one libuv work item per request: 256 completions
// per turn, 20 to 50 ms each, for PinnedRoot and the extension). The pacer lets completions settle
// at once while the current turn has spent less than its budget, and queues the rest; the queue is
// settled in later turns, one slice of at most the budget per turn, in the order the work finished,
// so timers and I/O run between slices.
//
// Everything but post() runs on the environment's own JavaScript thread; post() takes the one lock,
// around the hand-over list. Uses Node-API and
// libuv only (the loop is the environment's, from napi_get_uv_event_loop).
#ifndef PINNEDFS_SETTLE_PACER_H
#define PINNEDFS_SETTLE_PACER_H

#include <node_api.h>

#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

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

  // On any thread: hands over a finished operation, to be settled on the JavaScript thread; a batch
  // handed over between two turns costs one wake of the loop. False when the environment is
  // stopping: `job` is left with the caller, who drops it (never inside this call, whose lock the
  // job's last reference to the environment's state would outlive).
  bool post(std::unique_ptr<PendingSettle>& job);

  // On the JavaScript thread: one more operation will be posted. The loop stays alive while any
  // is expected, as it does while a libuv work item is queued.
  void expect();
  // On the JavaScript thread: `n` expected operations were settled without being posted.
  void settled_elsewhere(std::size_t n);

  // On the JavaScript thread: calls fn(arg) once, at the end of this turn of the loop (before the
  // loop next waits for events, or right after it has). False, and no call, when the environment
  // is stopping or a call is already due.
  bool at_turn_end(void (*fn)(void*), void* arg);

  // Completions that waited for a later turn so far (for tests that check a flood was paced).
  double waited() const { return waited_; }

  // The libuv handles (settle_pacer.cc), apart from the pacer itself.
  struct Handles;

 private:
  explicit SettlePacer(napi_env env);
  bool over_budget();
  void drain();
  void hold_loop(bool hold);
  void turn_ended();
  static void teardown(napi_async_cleanup_hook_handle handle, void* arg);

  napi_env env_;
  Handles* uv_ = nullptr;
  napi_ref resource_ = nullptr;
  napi_async_context context_ = nullptr;
  napi_async_cleanup_hook_handle cleanup_ = nullptr;
  std::deque<std::unique_ptr<PendingSettle>> queue_;
  // Posted from the pool and not yet taken into queue_: under mutex_, as is closing_'s effect on
  // posting.
  std::mutex mutex_;
  std::vector<std::unique_ptr<PendingSettle>> incoming_;
  bool posting_closed_ = false;
  // Expected and not yet taken (JavaScript thread only).
  std::uint64_t expected_ = 0;
  bool held_ = false;
  void (*turn_end_fn_)(void*) = nullptr;
  void* turn_end_arg_ = nullptr;
  // When this turn's first settle began (0: none yet this turn).
  std::uint64_t slice_start_ = 0;
  bool closing_ = false;
  double waited_ = 0;
};

}  // namespace pinnedfs

#endif
