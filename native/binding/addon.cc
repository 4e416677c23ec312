// The only place that knows N-API, with its marshalling halves binding/args.h (JavaScript into core
// Requests) and binding/results.h (core Values and Errors back). This file holds what lives between
// them: the per-environment state, the pinned root handles, and the one promise-settling worker
// that runs the core on libuv's thread pool. No file-system logic lives here.
#include <napi.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "binding/args.h"
#include "binding/results.h"
#include "core/alloc.h"
#include "core/budget.h"
#include "core/cancel.h"
#include "core/execute.h"
#include "core/limits.h"
#include "core/request.h"
#include "core/root.h"
#include "core/value.h"
#include "ops/confine.h"
#include "ops/open.h"
#include "platform/platform.h"
#include "settle_pacer.h"
#include "trip.h"

namespace pinnedfs {
namespace {

// [promise, cancel()]: the pair the cancellable calls answer. cancel() only stores the flag the
// worker checks between acts: the JavaScript thread never waits on it.
Napi::Array with_cancel(Napi::Env env, Napi::Value promise,
                        const std::shared_ptr<std::atomic<bool>>& flag) {
  Napi::Array out = Napi::Array::New(env, 2);
  out.Set(0u, promise);
  out.Set(1u, Napi::Function::New(
                  env,
                  [flag](const Napi::CallbackInfo& i) -> Napi::Value {
                    flag->store(true);
                    return i.Env().Undefined();
                  },
                  "cancel"));
  return out;
}

using namespace binding;  // NOLINT(google-build-using-namespace): the binding's own halves

// Buffers reused across operations of one environment: taken and given back on the JavaScript
// thread, filled on the worker. A fresh buffer per operation, allocated on a worker and freed on
// the JavaScript thread, grows and trims the worker's heap over and over: a page fault per 4 KiB of
// answer each time, which cost more than the reads themselves (measured).
struct ScratchPool {
  std::size_t keep_bytes;   // a larger buffer is freed, not kept
  std::size_t total_bytes;  // most capacity kept in all: what the pool may hold on to when idle
  std::vector<std::string> free;
  std::size_t held = 0;

  std::string take() {
    if (free.empty()) return {};
    std::string s = std::move(free.back());
    free.pop_back();
    held -= s.capacity();
    return s;
  }
  void give(std::string&& s) {
    if (s.capacity() == 0 || s.capacity() > keep_bytes || held + s.capacity() > total_bytes) return;
    s.clear();
    held += s.capacity();
    free.push_back(std::move(s));
  }
};

// A compact batch in flight: the requests that run, where each answer goes, and, once run, every
// small content packed into one scratch buffer as it is read (the member's own string is freed on
// the worker right away, so the worker's heap holds one content at a time).
struct CompactBatch {
  static constexpr std::size_t kNotPacked = static_cast<std::size_t>(-1);
  std::vector<Request> requests;
  std::vector<uint32_t> where;   // requests[k] answers member where[k]
  std::vector<uint8_t> refused;  // members refused before the run (by the caller, or malformed)
  std::vector<std::pair<uint32_t, std::string>> problems;  // why a malformed member was refused
  std::vector<Result<pinnedfs::Value>> results;            // per member, once run
  std::vector<std::size_t> at;      // per member: offset of its content in scratch, or kNotPacked
  std::vector<std::size_t> length;  // per member: length of its packed content
  std::string scratch;
  Charge scratch_charge;  // scratch's share of the content budget (core/budget.h)

  // On the worker thread.
  void run(const Root& root, const BatchLimits& limits, bool verify, const std::string& alias) {
    std::size_t n = refused.size();
    at.assign(n, kNotPacked);
    length.assign(n, 0);
    auto ran = execute_batch(
        root, requests, limits, verify,
        [this](std::size_t k, Result<pinnedfs::Value>& r) {
          if (!r.ok()) return;
          Bytes* b = std::get_if<Bytes>(&r.value());
          if (!b || b->data.size() > kCopyThreshold) return;
          // Packed contents are content in flight too, and scratch grows with the answer: both
          // checked, and a member that does not fit fails alone.
          std::size_t want = scratch.size() + b->data.size();
          if (want > scratch.capacity()) {
            std::size_t grown = std::max(want, scratch.capacity() * 2);
            if (!scratch_charge.hold(grown)) {
              r = Result<pinnedfs::Value>(over_content_budget(grown, "read", requests[k].path));
              return;
            }
            if (!try_reserve(scratch, grown)) {
              r = Result<pinnedfs::Value>(out_of_memory(grown, "read", requests[k].path));
              return;
            }
          }
          at[where[k]] = scratch.size();
          length[where[k]] = b->data.size();
          scratch.append(b->data);
          r = Result<pinnedfs::Value>(pinnedfs::Value{});
        },
        alias);
    results.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      results.emplace_back(refused[i] ? bad_argument("refused before the batch was sent")
                                      : Error{});
    }
    for (std::size_t k = 0; k < where.size(); ++k) results[where[k]] = std::move(ran[k]);
    for (auto& p : problems)
      results[p.first] = Result<pinnedfs::Value>(bad_argument(std::move(p.second)));
  }

  // One small Buffer per member (measured: cheaper than one Buffer for the whole batch sliced in
  // JavaScript, whose large allocation is fresh pages every time the collector frees it).
  napi_value to_js(Out& out) {
    std::size_t n = results.size();
    std::uint8_t* failed_bytes = nullptr;
    napi_value failed = out.uint8array(n, &failed_bytes);
    napi_value values = out.array(n);
    for (std::size_t i = 0; i < n && out.ok(); ++i) {
      auto index = static_cast<uint32_t>(i);
      if (!results[i].ok()) {
        failed_bytes[i] = 1;
        out.set(values, index, error_to_js(out, results[i].error()));
      } else if (at[i] != kNotPacked) {
        out.set(values, index, out.buffer_copy(scratch.data() + at[i], length[i]));
      } else {
        out.set(values, index, value_to_js(out, results[i].value()));
      }
    }
    napi_value answer = out.array(2);
    out.set(answer, 0u, failed);
    out.set(answer, 1u, values);
    return answer;
  }
};

// ---------------------------------------------------------------------------------------------
// Per-environment state: each worker thread gets its own, and teardown drops every root it still
// holds (operations in flight keep their own reference, so the descriptor closes after them).

class RootHandle;

// Shared by the environment's instance data, every handle and every job in flight, so whichever
// outlives the others at teardown still finds it: a job completing after the instance data was
// finalized reads `alive` here, never freed memory.
struct EnvState {
  std::set<RootHandle*> live;
  napi_ref root_ctor = nullptr;
  // False from the environment's cleanup hook on: completions then drop their answers unseen.
  bool alive = true;
#ifdef PINNEDFS_TEST_HOOKS
  // Trips off the JavaScript thread this environment has made: tests count them to prove a batch
  // or a directory program is one trip.
  double trips = 0;
#endif
  ScratchPool scratch{8u << 20, 16u << 20, {}, 0};  // compact batches
  ScratchPool reads{
      kCopyThreshold + 1, 4u << 20, {}, 0};  // single reads (contents copied at settle)
  // Spreads a flood of completions over several turns of the loop (nullptr: settle each at once).
  std::unique_ptr<SettlePacer> pacer;
  // The queue every operation travels through to the pool (trip.h); always made, after the pacer.
  std::shared_ptr<Trip> trip;
};

// The instance data: a handle on the shared state.
struct AddonData {
  std::shared_ptr<EnvState> state = std::make_shared<EnvState>();
};

std::shared_ptr<EnvState> state_of(napi_env env) {
  void* data = nullptr;
  if (napi_get_instance_data(env, &data) != napi_ok || data == nullptr) return nullptr;
  return static_cast<AddonData*>(data)->state;
}

// ---------------------------------------------------------------------------------------------
// The one async shape: run `work` on the thread pool (through the environment's Trip), then settle
// a promise with `settle` (through its pacer). Raw Node-API rather than Napi::AsyncWorker, whose
// completion path builds node-addon-api objects that cannot fail quietly once the environment
// stops running JavaScript.

// What a settle function answers: resolve or reject, with which value (nullptr: nothing to send).
struct Settled {
  bool resolve;
  napi_value value;
};

template <class R>
class PromiseJob : public TripJob {
 public:
  using Work = std::function<R()>;
  using Settle = std::function<Settled(Out&, EnvState&, R&)>;

  // The promise, or nullptr when none could be made (the environment is stopping; any exception a
  // failed call left is the caller's to see).
  static napi_value start(napi_env env, Work work, Settle settle) {
    std::shared_ptr<EnvState> state = state_of(env);
    if (!state) return nullptr;
#ifdef PINNEDFS_TEST_HOOKS
    state->trips += 1;
#endif
    std::unique_ptr<PromiseJob> job(new PromiseJob(state, std::move(work), std::move(settle)));
    napi_value promise = nullptr;
    if (napi_create_promise(env, &job->deferred_, &promise) != napi_ok) return nullptr;
    // A job no runner could take stays queued, its promise pending: nothing can run JavaScript to
    // observe it any more.
    if (state->trip->submit(env, std::move(job)) && state->pacer) state->pacer->expect();
    return promise;
  }

  // On a runner's pool thread.
  void run() override {
    result_.emplace(work_fn_());
  }

 private:
  PromiseJob(std::shared_ptr<EnvState> state, Work work, Settle settle)
      : state_(std::move(state)), work_fn_(std::move(work)), settle_(std::move(settle)) {}

  // Past the cleanup hook no JavaScript will look at the promise again, and touching it could only
  // fail.
  void deliver(napi_env env) override {
    if (!state_->alive || !result_) return;
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    Out out(env);
    Settled s = settle_(out, *state_, *result_);
    if (out.buffer_failed()) {
      rejected_for_memory(out, deferred_);
    } else {
      settle(out, deferred_, s.resolve, s.value);
    }
    napi_close_handle_scope(env, scope);
  }

  std::shared_ptr<EnvState> state_;
  Work work_fn_;
  Settle settle_;
  std::optional<R> result_;
  napi_deferred deferred_ = nullptr;
};

// A promise already rejected with `e`.
napi_value rejected(napi_env env, const Error& e) {
  napi_deferred deferred = nullptr;
  napi_value promise = nullptr;
  if (napi_create_promise(env, &deferred, &promise) != napi_ok) return nullptr;
  Out out(env);
  settle(out, deferred, false, error_to_js(out, e));
  return promise;
}

// Settles with a core Result: its value, or its error.
Settled value_or_error(Out& out, Result<pinnedfs::Value>& r) {
  if (r.ok()) return {true, value_to_js(out, r.value())};
  return {false, error_to_js(out, r.error())};
}

Settled root_to_js(Out& out, EnvState& state, Result<std::shared_ptr<Root>>& r);

class RootHandle : public Napi::ObjectWrap<RootHandle> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(
        env, "RootHandle",
        {InstanceMethod<&RootHandle::execute>("execute"), InstanceMethod<&RootHandle::call>("call"),
         InstanceMethod<&RootHandle::batch>("batch"),
         InstanceMethod<&RootHandle::readMany>("readMany"),
         InstanceMethod<&RootHandle::confine>("confine"),
         InstanceMethod<&RootHandle::close>("close"),
         InstanceMethod<&RootHandle::cancellable>("cancellable"),
         InstanceMethod<&RootHandle::open_root>("openRoot"),
         InstanceMethod<&RootHandle::open>("open"),
         InstanceMethod<&RootHandle::open_path>("openPath")});
  }

  RootHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RootHandle>(info) {
    state_ = state_of(info.Env());
    if (state_) state_->live.insert(this);
  }
  ~RootHandle() override {
    if (state_) state_->live.erase(this);
  }

  void adopt(std::shared_ptr<Root> root) { root_ = std::move(root); }
  void drop() { root_.reset(); }

 private:
  std::shared_ptr<Root> root_;
  std::shared_ptr<EnvState> state_;

  static Napi::Value js(Napi::Env env, napi_value v) { return Napi::Value(env, v); }
  static Napi::Value rejected(Napi::Env env, const Error& e) {
    return js(env, pinnedfs::rejected(env, e));
  }

  Napi::Value closed(Napi::Env env) {
    return rejected(env, refusal(Refusal::BadArgument, "execute", "", "root is closed", EBADF));
  }

  // Runs a marshalled request on the pool; its value or error settles the promise on the JS thread.
  Napi::Value run(Napi::Env env, std::shared_ptr<Request> request, bool verify, std::string alias) {
    std::shared_ptr<Root> root = root_;
    return js(env, PromiseJob<Result<pinnedfs::Value>>::start(
                       env,
                       [root, request, verify, alias = std::move(alias)]() {
                         // Handed over: a base64 payload is decoded in its own storage.
                         return pinnedfs::execute(*root, std::move(*request), verify, alias);
                       },
                       [](Out& out, EnvState&, Result<pinnedfs::Value>& r) {
                         return value_or_error(out, r);
                       }));
  }

  // The request in info[0] and the root re-check in info[1], as execute(), cancellable() and open()
  // take them; when `ok` is false, `refused` is the rejected promise to answer instead.
  struct Marshalled {
    bool ok = false;
    Napi::Value refused;
    std::shared_ptr<Request> request;
    bool verify = false;
    std::string alias;
  };
  Marshalled marshal(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Marshalled m;
    if (!root_) {
      m.refused = closed(env);
      return m;
    }
    m.request = std::make_shared<Request>();
    std::string problem;
    Budget budget;
    if (!read_request(info[0], m.request.get(), &problem, &budget)) {
      m.refused = rejected(env, budget.refused ? budget.no_memory() : bad_argument(problem));
      return m;
    }
    // A getter run while marshalling may have closed this very handle.
    if (!root_) {
      m.refused = closed(env);
      return m;
    }
    m.verify = read_verify(info[1], &m.alias);
    m.ok = true;
    return m;
  }

  // execute(request, verifyRoot: boolean | alias) -> Promise<value>
  Napi::Value execute(const Napi::CallbackInfo& info) {
    Marshalled m = marshal(info);
    if (!m.ok) return m.refused;
    return run(info.Env(), m.request, m.verify, std::move(m.alias));
  }

  // call(op, path, recursive, limit, verifyRoot) -> Promise<value>: the hot path for the path-only
  // reads. Same core call as execute(), without reading a dozen named properties off a request
  // object; verifyRoot as execute()'s.
  Napi::Value call(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    auto request = std::make_shared<Request>();
    std::string problem;
    double op = info[0].IsNumber() ? info[0].As<Napi::Number>().DoubleValue() : -1;
    // Range first: casting NaN or a huge double to int is undefined.
    if (!(op >= 0 && op < 256) || op != static_cast<double>(static_cast<int>(op))) op = -1;
    if (!info[2].IsUndefined() && !info[2].IsBoolean()) {
      return rejected(env, bad_argument("operand 'recursive' must be a boolean"));
    }
    bool recursive = info[2].IsBoolean() && info[2].As<Napi::Boolean>().Value();
    Budget budget;
    if (!read_path_only(static_cast<int>(op), info[1], recursive, request.get(), &problem,
                        &budget)) {
      return rejected(env, budget.refused ? budget.no_memory() : bad_argument(problem));
    }
    if (!byte_limit(info[3], &request->max_bytes)) {
      return rejected(env, bad_argument("read limit must be an integer from 1 to " +
                                        std::to_string(kMaxContentBytes)));
    }
    std::string alias;
    bool verify = read_verify(info[4], &alias);
    std::shared_ptr<Root> root = root_;
    if (request->op == Op::ReadFile) {
      auto buffer = std::make_shared<std::string>();
      if (state_) *buffer = state_->reads.take();
      return js(env, PromiseJob<Result<pinnedfs::Value>>::start(
                         env,
                         [root, request, buffer, verify, alias]() {
                           return pinnedfs::execute_read(*root, *request, std::move(*buffer),
                                                         verify, alias);
                         },
                         [](Out& out, EnvState& state, Result<pinnedfs::Value>& r) {
                           Settled s = value_or_error(out, r);
                           // A small content was copied into the Buffer: its storage goes back to
                           // the pool.
                           Bytes* b = r.ok() ? std::get_if<Bytes>(&r.value()) : nullptr;
                           if (b && b->data.size() <= kCopyThreshold)
                             state.reads.give(std::move(b->data));
                           return s;
                         }));
    }
    return run(env, request, verify, alias);
  }

  // readMany(ops: Uint8Array, paths: string[], recursive: Uint8Array, size, response, verifyRoot,
  //          memberLimit)
  //   -> Promise<[failed: Uint8Array, values: Array]>
  // A batch of path-only reads in a compact encoding (no request objects to read property by
  // property), answered compactly: values[i] is member i's value, or its error when failed[i] is 1.
  // Op 255 marks a member the caller already refused: it is not run.
  Napi::Value readMany(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    if (!info[0].IsTypedArray() ||
        info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array || !info[1].IsArray() ||
        !info[2].IsTypedArray() ||
        info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      return rejected(
          env,
          bad_argument("readMany(ops: Uint8Array, paths: string[], recursive: Uint8Array, ...)"));
    }
    Napi::Uint8Array op_codes = info[0].As<Napi::Uint8Array>();
    Napi::Array paths = info[1].As<Napi::Array>();
    Napi::Uint8Array recursive = info[2].As<Napi::Uint8Array>();
    std::size_t n = op_codes.ElementLength();
    uint32_t path_count = 0;
    if (!length_of(paths, &path_count) || path_count != n || recursive.ElementLength() != n) {
      return rejected(env, bad_argument("readMany: ops, paths and recursive differ in length"));
    }
    BatchLimits limits;
    bool ok_size = true;
    bool ok_response = true;
    double size = info[3].IsNumber() ? info[3].As<Napi::Number>().DoubleValue() : -1;
    double response = info[4].IsNumber() ? info[4].As<Napi::Number>().DoubleValue() : -1;
    ok_size =
        size >= 0 && size <= (1 << 20) && size == static_cast<double>(static_cast<int64_t>(size));
    ok_response = response >= 0 && response <= static_cast<double>(1ll << 53) &&
                  response == static_cast<double>(static_cast<int64_t>(response));
    if (!ok_size || !ok_response)
      return rejected(env,
                      bad_argument("batch limits: size and response must be integers in range"));
    limits.size = static_cast<std::size_t>(size);
    limits.response = static_cast<uint64_t>(response);
    if (n > limits.size) {
      return rejected(
          env, bad_argument("batch of " + std::to_string(n) + " members exceeds the limit of " +
                            std::to_string(limits.size)));
    }
    if (!byte_limit(info[6], &limits.member)) {
      return rejected(env, bad_argument("member read limit must be an integer from 1 to " +
                                        std::to_string(kMaxContentBytes)));
    }
    Budget budget;
    auto job = std::make_shared<CompactBatch>();
    job->requests.reserve(n);
    job->where.reserve(n);
    job->refused.assign(n, 0);
    // Copied before any member is read: a member's getter can detach or shrink these arrays, and a
    // pointer taken before it ran would then point at freed memory.
    std::vector<uint8_t> codes(op_codes.Data(), op_codes.Data() + n);
    std::vector<uint8_t> rec(recursive.Data(), recursive.Data() + n);
    for (uint32_t i = 0; i < n; ++i) {
      if (codes[i] == kRefusedMember) {
        job->refused[i] = 1;
        continue;
      }
      Request r;
      std::string problem;
      // A member's getter may throw (taken back by element(), the member fails alone) or close
      // this very handle (checked once every member is read).
      Napi::Value path = element(paths, i, "a path", &problem);
      if (!problem.empty() || !read_path_only(codes[i], path, rec[i] != 0, &r, &problem, &budget)) {
        // A malformed member fails alone, as in batch().
        job->refused[i] = 1;
        job->problems.emplace_back(i, std::move(problem));
        continue;
      }
      job->requests.push_back(std::move(r));
      job->where.push_back(i);
    }
    // A copy the system refused: the call as a whole could not be marshalled.
    if (budget.refused) return rejected(env, budget.no_memory());
    if (!root_) return closed(env);
    std::string alias;
    bool verify = read_verify(info[5], &alias);
    std::shared_ptr<Root> root = root_;
    if (state_) job->scratch = state_->scratch.take();
    return js(env, PromiseJob<std::shared_ptr<CompactBatch>>::start(
                       env,
                       [root, job, limits, verify, alias]() {
                         job->run(*root, limits, verify, alias);
                         return job;
                       },
                       [](Out& out, EnvState& state, std::shared_ptr<CompactBatch>& j) {
                         napi_value answer = j->to_js(out);
                         state.scratch.give(std::move(j->scratch));
                         return Settled{true, answer};
                       }));
  }

  // batch(requests, { size, response, member }, verifyRoot) -> Promise<Array<{ ok, value } | { ok,
  // error }>>
  Napi::Value batch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    BatchLimits limits;
    Budget budget;
    if (info.Length() > 1 && info[1].IsObject()) {
      Reader l{info[1].As<Napi::Object>(), &budget, {}};
      bool has = false;
      int64_t size = l.integer("size", 0, 1 << 20, &has);
      if (has) limits.size = static_cast<std::size_t>(size);
      int64_t response = l.integer("response", 0, (1ll << 53), &has);
      if (has) limits.response = static_cast<uint64_t>(response);
      int64_t member = l.integer("member", 1, static_cast<int64_t>(kMaxContentBytes), &has);
      if (has) limits.member = static_cast<uint64_t>(member);
      if (!l.problem.empty()) return rejected(env, bad_argument("batch limits: " + l.problem));
    }
    if (!info[0].IsArray()) return rejected(env, bad_argument("batch requests must be an array"));
    // One budget for every member: a batch copies no more than one request may.
    Napi::Array in = info[0].As<Napi::Array>();
    uint32_t n = 0;
    if (!length_of(in, &n)) return rejected(env, bad_argument("batch requests could not be read"));
    if (n > limits.size) {
      return rejected(
          env, bad_argument("batch of " + std::to_string(n) + " members exceeds the limit of " +
                            std::to_string(limits.size)));
    }
    // Malformed members fail alone: they are recorded here and never reach the worker.
    auto requests = std::make_shared<std::vector<Request>>(n);
    auto problems = std::make_shared<std::vector<std::string>>(n);
    for (uint32_t i = 0; i < n; ++i) {
      Napi::Value member = element(in, i, "a batch member", &(*problems)[i]);
      if ((*problems)[i].empty()) read_request(member, &(*requests)[i], &(*problems)[i], &budget);
    }
    if (budget.refused) return rejected(env, budget.no_memory());
    // A getter run while marshalling may have closed this very handle.
    if (!root_) return closed(env);
    std::string alias;
    bool verify = read_verify(info[2], &alias);
    std::shared_ptr<Root> root = root_;
    return js(env, PromiseJob<std::vector<Result<pinnedfs::Value>>>::start(
                       env,
                       [root, requests, problems, limits, verify, alias]() {
                         std::vector<Request> runnable;
                         std::vector<std::size_t> where;
                         for (std::size_t i = 0; i < requests->size(); ++i) {
                           if ((*problems)[i].empty()) {
                             runnable.push_back(std::move((*requests)[i]));
                             where.push_back(i);
                           }
                         }
                         auto ran = execute_batch(*root, runnable, limits, verify, {}, alias);
                         std::vector<Result<pinnedfs::Value>> out;
                         out.reserve(requests->size());
                         for (std::size_t i = 0; i < requests->size(); ++i)
                           out.emplace_back(Error{});
                         for (std::size_t i = 0; i < requests->size(); ++i) {
                           if (!(*problems)[i].empty())
                             out[i] = Result<pinnedfs::Value>(bad_argument((*problems)[i]));
                         }
                         for (std::size_t k = 0; k < where.size(); ++k)
                           out[where[k]] = std::move(ran[k]);
                         return out;
                       },
                       [](Out& out, EnvState&, std::vector<Result<pinnedfs::Value>>& results) {
                         napi_value a = out.array(results.size());
                         for (std::size_t i = 0; i < results.size() && out.ok(); ++i) {
                           napi_value entry = out.object();
                           out.set(entry, "ok", out.boolean(results[i].ok()));
                           if (results[i].ok())
                             out.set(entry, "value", value_to_js(out, results[i].value()));
                           else
                             out.set(entry, "error", error_to_js(out, results[i].error()));
                           out.set(a, static_cast<uint32_t>(i), entry);
                         }
                         return Settled{true, a};
                       }));
  }

  // confine(request: Uint8Array) -> [Promise<Buffer>, cancel()]: a pinnedfs/confine program
  // (ops/confine.h), bytes in and bytes out. Descriptors the answer names become the caller's when
  // the promise settles; an answer never delivered closes them.
  Napi::Value confine(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    auto pair = [&](Napi::Value promise) { return with_cancel(env, promise, cancel); };
    if (!root_) return pair(closed(env));
    if (!info[0].IsTypedArray() ||
        info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      return pair(rejected(env, bad_argument("confine(request: Uint8Array)")));
    }
    Napi::Uint8Array a = info[0].As<Napi::Uint8Array>();
    auto bytes =
        std::make_shared<std::string>(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
    std::shared_ptr<Root> root = root_;
    return pair(js(
        env, PromiseJob<Result<confine::Answer>>::start(
                 env, [root, bytes, cancel]() { return confine::run(*root, *bytes, cancel.get()); },
                 [](Out& out, EnvState&, Result<confine::Answer>& r) -> Settled {
                   if (!r.ok()) return {false, error_to_js(out, r.error())};
                   napi_value answer =
                       out.buffer_copy(r.value().bytes.data(), r.value().bytes.size());
                   // The descriptors become the caller's only with an answer that names them; an
                   // answer that could not be built (the environment is stopping) leaves them to
                   // close here.
                   if (out.ok())
                     for (Fd& fd : r.value().fds) fd.release();
                   return {true, answer};
                 })));
  }

  Napi::Value close(const Napi::CallbackInfo& info) {
    root_.reset();
    return info.Env().Undefined();
  }

  // --- surface: cancellable requests and roots opened beneath a root ---

  // cancellable(request, verifyRoot) -> [Promise<value>, cancel()]: execute(), with a flag the
  // worker checks between acts (core/cancel.h). cancel() only stores the flag: the JS thread never
  // waits, and a flag set before the worker starts stops the request before its first act.
  Napi::Value cancellable(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto flag = std::make_shared<std::atomic<bool>>(false);
    auto pair = [&](Napi::Value promise) { return with_cancel(env, promise, flag); };
    Marshalled m = marshal(info);
    if (!m.ok) return pair(m.refused);
    std::shared_ptr<Root> root = root_;
    std::shared_ptr<Request> request = m.request;
    bool verify = m.verify;
    std::string alias = std::move(m.alias);
    return pair(js(env, PromiseJob<Result<pinnedfs::Value>>::start(
                            env,
                            [root, request, verify, alias, flag]() -> Result<pinnedfs::Value> {
                              CancelScope scope(flag.get());
                              if (cancelled()) return cancelled_error("execute", request->path);
                              return pinnedfs::execute(*root, std::move(*request), verify, alias);
                            },
                            [](Out& out, EnvState&, Result<pinnedfs::Value>& r) {
                              return value_or_error(out, r);
                            })));
  }

  // openRoot(path) -> Promise<RootHandle>: a root pinned at a directory beneath this one
  // (Root::pin_beneath), answered as pin() answers.
  Napi::Value open_root(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    if (!info[0].IsString()) return rejected(env, bad_argument("path must be a string"));
    Budget budget;
    std::string path;
    if (!utf8_within(info[0], &budget.text, &path)) {
      return rejected(env, bad_argument(over_budget("path")));
    }
    std::shared_ptr<Root> root = root_;
    return js(env, PromiseJob<Result<std::shared_ptr<Root>>>::start(
                       env, [root, path]() { return Root::pin_beneath(*root, path); }, root_to_js));
  }

  // open({ op: ops.open, path, flag, mode? }, verifyRoot) -> Promise<number>: a descriptor on a
  // regular file beneath the root (ops/open.h). It becomes the caller's only with an answer that
  // names it; an answer never delivered (the environment is stopping) closes it with the job.
  Napi::Value open(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    Marshalled m = marshal(info);
    if (!m.ok) return m.refused;
    if (m.request->op != Op::Open) {
      return rejected(env, bad_argument("open() takes an open request"));
    }
    return start_open(env, m.request, m.verify, std::move(m.alias));
  }

  // openPath(path, flag, mode?, verifyRoot) -> Promise<number>: open() with its operands as
  // arguments, the file handle's hot path: no request object to read every operand name off (the
  // larger part of the call's time on the JS thread).
  Napi::Value open_path(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    auto request = std::make_shared<Request>();
    request->op = Op::Open;
    if (!info[0].IsString()) return rejected(env, bad_argument("operand 'path' must be a string"));
    Budget budget;
    if (!utf8_within(info[0], &budget.text, &request->path, &budget.refused)) {
      return rejected(
          env, budget.refused ? budget.no_memory() : bad_argument(over_budget("operand 'path'")));
    }
    double flag = info[1].IsNumber() ? info[1].As<Napi::Number>().DoubleValue() : -1;
    // Range first: casting NaN or a huge double to int is undefined.
    if (!(flag >= 0 && flag <= static_cast<double>(OpenFlag::AXPlus)) ||
        flag != static_cast<double>(static_cast<int>(flag))) {
      return rejected(env, bad_argument("operand 'flag' must be an open flag"));
    }
    request->flag = static_cast<OpenFlag>(static_cast<int>(flag));
    if (!info[2].IsUndefined()) {
      double mode = info[2].IsNumber() ? info[2].As<Napi::Number>().DoubleValue() : -1;
      if (!(mode >= 0 && mode <= 07777) || mode != static_cast<double>(static_cast<int>(mode))) {
        return rejected(env, bad_argument("operand 'mode' must be an integer from 0 to 4095"));
      }
      request->has_mode = true;
      request->mode = static_cast<uint32_t>(mode);
    }
    std::string alias;
    bool verify = read_verify(info[3], &alias);
    return start_open(env, request, verify, std::move(alias));
  }

  // The open job of open() and openPath(): the descriptor is the caller's only once an answer names
  // it; an answer never delivered (the environment is stopping) closes it with the job.
  Napi::Value start_open(Napi::Env env, std::shared_ptr<Request> request, bool verify,
                         std::string alias) {
    std::shared_ptr<Root> root = root_;
    return js(env, PromiseJob<Result<Fd>>::start(
                       env,
                       [root, request, verify, alias]() -> Result<Fd> {
                         auto valid = pinnedfs::validate(*request);
                         if (!valid.ok()) return valid.take_error();
                         if (verify) {
                           auto same = root->verify_path_identity(alias);
                           if (!same.ok()) return same.take_error();
                         }
                         return ops::open_file(*root, *request);
                       },
                       [](Out& out, EnvState&, Result<Fd>& r) -> Settled {
                         if (!r.ok()) return {false, error_to_js(out, r.error())};
                         napi_value fd = out.number(r.value().get());
                         if (out.ok()) r.value().release();
                         return {true, fd};
                       }));
  }
};

Napi::Value js(Napi::Env env, napi_value v) {
  return Napi::Value(env, v);
}

// A pinned root handed to JavaScript as a RootHandle with identity, strategy and path: what pin()
// and openRoot() answer.
Settled root_to_js(Out& out, EnvState& state, Result<std::shared_ptr<Root>>& r) {
  if (!r.ok()) return {false, error_to_js(out, r.error())};
  // Every step checked: constructing the handle runs JavaScript, which a
  // stopping environment refuses. Then the root is never adopted and closes
  // with this job.
  napi_value ctor = nullptr, obj = nullptr;
  void* unwrapped = nullptr;
  if (state.root_ctor == nullptr ||
      napi_get_reference_value(out.env(), state.root_ctor, &ctor) != napi_ok || ctor == nullptr ||
      napi_new_instance(out.env(), ctor, 0, nullptr, &obj) != napi_ok ||
      napi_unwrap(out.env(), obj, &unwrapped) != napi_ok || unwrapped == nullptr) {
    return {true, nullptr};
  }
  static_cast<RootHandle*>(unwrapped)->adopt(r.value());
  out.set(obj, "identity", out.string(r.value()->root_identity().str()));
  out.set(obj, "strategy", out.string(strategy_name(r.value()->strategy())));
  out.set(obj, "path", out.string(r.value()->path()));
  return {true, obj};
}

// pin(path, strategy, symlinks?) -> Promise<RootHandle with identity, dev, ino, strategy>
// symlinks: undefined or "refuse" (every link refused), "within" (followed while beneath the root).
Napi::Value pin(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString())
    return js(env, rejected(env, bad_argument("root path must be a string")));
  bool ok = false;
  Strategy strategy = parse_strategy(info[1], &ok);
  if (!ok)
    return js(env, rejected(env, bad_argument("strategy must be 'auto', 'openat2' or 'walk'")));
  Links links = Links::Refuse;
  if (!info[2].IsUndefined()) {
    std::size_t left = 16;  // longer than either name: compared, never kept
    std::string name;
    if (!info[2].IsString() || !utf8_within(info[2], &left, &name) ||
        (name != "refuse" && name != "within")) {
      return js(env, rejected(env, bad_argument("symlinks must be 'refuse' or 'within'")));
    }
    links = name == "within" ? Links::Within : Links::Refuse;
  }
  Budget budget;
  std::string path;
  if (!utf8_within(info[0], &budget.text, &path)) {
    return js(env, rejected(env, bad_argument(over_budget("root path"))));
  }
  return js(env, PromiseJob<Result<std::shared_ptr<Root>>>::start(
                     env, [path, strategy, links]() { return Root::pin(path, strategy, links); },
                     root_to_js));
}

// A path's identity, asked on the thread pool: the text of what `find(path)` answers. The path is
// checked and copied here, on the JS thread, within the call's text budget.
template <typename Find>
Napi::Value identity_of_path(const Napi::CallbackInfo& info, Find find) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return js(env, rejected(env, bad_argument("path must be a string")));
  Budget budget;
  std::string path;
  if (!utf8_within(info[0], &budget.text, &path)) {
    return js(env, rejected(env, bad_argument(over_budget("path"))));
  }
  using Answer = decltype(find(path));
  return js(env, PromiseJob<Answer>::start(
                     env, [path, find]() { return find(path); },
                     [](Out& out, EnvState&, Answer& r) -> Settled {
                       if (r.ok()) return {true, out.string(r.value().str())};
                       return {false, error_to_js(out, r.error())};
                     }));
}

// identify(path) -> Promise<"dev:ino">
Napi::Value identify(const Napi::CallbackInfo& info) {
  return identity_of_path(info, [](const std::string& path) { return identify_path(path); });
}

// identifyRoot(path) -> Promise<RootIdentity text>: what pin(path).identity would be.
Napi::Value identify_root_js(const Napi::CallbackInfo& info) {
  return identity_of_path(info, [](const std::string& path) { return identify_root(path); });
}

// The environment's cleanup hook, run when it is torn down (worker exit or terminate(), process
// exit), before its instance data is finalized: from here on no completion touches JavaScript,
// and every pinned root is dropped (operations in flight keep their own reference).
void stopping(void* arg) {
  auto* held = static_cast<std::shared_ptr<EnvState>*>(arg);
  (*held)->alive = false;
  for (RootHandle* h : (*held)->live) h->drop();
  (*held)->trip->drop_queued();
  delete held;
}

void teardown(napi_env env, void* data, void*) {
  auto* d = static_cast<AddonData*>(data);
  d->state->alive = false;
  for (RootHandle* h : d->state->live) h->drop();
  if (d->state->root_ctor != nullptr) napi_delete_reference(env, d->state->root_ctor);
  d->state->root_ctor = nullptr;
  delete d;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  napi_value ctor = RootHandle::define(env);
  if (ctor == nullptr || napi_create_reference(env, ctor, 1, &data->state->root_ctor) != napi_ok ||
      napi_set_instance_data(env, data, teardown, nullptr) != napi_ok) {
    delete data;
    return exports;
  }
  data->state->pacer.reset(SettlePacer::make(env));
  data->state->trip = std::make_shared<Trip>(data->state->pacer.get(), Trip::pool_size());
  auto* held = new std::shared_ptr<EnvState>(data->state);
  if (napi_add_env_cleanup_hook(env, stopping, held) != napi_ok) delete held;
  exports.Set("pin", Napi::Function::New(env, pin, "pin"));
  exports.Set("identify", Napi::Function::New(env, identify, "identify"));
  exports.Set("identifyRoot", Napi::Function::New(env, identify_root_js, "identifyRoot"));
#ifdef PINNEDFS_TEST_HOOKS
  exports.Set("trips", Napi::Function::New(
                           env,
                           [](const Napi::CallbackInfo& info) -> Napi::Value {
                             std::shared_ptr<EnvState> state = state_of(info.Env());
                             return Napi::Number::New(info.Env(), state ? state->trips : 0);
                           },
                           "trips"));
  exports.Set("workItems", Napi::Function::New(
                               env,
                               [](const Napi::CallbackInfo& info) -> Napi::Value {
                                 std::shared_ptr<EnvState> state = state_of(info.Env());
                                 return Napi::Number::New(
                                     info.Env(), state ? state->trip->runners_started() : 0);
                               },
                               "workItems"));
#endif
  // contentBudget(bytes?) -> [budget, inFlight]: the process's budget of content bytes in flight
  // (core/budget.h), set when `bytes` is given (0 restores the default).
  exports.Set("contentBudget", Napi::Function::New(
                                   env,
                                   [](const Napi::CallbackInfo& info) -> Napi::Value {
                                     Napi::Env e = info.Env();
                                     if (info.Length() > 0 && info[0].IsNumber()) {
                                       double d = info[0].As<Napi::Number>().DoubleValue();
                                       if (d >= 0 && d <= 9007199254740991.0 &&
                                           d == static_cast<double>(static_cast<int64_t>(d)))
                                         set_content_budget(static_cast<std::uint64_t>(d));
                                     }
                                     Napi::Array a = Napi::Array::New(e, 2);
                                     a.Set(0u, static_cast<double>(content_budget()));
                                     a.Set(1u, static_cast<double>(content_in_flight()));
                                     return a;
                                   },
                                   "contentBudget"));
  exports.Set("paced", Napi::Function::New(
                           env,
                           [](const Napi::CallbackInfo& info) -> Napi::Value {
                             std::shared_ptr<EnvState> state = state_of(info.Env());
                             return Napi::Number::New(
                                 info.Env(), state && state->pacer ? state->pacer->waited() : 0);
                           },
                           "paced"));
  Napi::Object ops = Napi::Object::New(env);
#define PINNEDFS_EXPORT(name, text, operand, effect, form, text_io, handler) \
  ops.Set(text, static_cast<uint32_t>(Op::name));
  PINNEDFS_OPS(PINNEDFS_EXPORT)
#undef PINNEDFS_EXPORT
  exports.Set("ops", ops);
  // The operation table itself, one object per row in code order, for TypeScript to derive its
  // lists from (src/internal/native.ts: `OpRow`).
  Napi::Array table = Napi::Array::New(env);
#define PINNEDFS_EXPORT(name, text, operand, effect, form, text_io, handler) \
  {                                                                          \
    Napi::Object row = Napi::Object::New(env);                               \
    row.Set("name", text);                                                   \
    row.Set("code", static_cast<uint32_t>(Op::name));                        \
    row.Set("operand", #operand);                                            \
    row.Set("effect", #effect);                                              \
    row.Set("pathOnly", OpForm::form == OpForm::Compact);                    \
    row.Set("text", OpText::text_io == OpText::Text);                        \
    table.Set(static_cast<uint32_t>(Op::name), row);                         \
  }
  PINNEDFS_OPS(PINNEDFS_EXPORT)
#undef PINNEDFS_EXPORT
  exports.Set("opTable", table);
  Napi::Object fl = Napi::Object::New(env);
#define PINNEDFS_EXPORT(name, text) fl.Set(text, static_cast<uint32_t>(OpenFlag::name));
  PINNEDFS_OPEN_FLAGS(PINNEDFS_EXPORT)
#undef PINNEDFS_EXPORT
  exports.Set("flags", fl);
  exports.Set("refusedMember", static_cast<uint32_t>(kRefusedMember));
  exports.Set("spellingMayDiffer", ops::kSpellingMayDiffer);
  // The stat record's layout and its type codes (results.h), for src/internal/statRecord.ts.
  Napi::Object record = Napi::Object::New(env);
  Napi::Array names = Napi::Array::New(env);
  uint32_t slot = 0;
#define PINNEDFS_EXPORT(name) names.Set(slot++, #name);
  PINNEDFS_STAT_NUMBERS(PINNEDFS_EXPORT)
  record.Set("numbers", names);
  names = Napi::Array::New(env);
  slot = 0;
  PINNEDFS_STAT_EXACT(PINNEDFS_EXPORT)
  record.Set("exact", names);
  names = Napi::Array::New(env);
  slot = 0;
  PINNEDFS_STAT_NANOS(PINNEDFS_EXPORT)
#undef PINNEDFS_EXPORT
  record.Set("nanos", names);
  Napi::Array types = Napi::Array::New(env);
#define PINNEDFS_EXPORT(name, text) types.Set(static_cast<uint32_t>(FileType::name), text);
  PINNEDFS_FILE_TYPES(PINNEDFS_EXPORT)
#undef PINNEDFS_EXPORT
  record.Set("types", types);
  exports.Set("statRecord", record);
#ifdef PINNEDFS_TEST_HOOKS
  exports.Set("testHooks", true);
#else
  exports.Set("testHooks", false);
#endif
  return exports;
}

}  // namespace
}  // namespace pinnedfs

static Napi::Object InitPinnedfs(Napi::Env env, Napi::Object exports) {
  return pinnedfs::init(env, exports);
}

NODE_API_MODULE(pinnedfs, InitPinnedfs)