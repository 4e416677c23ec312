#include "trip.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <utility>
#include <vector>

namespace pinnedfs {

// One runner: the Trip it drains, its async work item, and the answers it settles itself (those the
// pacer did not take: no pacer, or the environment stopping).
struct Trip::Runner {
  std::shared_ptr<Trip> trip;
  napi_async_work work = nullptr;
  std::vector<std::unique_ptr<TripJob>> kept;
};

unsigned Trip::pool_size() {
  const char* v = std::getenv("UV_THREADPOOL_SIZE");
  long n = v != nullptr ? std::strtol(v, nullptr, 10) : 4;
  if (n < 1) n = 1;
  if (n > 1024) n = 1024;
  return static_cast<unsigned>(n);
}

unsigned Trip::claim_runners() {
  // Runners not busy are about to take an entry: start more only for what they leave.
  std::size_t waiting = todo_.size();
  std::size_t free = runners_ - busy_;
  unsigned want =
      waiting > free
          ? static_cast<unsigned>(std::min<std::size_t>(waiting - free, max_runners_ - runners_))
          : 0;
  runners_ += want;
  return want;
}

bool Trip::submit(napi_env env, std::unique_ptr<TripJob> job) {
  env_ = env;
  unsigned start = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    todo_.push_back(std::move(job));
    queued_.store(todo_.size(), std::memory_order_release);
    if (!turn_open_) start = std::min(claim_runners(), 1u);
  }
  // No end of turn to wait for (no pacer, or the environment stopping): every request starts what
  // it needs itself.
  if (!turn_open_ && pacer_ != nullptr) turn_open_ = pacer_->at_turn_end(&Trip::turn_ended, this);
  if (start == 0) return true;
  return start_runners(env, start);
}

void Trip::turn_ended(void* self) {
  auto* trip = static_cast<Trip*>(self);
  trip->turn_open_ = false;
  unsigned start = 0;
  {
    std::lock_guard<std::mutex> lock(trip->mutex_);
    start = trip->claim_runners();
  }
  if (start == 0) return;
  // Called from the loop, outside any JavaScript call: the runners' names need a scope of their
  // own.
  napi_handle_scope scope = nullptr;
  if (napi_open_handle_scope(trip->env_, &scope) != napi_ok) {
    std::lock_guard<std::mutex> lock(trip->mutex_);
    trip->runners_ -= start;
    return;
  }
  trip->start_runners(trip->env_, start);
  napi_close_handle_scope(trip->env_, scope);
}

bool Trip::start_runners(napi_env env, unsigned count) {
  unsigned started = 0;
  for (; started < count; ++started) {
    auto runner = std::make_unique<Runner>();
    runner->trip = shared_from_this();
    napi_value name = nullptr;
    if (napi_create_string_utf8(env, "pinnedfs", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, nullptr, name, execute, complete, runner.get(),
                               &runner->work) != napi_ok)
      break;
    if (napi_queue_async_work(env, runner->work) != napi_ok) {
      napi_delete_async_work(env, runner->work);
      break;
    }
    runner.release();  // complete() takes it back
    started_ += 1;
  }
  if (started == count) return true;
  std::lock_guard<std::mutex> lock(mutex_);
  runners_ -= count - started;
  return runners_ > 0;
}

void Trip::drop_queued() {
  std::deque<std::unique_ptr<TripJob>> dropped;
  stopping_.store(true, std::memory_order_release);
  std::lock_guard<std::mutex> lock(mutex_);
  if (runners_ == 0) {
    dropped.swap(todo_);
    queued_.store(0, std::memory_order_release);
  }
}

namespace {
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}
// How long a runner that emptied the queue waits, spinning, for the next request. An awaited caller
// submits its next request within a few microseconds of its answer being settled; a runner still
// awake takes it without the JavaScript thread queuing a work item and waking a pool thread (the
// futex wake alone was ~20% of the JavaScript thread's time in an awaited read loop). 50 us covers
// the settle and the caller's turn with room; longer bought nothing in the A/B runs and only burns
// a core that has nothing to do (docs/performance.md, "a runner lingers").
constexpr auto kLinger = std::chrono::microseconds(50);

// Runners lingering now, over every environment of the process (each worker thread has a Trip of
// its own, and all share libuv's one pool). At most half the pool spins at once, so libuv's other
// work (fs, dns, zlib, another environment's first request) always finds threads that are not
// spinning; a pool of one thread never spins.
std::atomic<unsigned> lingering_runners{0};

bool claim_linger(unsigned pool) {
  unsigned most = pool / 2;
  unsigned now = lingering_runners.load(std::memory_order_relaxed);
  while (now < most) {
    if (lingering_runners.compare_exchange_weak(now, now + 1, std::memory_order_acq_rel))
      return true;
  }
  return false;
}
}  // namespace

bool Trip::linger() {
  auto deadline = std::chrono::steady_clock::now() + kLinger;
  for (unsigned i = 0;; ++i) {
    if (queued_.load(std::memory_order_acquire) > 0) return true;
    if (stopping_.load(std::memory_order_acquire)) return false;
    for (int k = 0; k < 16; ++k) cpu_relax();
    if ((i & 7) == 7 && std::chrono::steady_clock::now() >= deadline) return false;
  }
}

std::unique_ptr<TripJob> Trip::take_locked() {
  if (todo_.empty()) return nullptr;
  std::unique_ptr<TripJob> next = std::move(todo_.front());
  todo_.pop_front();
  queued_.store(todo_.size(), std::memory_order_release);
  ++busy_;
  return next;
}

// On a pool thread: takes entries until the queue is empty, handing each answer to the pacer as
// soon as the next entry is taken, so an early answer never waits for the runner's later ones.
// When the queue is empty, one runner at a time lingers (and at most half the pool's threads in the
// process): its last answer goes to the pacer too, and it waits a moment for the request that
// answer's caller is about to make. Any other runner keeps its last answer for complete(), which
// the loop runs anyway: one wake of the loop, not two.
void Trip::execute(napi_env, void* data) {
  auto* runner = static_cast<Runner*>(data);
  Trip& trip = *runner->trip;
  std::unique_ptr<TripJob> done;
  for (;;) {
    std::unique_ptr<TripJob> next;
    bool lingers = false;
    {
      std::lock_guard<std::mutex> lock(trip.mutex_);
      if (done) --trip.busy_;
      next = trip.take_locked();
      if (!next) {
        // Without a pacer its answer could only be settled by complete(): nothing to wait for.
        lingers = done && trip.pacer_ != nullptr && !trip.lingering_ &&
                  !trip.stopping_.load(std::memory_order_acquire) &&
                  claim_linger(trip.max_runners_);
        if (lingers)
          trip.lingering_ = true;
        else
          --trip.runners_;
      }
    }
    if (done) {
      std::unique_ptr<PendingSettle> answer(done.release());
      // Settled (or, the environment stopping, dropped) on the JavaScript thread in complete().
      if ((!next && !lingers) || trip.pacer_ == nullptr || !trip.pacer_->post(answer))
        runner->kept.emplace_back(static_cast<TripJob*>(answer.release()));
    }
    if (lingers) {
      trip.linger();
      lingering_runners.fetch_sub(1, std::memory_order_acq_rel);
      std::lock_guard<std::mutex> lock(trip.mutex_);
      trip.lingering_ = false;
      next = trip.take_locked();
      if (!next) --trip.runners_;
    }
    if (!next) return;
    next->run();
    done = std::move(next);
  }
}

// On the JavaScript thread, inside the callback scope Node opens for async work.
void Trip::complete(napi_env env, napi_status status, void* data) {
  std::unique_ptr<Runner> runner(static_cast<Runner*>(data));
  napi_delete_async_work(env, runner->work);
  if (status == napi_cancelled) {
    // Never ran (the environment is going away): it is no runner any more.
    std::lock_guard<std::mutex> lock(runner->trip->mutex_);
    --runner->trip->runners_;
    return;
  }
  if (runner->trip->pacer_ != nullptr) runner->trip->pacer_->settled_elsewhere(runner->kept.size());
  for (auto& job : runner->kept) job->deliver(env);
}

}  // namespace pinnedfs
