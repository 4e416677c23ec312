// The trip off the JavaScript thread and back: one queue per environment, drained by a few runners
// on libuv's thread pool, whose answers come back in batches through the settle pacer.
//
// One napi async work item per request costs, for each request, an async resource, a queued libuv
// work item, a pool thread woken and the loop woken: with 256 requests in flight that per-item
// overhead, not the system calls, set the throughput (measured: docs/performance.md, "the trip").
// Here a request is a queue entry. A runner (one napi async work item) takes entries until the
// queue is empty. The first request of a turn of the loop starts a runner at once when none is
// free to take it, so an awaited request waits for nothing; the rest of that turn's requests are
// only queued, and at the end of the turn (settle_pacer.h, at_turn_end) runners are started for
// what the running ones leave, never more than libuv has threads. 256 requests submitted in one
// turn thus cost a handful of work items, not 256 (measured: starting a runner per request, as a
// runner drains the queue faster than one JavaScript turn fills it, spent 13% of the process's
// time waking pool threads).
//
// An awaited caller's next request comes a few microseconds after its answer is settled. A runner
// that empties the queue therefore lingers, spinning for at most 50 us, and takes that request
// itself: the JavaScript thread neither queues a work item nor wakes a pool thread for it. One
// runner per environment lingers at a time, and at most half of libuv's pool in the whole process
// (none with a pool of one thread), so an idle environment spends at most one pool thread, for
// 50 us, after its last request (measured: docs/performance.md, "a runner lingers").
//
// A request that blocks holds its runner, as it held a pool thread before: the others keep
// running, and the next request starts another runner while fewer than the pool's size are busy.
//
// Runners hold the Trip (shared), so a runner still on the pool when the environment is torn down
// finds its queue; Node waits for async work in flight before it frees the environment.
#ifndef PINNEDFS_TRIP_H
#define PINNEDFS_TRIP_H

#include <node_api.h>

#include <atomic>
#include <deque>
#include <memory>
#include <mutex>

#include "settle_pacer.h"

namespace pinnedfs {

// An operation on its way: run() on a pool thread, then deliver() on the JavaScript thread.
class TripJob : public PendingSettle {
 public:
  virtual void run() = 0;
};

class Trip : public std::enable_shared_from_this<Trip> {
 public:
  // `pacer` (may be null: then each runner settles its answers when it ends) must outlive every
  // runner: the environment's state owns both, and every job holds that state.
  Trip(SettlePacer* pacer, unsigned max_runners) : pacer_(pacer), max_runners_(max_runners) {}

  // libuv's pool size, as libuv reads it (UV_THREADPOOL_SIZE, 1 to 1024, default 4).
  static unsigned pool_size();

  // On the JavaScript thread: queues `job` and starts a runner if none is free to take it. False
  // when no runner could be started and none is running (the environment is stopping): the job
  // stays queued and is dropped with the Trip.
  bool submit(napi_env env, std::unique_ptr<TripJob> job);

  // On the JavaScript thread, from the environment's cleanup hook: drops what no runner is left to
  // take (every queued job holds the environment's state, which holds this Trip).
  void drop_queued();

  // Runners started so far (JavaScript thread only): tests count them to prove a turn's requests
  // share a few work items.
  double runners_started() const { return started_; }

 private:
  struct Runner;
  // Starts `count` runners (already counted in runners_); false if none could be started.
  bool start_runners(napi_env env, unsigned count);
  // Runners that the queue needs beyond those running, counted in runners_ (under mutex_).
  unsigned claim_runners();
  static void turn_ended(void* self);
  static void execute(napi_env env, void* data);
  static void complete(napi_env env, napi_status status, void* data);

  // Under mutex_: the next entry, counted busy, or null when the queue is empty.
  std::unique_ptr<TripJob> take_locked();
  // Waits, without sleeping, for up to the linger window for an entry to be queued; true if one
  // was (it may already have been taken by another runner).
  bool linger();

  std::mutex mutex_;
  std::deque<std::unique_ptr<TripJob>> todo_;
  // Entries in todo_, readable without the lock by a lingering runner.
  std::atomic<std::size_t> queued_{0};
  // A runner lingers (under mutex_): at most one at a time.
  bool lingering_ = false;
  // Set once by drop_queued(): the environment is going away, and a lingering runner stops waiting.
  std::atomic<bool> stopping_{false};
  unsigned runners_ = 0;  // runners started and not yet ended
  unsigned busy_ = 0;     // runners running a job right now
  SettlePacer* pacer_;
  unsigned max_runners_;
  // JavaScript thread only: this turn has submitted, and its end will start the runners needed.
  bool turn_open_ = false;
  napi_env env_ = nullptr;
  double started_ = 0;
};

}  // namespace pinnedfs

#endif
