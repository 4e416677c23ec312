#include "settle_pacer.h"

#include <uv.h>

#include <algorithm>
#include <array>
#include <utility>

namespace pinnedfs {

// The libuv handles, apart from the pacer: they are freed only once libuv has closed them, which
// is after the environment's cleanup hook returns, while the pacer itself may still be asked to
// take a late completion (the environment's cleanup waits for work already on the pool).
struct SettlePacer::Handles {
  uv_async_t wake;    // a later turn: settle the next slice of the queue
  uv_prepare_t turn;  // the start of the next turn: a fresh budget
  // The end of this turn (at_turn_end): whichever of the two comes first, before the loop waits
  // for events (submitted from a timer) or right after it has (from an I/O callback).
  uv_prepare_t before_wait;
  uv_check_t after_wait;
  SettlePacer* pacer;
  napi_async_cleanup_hook_handle cleanup = nullptr;
  int open = 4;
};

namespace {
std::array<uv_handle_t*, 4> all_handles(SettlePacer::Handles* hs) {
  return {reinterpret_cast<uv_handle_t*>(&hs->wake), reinterpret_cast<uv_handle_t*>(&hs->turn),
          reinterpret_cast<uv_handle_t*>(&hs->before_wait),
          reinterpret_cast<uv_handle_t*>(&hs->after_wait)};
}
}  // namespace

SettlePacer* SettlePacer::make(napi_env env) {
  uv_loop_t* loop = nullptr;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) return nullptr;
  auto* pacer = new SettlePacer(env);
  napi_value resource = nullptr, name = nullptr;
  bool ok = napi_create_object(env, &resource) == napi_ok &&
            napi_create_reference(env, resource, 1, &pacer->resource_) == napi_ok &&
            napi_create_string_utf8(env, "pinnedfs", NAPI_AUTO_LENGTH, &name) == napi_ok &&
            napi_async_init(env, resource, name, &pacer->context_) == napi_ok;
  auto* handles = ok ? new Handles() : nullptr;
  if (handles) {
    handles->pacer = pacer;
    ok = uv_async_init(loop, &handles->wake,
                       [](uv_async_t* h) { static_cast<Handles*>(h->data)->pacer->drain(); }) == 0;
    if (!ok) delete handles;
  }
  if (ok) {
    handles->wake.data = handles;
    handles->turn.data = handles;
    handles->before_wait.data = handles;
    handles->after_wait.data = handles;
    uv_prepare_init(loop, &handles->turn);
    uv_prepare_init(loop, &handles->before_wait);
    uv_check_init(loop, &handles->after_wait);
    // Never what keeps the loop alive: what is in flight does (expect()).
    uv_unref(reinterpret_cast<uv_handle_t*>(&handles->before_wait));
    uv_unref(reinterpret_cast<uv_handle_t*>(&handles->after_wait));
    // Idle, the pacer must not keep the process alive: the wake handle holds the loop only while
    // something is queued.
    uv_unref(reinterpret_cast<uv_handle_t*>(&handles->wake));
    uv_unref(reinterpret_cast<uv_handle_t*>(&handles->turn));
    pacer->uv_ = handles;
    if (napi_add_async_cleanup_hook(env, teardown, pacer, &pacer->cleanup_) == napi_ok)
      return pacer;
    // No way to be told when the environment stops: close the handles now and go without.
    pacer->uv_ = nullptr;
    for (uv_handle_t* h : all_handles(handles)) {
      uv_close(h, [](uv_handle_t* closed) {
        auto* hs = static_cast<Handles*>(closed->data);
        if (--hs->open == 0) delete hs;
      });
    }
  }
  if (pacer->context_ != nullptr) napi_async_destroy(env, pacer->context_);
  if (pacer->resource_ != nullptr) napi_delete_reference(env, pacer->resource_);
  delete pacer;
  return nullptr;
}

SettlePacer::SettlePacer(napi_env env) : env_(env) {}

bool SettlePacer::over_budget() {
  std::uint64_t now = uv_hrtime();
  if (slice_start_ == 0) {
    slice_start_ = now;
    uv_prepare_start(&uv_->turn, [](uv_prepare_t* h) {
      auto* hs = static_cast<Handles*>(h->data);
      hs->pacer->slice_start_ = 0;
      uv_prepare_stop(h);
    });
  }
  return now - slice_start_ >= kBudgetNs;
}

bool SettlePacer::post(std::unique_ptr<PendingSettle>& job) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (posting_closed_) return false;
  bool first = incoming_.empty();
  incoming_.push_back(std::move(job));
  // One wake per batch: a post behind one not yet taken rides on its wake.
  if (first) uv_async_send(&uv_->wake);
  return true;
}

void SettlePacer::expect() {
  if (closing_ || uv_ == nullptr) return;
  expected_ += 1;
  hold_loop(true);
}

bool SettlePacer::at_turn_end(void (*fn)(void*), void* arg) {
  if (closing_ || uv_ == nullptr || turn_end_fn_ != nullptr) return false;
  turn_end_fn_ = fn;
  turn_end_arg_ = arg;
  uv_prepare_start(&uv_->before_wait, [](uv_prepare_t* h) {
    auto* hs = static_cast<Handles*>(h->data);
    if (hs->pacer != nullptr) hs->pacer->turn_ended();
  });
  uv_check_start(&uv_->after_wait, [](uv_check_t* h) {
    auto* hs = static_cast<Handles*>(h->data);
    if (hs->pacer != nullptr) hs->pacer->turn_ended();
  });
  return true;
}

void SettlePacer::turn_ended() {
  uv_prepare_stop(&uv_->before_wait);
  uv_check_stop(&uv_->after_wait);
  void (*fn)(void*) = turn_end_fn_;
  turn_end_fn_ = nullptr;
  if (fn != nullptr) fn(turn_end_arg_);
}

void SettlePacer::settled_elsewhere(std::size_t n) {
  if (closing_ || uv_ == nullptr || n == 0) return;
  expected_ -= std::min<std::uint64_t>(expected_, n);
  hold_loop(expected_ > 0 || !queue_.empty());
}

void SettlePacer::hold_loop(bool hold) {
  if (hold == held_) return;
  held_ = hold;
  auto* wake = reinterpret_cast<uv_handle_t*>(&uv_->wake);
  if (hold) {
    uv_ref(wake);
  } else {
    uv_unref(wake);
  }
}

// One slice: takes what the pool has posted, then settles queued operations, oldest first, each in
// its own callback scope so the continuations it wakes (promise reactions, nextTicks) run before
// the clock is read again, until the budget is spent; always at least one, so the queue shrinks
// every turn. What arrived and is still queued at the end waits for a later turn.
void SettlePacer::drain() {
  std::vector<std::unique_ptr<PendingSettle>> arrived;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    arrived.swap(incoming_);
  }
  std::size_t arrivals = arrived.size();
  expected_ -= std::min<std::uint64_t>(expected_, arrivals);
  for (auto& job : arrived) queue_.push_back(std::move(job));
  arrived.clear();
  bool first = true;
  while (!closing_ && !queue_.empty()) {
    if (over_budget() && !first) break;
    first = false;
    std::unique_ptr<PendingSettle> job = std::move(queue_.front());
    queue_.pop_front();
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env_, &scope) != napi_ok) continue;
    napi_value resource = nullptr;
    napi_callback_scope callback = nullptr;
    if (napi_get_reference_value(env_, resource_, &resource) == napi_ok && resource != nullptr &&
        napi_open_callback_scope(env_, resource, context_, &callback) == napi_ok) {
      job->deliver(env_);
      // The job goes before the scope closes: closing it runs the continuations, which must find
      // the operation over (its hold on the root released), as they do when Node settles it.
      job.reset();
      napi_close_callback_scope(env_, callback);
    }
    // Else the environment is stopping: the answer is dropped with it.
    napi_close_handle_scope(env_, scope);
  }
  if (closing_) return;
  waited_ += static_cast<double>(std::min(queue_.size(), arrivals));
  hold_loop(expected_ > 0 || !queue_.empty());
  if (!queue_.empty()) uv_async_send(&uv_->wake);
}

// The environment is stopping: no JavaScript will see a queued answer, so they are dropped; the
// handles close, and libuv's close callbacks tell Node the cleanup is done.
void SettlePacer::teardown(napi_async_cleanup_hook_handle, void* arg) {
  auto* pacer = static_cast<SettlePacer*>(arg);
  pacer->closing_ = true;
  std::vector<std::unique_ptr<PendingSettle>> late;
  {
    // From here a runner's post() fails, and the runner settles (drops) its answer itself.
    std::lock_guard<std::mutex> lock(pacer->mutex_);
    pacer->posting_closed_ = true;
    late.swap(pacer->incoming_);
  }
  if (pacer->context_ != nullptr) napi_async_destroy(pacer->env_, pacer->context_);
  if (pacer->resource_ != nullptr) napi_delete_reference(pacer->env_, pacer->resource_);
  pacer->context_ = nullptr;
  pacer->resource_ = nullptr;
  Handles* handles = pacer->uv_;
  pacer->uv_ = nullptr;
  // From here nothing touches the pacer: the queued operations hold the last references to the
  // environment's state, which owns the pacer, and go last.
  std::deque<std::unique_ptr<PendingSettle>> dropped = std::move(pacer->queue_);
  pacer->queue_.clear();
  for (auto& job : late) dropped.push_back(std::move(job));
  handles->cleanup = pacer->cleanup_;
  handles->pacer = nullptr;
  for (uv_handle_t* h : all_handles(handles)) {
    uv_close(h, [](uv_handle_t* closed) {
      auto* hs = static_cast<Handles*>(closed->data);
      if (--hs->open > 0) return;
      napi_remove_async_cleanup_hook(hs->cleanup);
      delete hs;
    });
  }
}

}  // namespace pinnedfs
