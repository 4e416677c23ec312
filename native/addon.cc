// The only file that knows N-API. It marshals JavaScript values into core Requests, runs the core
// on libuv's thread pool through one promise-settling worker, and marshals Values and Errors back.
// No file-system logic lives here.
#include <napi.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <optional>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/execute.h"
#include "core/request.h"
#include "core/root.h"
#include "core/value.h"
#include "ops/confine.h"

namespace pinnedfs {
namespace {

// ---------------------------------------------------------------------------------------------
// JavaScript <- core

Napi::Value error_to_js(Napi::Env env, const Error& e) {
  static const char* const kRefusals[] = {"",           "symlink",    "escape",
                                          "hardlink",   "notregular", "badargument",
                                          "identity",   "toolarge",   "writezero"};
  Napi::Object o = Napi::Object::New(env);
  o.Set("code", e.err ? errno_name(e.err) : "EINVAL");
  o.Set("errno", -e.err);
  o.Set("syscall", e.syscall ? e.syscall : "");
  o.Set("path", e.path);
  o.Set("refusal", kRefusals[static_cast<unsigned>(e.refusal)]);
  o.Set("description", e.description);
  return o;
}

const char* type_name(FileType t) {
  switch (t) {
    case FileType::File: return "File";
    case FileType::Directory: return "Directory";
    case FileType::SymbolicLink: return "SymbolicLink";
    case FileType::BlockDevice: return "BlockDevice";
    case FileType::CharacterDevice: return "CharacterDevice";
    case FileType::FIFO: return "FIFO";
    case FileType::Socket: return "Socket";
    case FileType::Unknown: break;
  }
  return "Unknown";
}

constexpr std::size_t kCopyThreshold = 64 * 1024;

struct ValueToJs {
  Napi::Env env;
  Napi::Value operator()(std::monostate&) const { return env.Undefined(); }
  Napi::Value operator()(bool& b) const { return Napi::Boolean::New(env, b); }
  Napi::Value operator()(Bytes& b) const {
    if (b.data.size() <= kCopyThreshold) {
      return Napi::Buffer<char>::Copy(env, b.data.data(), b.data.size());
    }
    // Large content is handed over without a copy: the string's storage becomes the Buffer's.
    auto* owned = new std::string(std::move(b.data));
    return Napi::Buffer<char>::New(env, owned->data(), owned->size(),
                                   [](Napi::Env, char*, std::string* s) { delete s; }, owned);
  }
  Napi::Value operator()(Text& t) const { return Napi::String::New(env, t.text); }
  Napi::Value operator()(Names& n) const {
    Napi::Array a = Napi::Array::New(env, n.names.size());
    for (std::size_t i = 0; i < n.names.size(); ++i) a.Set(static_cast<uint32_t>(i), n.names[i]);
    return a;
  }
  Napi::Value operator()(StatInfo& s) const {
    Napi::Object o = Napi::Object::New(env);
    o.Set("type", type_name(s.type));
    o.Set("dev", Napi::BigInt::New(env, static_cast<uint64_t>(s.dev)));
    o.Set("ino", Napi::BigInt::New(env, static_cast<uint64_t>(s.ino)));
    o.Set("mode", s.mode);
    o.Set("nlink", Napi::BigInt::New(env, static_cast<uint64_t>(s.nlink)));
    o.Set("uid", s.uid);
    o.Set("gid", s.gid);
    o.Set("rdev", Napi::BigInt::New(env, static_cast<uint64_t>(s.rdev)));
    o.Set("size", Napi::BigInt::New(env, static_cast<uint64_t>(s.size)));
    o.Set("blksize", Napi::BigInt::New(env, static_cast<uint64_t>(s.blksize)));
    o.Set("blocks", Napi::BigInt::New(env, static_cast<uint64_t>(s.blocks)));
    o.Set("atimeMs", s.atime_ms);
    o.Set("mtimeMs", s.mtime_ms);
    o.Set("ctimeMs", s.ctime_ms);
    o.Set("birthtimeMs", s.birthtime_ms);
    return o;
  }
  Napi::Value operator()(Resolution& r) const {
    Napi::Object o = Napi::Object::New(env);
    o.Set("path", r.path);
    o.Set("target", r.has_target ? Napi::Value(Napi::String::New(env, r.target)) : env.Null());
    return o;
  }
  Napi::Value operator()(MkdirsOutcome& m) const {
    Napi::Object o = Napi::Object::New(env);
    Napi::Array created = Napi::Array::New(env, m.created.size());
    for (std::size_t i = 0; i < m.created.size(); ++i) {
      Napi::Object c = Napi::Object::New(env);
      c.Set("path", m.created[i].path);
      c.Set("identity", m.created[i].identity.str());
      created.Set(static_cast<uint32_t>(i), c);
    }
    o.Set("created", created);
    o.Set("error", m.failed ? error_to_js(env, m.error) : env.Null());
    return o;
  }
  Napi::Value operator()(RmdirsOutcome& r) const {
    static const char* const kStatus[] = {"removed", "kept", "missing", "refused"};
    Napi::Object o = Napi::Object::New(env);
    Napi::Array members = Napi::Array::New(env, r.members.size());
    for (std::size_t i = 0; i < r.members.size(); ++i) {
      Napi::Object m = Napi::Object::New(env);
      m.Set("path", r.members[i].path);
      m.Set("status", kStatus[static_cast<unsigned>(r.members[i].status)]);
      bool has_error = r.members[i].status == RmdirStatus::Refused ||
                       r.members[i].status == RmdirStatus::Kept;
      m.Set("error", has_error ? error_to_js(env, r.members[i].error) : env.Null());
      members.Set(static_cast<uint32_t>(i), m);
    }
    o.Set("members", members);
    o.Set("stopped", r.stopped);
    return o;
  }
};

Napi::Value value_to_js(Napi::Env env, pinnedfs::Value& v) { return std::visit(ValueToJs{env}, v); }

// ---------------------------------------------------------------------------------------------
// JavaScript -> core. Every accessor type-checks first: a wrong type is a BadArgument Error, never
// a pending exception or a crash.

// A getter or Proxy trap that throws leaves a JavaScript exception pending; every N-API call after
// it fails, and a promise created then is never settled properly. `checked` takes the exception
// back, so hostile input is one more BadArgument problem and marshalling goes on safely.
Napi::Value checked(Napi::Env env, Napi::Value v, const std::string& what, std::string* problem) {
  if (!env.IsExceptionPending()) return v;
  env.GetAndClearPendingException();
  if (problem->empty()) *problem = "reading " + what + " threw";
  return env.Undefined();
}

Napi::Value element(Napi::Array a, uint32_t i, const char* what, std::string* problem) {
  return checked(a.Env(), a.Get(i), what, problem);
}

struct Reader {
  Napi::Object obj;
  std::string problem;  // first marshalling problem met, if any

  Napi::Value get(const char* key) {
    return checked(obj.Env(), obj.Get(key), std::string("operand '") + key + "'", &problem);
  }
  bool has(const char* key) {
    Napi::Value v = get(key);
    return !v.IsUndefined() && !v.IsNull();
  }
  void fail(const std::string& why) {
    if (problem.empty()) problem = why;
  }
  std::string str(const char* key, bool required) {
    Napi::Value v = get(key);
    if (v.IsUndefined() || v.IsNull()) {
      if (required) fail(std::string("missing string operand '") + key + "'");
      return {};
    }
    if (!v.IsString()) {
      fail(std::string("operand '") + key + "' must be a string");
      return {};
    }
    return v.As<Napi::String>().Utf8Value();
  }
  bool boolean(const char* key) {
    Napi::Value v = get(key);
    if (v.IsUndefined() || v.IsNull()) return false;
    if (!v.IsBoolean()) {
      fail(std::string("operand '") + key + "' must be a boolean");
      return false;
    }
    return v.As<Napi::Boolean>().Value();
  }
  // An integer within [lo, hi]; `present` says whether it was given.
  int64_t integer(const char* key, int64_t lo, int64_t hi, bool* present) {
    Napi::Value v = get(key);
    *present = false;
    if (v.IsUndefined() || v.IsNull()) return 0;
    if (!v.IsNumber()) {
      fail(std::string("operand '") + key + "' must be a number");
      return 0;
    }
    double d = v.As<Napi::Number>().DoubleValue();
    if (!(d >= static_cast<double>(lo) && d <= static_cast<double>(hi)) ||
        d != static_cast<double>(static_cast<int64_t>(d))) {
      fail(std::string("operand '") + key + "' must be an integer in range");
      return 0;
    }
    *present = true;
    return static_cast<int64_t>(d);
  }
  std::vector<std::string> strings(const char* key) {
    std::vector<std::string> out;
    Napi::Value v = get(key);
    if (v.IsUndefined() || v.IsNull()) return out;
    if (!v.IsArray()) {
      fail(std::string("operand '") + key + "' must be an array of strings");
      return out;
    }
    Napi::Array a = v.As<Napi::Array>();
    for (uint32_t i = 0; i < a.Length(); ++i) {
      Napi::Value e = element(a, i, "an array member", &problem);
      if (!e.IsString()) {
        fail(std::string("operand '") + key + "' must be an array of strings");
        return {};
      }
      out.push_back(e.As<Napi::String>().Utf8Value());
    }
    return out;
  }
};

constexpr uint32_t kMaxListMembers = 100000;

bool read_request(Napi::Value value, Request* r, std::string* problem) {
  if (!value.IsObject() || value.IsArray()) {
    *problem = "request must be an object";
    return false;
  }
  Reader in{value.As<Napi::Object>(), {}};
  bool present = false;
  int64_t op = in.integer("op", 0, static_cast<int64_t>(Op::Count) - 1, &present);
  if (!present) in.fail("missing or unknown operation");
  r->op = static_cast<Op>(op);
  r->path = in.str("path", r->op != Op::Mkdirs && r->op != Op::Rmdirs);
  if (r->op == Op::Rename) r->to = in.str("to", true);
  if (r->op == Op::Glob) {
    r->to = in.str("to", false);
    r->pattern = in.str("pattern", true);
    r->exclude = in.strings("exclude");
    r->dot = in.boolean("dot");
  }
  r->recursive = in.boolean("recursive");
  r->force = in.boolean("force");
  r->atomic = in.boolean("atomic");
  int64_t mode = in.integer("mode", 0, 07777, &present);
  r->has_mode = present;
  r->mode = static_cast<uint32_t>(mode);
  r->uid = in.integer("uid", -1, 0xFFFFFFFEll, &present);
  if (!present) r->uid = -1;
  r->gid = in.integer("gid", -1, 0xFFFFFFFEll, &present);
  if (!present) r->gid = -1;
  r->flag = static_cast<OpenFlag>(
      in.integer("flag", 0, static_cast<int64_t>(OpenFlag::AXPlus), &present));
  r->max_bytes = static_cast<uint64_t>(in.integer("maxBytes", 0, (1ll << 53), &present));
  if (in.has("data")) {
    Napi::Value d = in.get("data");
    if (d.IsTypedArray() && d.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
      Napi::Uint8Array a = d.As<Napi::Uint8Array>();
      r->data.assign(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
    } else if (d.IsString()) {
      r->data = d.As<Napi::String>().Utf8Value();
    } else {
      in.fail("operand 'data' must be a Uint8Array or a string");
    }
  }
  if (in.has("plan")) {
    Napi::Value p = in.get("plan");
    if (!p.IsArray() || p.As<Napi::Array>().Length() > kMaxListMembers) {
      in.fail("operand 'plan' must be an array of { path, mode }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length() && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("plan member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), {}};
        MkdirsEntry entry;
        entry.path = m.str("path", true);
        bool has = false;
        int64_t md = m.integer("mode", 0, 07777, &has);
        entry.mode = has ? static_cast<uint32_t>(md) : 0777;
        if (!m.problem.empty()) in.fail("plan member: " + m.problem);
        r->plan.push_back(std::move(entry));
      }
    }
  }
  if (in.has("owned")) {
    Napi::Value p = in.get("owned");
    if (!p.IsArray() || p.As<Napi::Array>().Length() > kMaxListMembers) {
      in.fail("operand 'owned' must be an array of { path, identity, optional }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length() && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("owned member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), {}};
        OwnedDir entry;
        entry.path = m.str("path", true);
        std::string id = m.str("identity", true);
        entry.optional = m.boolean("optional");
        std::size_t colon = id.find(':');
        char* end = nullptr;
        if (m.problem.empty()) {
          if (colon == std::string::npos || colon == 0 || colon + 1 == id.size()) {
            m.fail("identity must be \"dev:ino\"");
          } else if (id.find_first_not_of("0123456789:") != std::string::npos ||
                     id.find(':', colon + 1) != std::string::npos) {
            // strtoull alone would accept " 1:2", "+1:2" and wrap "-1:2".
            m.fail("identity must be \"dev:ino\" in decimal");
          } else {
            errno = 0;
            entry.identity.dev = std::strtoull(id.substr(0, colon).c_str(), &end, 10);
            bool ok1 = errno == 0 && end && *end == '\0';
            entry.identity.ino = std::strtoull(id.substr(colon + 1).c_str(), &end, 10);
            bool ok2 = errno == 0 && end && *end == '\0';
            if (!ok1 || !ok2 || id[0] == '-' || id[colon + 1] == '-') {
              m.fail("identity must be \"dev:ino\" in decimal");
            }
          }
        }
        if (!m.problem.empty()) in.fail("owned member: " + m.problem);
        r->owned.push_back(std::move(entry));
      }
    }
  }
  if (r->op == Op::Mkdirs && !in.has("plan")) in.fail("missing operand 'plan'");
  if (r->op == Op::Rmdirs && !in.has("owned")) in.fail("missing operand 'owned'");
  if (r->op == Op::Mkdirs && in.has("testAfterPlan")) {
    // Test hook (see HookStep): deterministic "something changed after planning".
    Napi::Value p = in.get("testAfterPlan");
    if (!p.IsArray() || p.As<Napi::Array>().Length() > 64) {
      in.fail("operand 'testAfterPlan' must be an array of { kind, path, to }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < a.Length() && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("testAfterPlan member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), {}};
        HookStep step;
        std::string kind = m.str("kind", true);
        step.path = m.str("path", true);
        if (kind == "mkdir") step.kind = HookStep::Kind::Mkdir;
        else if (kind == "file") step.kind = HookStep::Kind::File;
        else if (kind == "rmdir") step.kind = HookStep::Kind::Rmdir;
        else if (kind == "rename") { step.kind = HookStep::Kind::Rename; step.to = m.str("to", true); }
        else m.fail("testAfterPlan kind must be mkdir, file, rmdir or rename");
        if (!m.problem.empty()) in.fail("testAfterPlan member: " + m.problem);
        r->after_plan.push_back(std::move(step));
      }
    }
  }
  *problem = in.problem;
  return in.problem.empty();
}

// The ops a path and a recursive flag fully describe: what call() and readMany() carry.
constexpr uint8_t kRefusedMember = 255;

bool path_only(Op op) {
  switch (op) {
    case Op::Exists: case Op::Stat: case Op::ReadFile: case Op::ReadDirectory: case Op::ReadLink:
    case Op::RealPath: case Op::Resolve:
      return true;
    default:
      return false;
  }
}

bool read_path_only(int op, Napi::Value path, bool recursive, Request* r, std::string* problem) {
  if (op < 0 || op >= static_cast<int>(Op::Count) || !path_only(static_cast<Op>(op))) {
    *problem = "operation must be a path-only read";
    return false;
  }
  if (!path.IsString()) {
    *problem = "operand 'path' must be a string";
    return false;
  }
  r->op = static_cast<Op>(op);
  r->path = path.As<Napi::String>().Utf8Value();
  r->recursive = recursive;
  return true;
}

// Buffers reused across operations of one environment: taken and given back on the JavaScript
// thread, filled on the worker. A fresh buffer per operation, allocated on a worker and freed on the
// JavaScript thread, grows and trims the worker's heap over and over: a page fault per 4 KiB of
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
  std::vector<uint32_t> where;     // requests[k] answers member where[k]
  std::vector<uint8_t> refused;    // members refused before the run (by the caller, or malformed)
  std::vector<std::pair<uint32_t, std::string>> problems;  // why a malformed member was refused
  std::vector<Result<pinnedfs::Value>> results;  // per member, once run
  std::vector<std::size_t> at;     // per member: offset of its content in scratch, or kNotPacked
  std::vector<std::size_t> length; // per member: length of its packed content
  std::string scratch;

  // On the worker thread.
  void run(const Root& root, const BatchLimits& limits, bool verify) {
    std::size_t n = refused.size();
    at.assign(n, kNotPacked);
    length.assign(n, 0);
    auto ran = execute_batch(root, requests, limits, verify,
                             [this](std::size_t k, Result<pinnedfs::Value>& r) {
                               if (!r.ok()) return;
                               Bytes* b = std::get_if<Bytes>(&r.value());
                               if (!b || b->data.size() > kCopyThreshold) return;
                               at[where[k]] = scratch.size();
                               length[where[k]] = b->data.size();
                               scratch.append(b->data);
                               r = Result<pinnedfs::Value>(pinnedfs::Value{});
                             });
    results.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      results.emplace_back(refused[i] ? bad_argument("refused before the batch was sent") : Error{});
    }
    for (std::size_t k = 0; k < where.size(); ++k) results[where[k]] = std::move(ran[k]);
    for (auto& p : problems) results[p.first] = Result<pinnedfs::Value>(bad_argument(std::move(p.second)));
  }

  // One small Buffer per member (measured: cheaper than one Buffer for the whole batch sliced in
  // JavaScript, whose large allocation is fresh pages every time the collector frees it).
  Napi::Value to_js(Napi::Env env) {
    std::size_t n = results.size();
    Napi::Uint8Array failed = Napi::Uint8Array::New(env, n);
    Napi::Array values = Napi::Array::New(env, n);
    for (std::size_t i = 0; i < n; ++i) {
      auto index = static_cast<uint32_t>(i);
      if (!results[i].ok()) {
        failed[i] = 1;
        values.Set(index, error_to_js(env, results[i].error()));
      } else if (at[i] != kNotPacked) {
        values.Set(index, Napi::Buffer<char>::Copy(env, scratch.data() + at[i], length[i]));
      } else {
        values.Set(index, value_to_js(env, results[i].value()));
      }
    }
    Napi::Array out = Napi::Array::New(env, 2);
    out.Set(0u, failed);
    out.Set(1u, values);
    return out;
  }
};

Strategy parse_strategy(Napi::Value v, bool* ok) {
  *ok = true;
  if (v.IsUndefined()) return Strategy::Auto;
  if (v.IsString()) {
    std::string s = v.As<Napi::String>().Utf8Value();
    if (s == "auto") return Strategy::Auto;
    if (s == "openat2" || s == "kernel") return Strategy::Kernel;
    if (s == "walk") return Strategy::Walk;
  }
  *ok = false;
  return Strategy::Auto;
}

// ---------------------------------------------------------------------------------------------
// The one async shape: run `work` on the thread pool, then settle a promise with `settle`.

template <class R>
class PromiseJob : public Napi::AsyncWorker {
 public:
  using Work = std::function<R()>;
  using Settle = std::function<void(Napi::Env, Napi::Promise::Deferred&, R&)>;

  static Napi::Promise start(Napi::Env env, Work work, Settle settle);

 private:
  static Napi::Promise queue(Napi::Env env, Work work, Settle settle) {
    auto* job = new PromiseJob(env, std::move(work), std::move(settle));
    Napi::Promise p = job->deferred_.Promise();
    job->Queue();
    return p;
  }

 protected:
  void Execute() override { result_.emplace(work_()); }
  void OnOK() override {
    Napi::HandleScope scope(Env());
    settle_(Env(), deferred_, *result_);
  }
  void OnError(const Napi::Error& e) override { deferred_.Reject(e.Value()); }

 private:
  PromiseJob(Napi::Env env, Work work, Settle settle)
      : Napi::AsyncWorker(env, "pinnedfs"),
        deferred_(Napi::Promise::Deferred::New(env)),
        work_(std::move(work)),
        settle_(std::move(settle)) {}
  Napi::Promise::Deferred deferred_;
  Work work_;
  Settle settle_;
  std::optional<R> result_;
};

Napi::Promise rejected(Napi::Env env, const Error& e) {
  auto d = Napi::Promise::Deferred::New(env);
  d.Reject(error_to_js(env, e));
  return d.Promise();
}

// ---------------------------------------------------------------------------------------------
// Per-environment state: each worker thread gets its own, and teardown drops every root it still
// holds (operations in flight keep their own reference, so the descriptor closes after them).

class RootHandle;

// Shared between the environment's data and every handle, so whichever is finalized last at
// teardown still finds it alive.
struct Registry {
  std::set<RootHandle*> live;
};

struct AddonData {
  std::shared_ptr<Registry> registry = std::make_shared<Registry>();
  Napi::FunctionReference root_ctor;
  // Trips off the JavaScript thread this environment has made: tests count them to prove a batch
  // or a directory program is one trip.
  double trips = 0;
  ScratchPool scratch{8u << 20, 16u << 20, {}, 0};         // compact batches
  ScratchPool reads{kCopyThreshold + 1, 4u << 20, {}, 0}; // single reads (contents copied at settle)
};

template <class R>
Napi::Promise PromiseJob<R>::start(Napi::Env env, Work work, Settle settle) {
  if (AddonData* data = env.GetInstanceData<AddonData>()) data->trips += 1;
  return queue(env, std::move(work), std::move(settle));
}

class RootHandle : public Napi::ObjectWrap<RootHandle> {
 public:
  static Napi::Function define(Napi::Env env) {
    return DefineClass(env, "RootHandle",
                       {InstanceMethod<&RootHandle::execute>("execute"),
                        InstanceMethod<&RootHandle::call>("call"),
                        InstanceMethod<&RootHandle::batch>("batch"),
                        InstanceMethod<&RootHandle::readMany>("readMany"),
                        InstanceMethod<&RootHandle::confine>("confine"),
                        InstanceMethod<&RootHandle::close>("close")});
  }

  RootHandle(const Napi::CallbackInfo& info) : Napi::ObjectWrap<RootHandle>(info) {
    AddonData* data = info.Env().GetInstanceData<AddonData>();
    if (data) {
      registry_ = data->registry;
      registry_->live.insert(this);
    }
  }
  ~RootHandle() override {
    if (registry_) registry_->live.erase(this);
  }

  void adopt(std::shared_ptr<Root> root) { root_ = std::move(root); }
  void drop() { root_.reset(); }

 private:
  std::shared_ptr<Root> root_;
  std::shared_ptr<Registry> registry_;

  Napi::Value closed(Napi::Env env) {
    return rejected(env, refusal(Refusal::BadArgument, "execute", "", "root is closed", EBADF));
  }

  // execute(request, verifyRoot) -> Promise<value>
  Napi::Value execute(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    auto request = std::make_shared<Request>();
    std::string problem;
    if (!read_request(info[0], request.get(), &problem)) {
      return rejected(env, bad_argument(problem));
    }
    // A getter run while marshalling may have closed this very handle.
    if (!root_) return closed(env);
    bool verify = info.Length() > 1 && info[1].IsBoolean() && info[1].As<Napi::Boolean>();
    std::shared_ptr<Root> root = root_;
    return PromiseJob<Result<pinnedfs::Value>>::start(
        env, [root, request, verify]() { return pinnedfs::execute(*root, *request, verify); },
        [](Napi::Env e, Napi::Promise::Deferred& d, Result<pinnedfs::Value>& r) {
          if (r.ok()) d.Resolve(value_to_js(e, r.value()));
          else d.Reject(error_to_js(e, r.error()));
        });
  }

  // call(op, path, recursive) -> Promise<value>: the hot path for the path-only reads. Same core
  // call as execute(), without reading a dozen named properties off a request object.
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
    if (!read_path_only(static_cast<int>(op), info[1], recursive, request.get(), &problem)) {
      return rejected(env, bad_argument(problem));
    }
    std::shared_ptr<Root> root = root_;
    if (request->op == Op::ReadFile) {
      auto buffer = std::make_shared<std::string>();
      if (AddonData* data = env.GetInstanceData<AddonData>()) *buffer = data->reads.take();
      return PromiseJob<Result<pinnedfs::Value>>::start(
          env,
          [root, request, buffer]() {
            return pinnedfs::execute_read(*root, *request, std::move(*buffer));
          },
          [](Napi::Env e, Napi::Promise::Deferred& d, Result<pinnedfs::Value>& r) {
            if (!r.ok()) {
              d.Reject(error_to_js(e, r.error()));
              return;
            }
            Napi::Value v = value_to_js(e, r.value());
            // A small content was copied into the Buffer: its storage goes back to the pool.
            Bytes* b = std::get_if<Bytes>(&r.value());
            AddonData* data = e.GetInstanceData<AddonData>();
            if (b && data && b->data.size() <= kCopyThreshold) data->reads.give(std::move(b->data));
            d.Resolve(v);
          });
    }
    return PromiseJob<Result<pinnedfs::Value>>::start(
        env, [root, request]() { return pinnedfs::execute(*root, *request, false); },
        [](Napi::Env e, Napi::Promise::Deferred& d, Result<pinnedfs::Value>& r) {
          if (r.ok()) d.Resolve(value_to_js(e, r.value()));
          else d.Reject(error_to_js(e, r.error()));
        });
  }

  // readMany(ops: Uint8Array, paths: string[], recursive: Uint8Array, size, response, verifyRoot)
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
      return rejected(env, bad_argument("readMany(ops: Uint8Array, paths: string[], recursive: Uint8Array, ...)"));
    }
    Napi::Uint8Array op_codes = info[0].As<Napi::Uint8Array>();
    Napi::Array paths = info[1].As<Napi::Array>();
    Napi::Uint8Array recursive = info[2].As<Napi::Uint8Array>();
    std::size_t n = op_codes.ElementLength();
    if (paths.Length() != n || recursive.ElementLength() != n) {
      return rejected(env, bad_argument("readMany: ops, paths and recursive differ in length"));
    }
    BatchLimits limits;
    bool ok_size = true;
    bool ok_response = true;
    double size = info[3].IsNumber() ? info[3].As<Napi::Number>().DoubleValue() : -1;
    double response = info[4].IsNumber() ? info[4].As<Napi::Number>().DoubleValue() : -1;
    ok_size = size >= 0 && size <= (1 << 20) && size == static_cast<double>(static_cast<int64_t>(size));
    ok_response = response >= 0 && response <= static_cast<double>(1ll << 53) &&
                  response == static_cast<double>(static_cast<int64_t>(response));
    if (!ok_size || !ok_response) return rejected(env, bad_argument("batch limits: size and response must be integers in range"));
    limits.size = static_cast<std::size_t>(size);
    limits.response = static_cast<uint64_t>(response);
    if (n > limits.size) {
      return rejected(env, bad_argument("batch of " + std::to_string(n) +
                                        " members exceeds the limit of " +
                                        std::to_string(limits.size)));
    }
    auto job = std::make_shared<CompactBatch>();
    job->requests.reserve(n);
    job->where.reserve(n);
    job->refused.assign(n, 0);
    const uint8_t* codes = op_codes.Data();
    const uint8_t* rec = recursive.Data();
    for (uint32_t i = 0; i < n; ++i) {
      if (codes[i] == kRefusedMember) {
        job->refused[i] = 1;
        continue;
      }
      Request r;
      std::string problem;
      if (!read_path_only(codes[i], paths.Get(i), rec[i] != 0, &r, &problem)) {
        // A malformed member fails alone, as in batch().
        job->refused[i] = 1;
        job->problems.emplace_back(i, std::move(problem));
        continue;
      }
      job->requests.push_back(std::move(r));
      job->where.push_back(i);
    }
    bool verify = info.Length() > 5 && info[5].IsBoolean() && info[5].As<Napi::Boolean>();
    std::shared_ptr<Root> root = root_;
    if (AddonData* data = env.GetInstanceData<AddonData>()) job->scratch = data->scratch.take();
    return PromiseJob<std::shared_ptr<CompactBatch>>::start(
        env,
        [root, job, limits, verify]() {
          job->run(*root, limits, verify);
          return job;
        },
        [](Napi::Env e, Napi::Promise::Deferred& d, std::shared_ptr<CompactBatch>& j) {
          Napi::Value answer = j->to_js(e);
          if (AddonData* data = e.GetInstanceData<AddonData>()) data->scratch.give(std::move(j->scratch));
          d.Resolve(answer);
        });
  }

  // batch(requests, { size, response }, verifyRoot) -> Promise<Array<{ ok, value } | { ok, error }>>
  Napi::Value batch(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    BatchLimits limits;
    if (info.Length() > 1 && info[1].IsObject()) {
      Reader l{info[1].As<Napi::Object>(), {}};
      bool has = false;
      int64_t size = l.integer("size", 0, 1 << 20, &has);
      if (has) limits.size = static_cast<std::size_t>(size);
      int64_t response = l.integer("response", 0, (1ll << 53), &has);
      if (has) limits.response = static_cast<uint64_t>(response);
      if (!l.problem.empty()) return rejected(env, bad_argument("batch limits: " + l.problem));
    }
    if (!info[0].IsArray()) return rejected(env, bad_argument("batch requests must be an array"));
    Napi::Array in = info[0].As<Napi::Array>();
    if (in.Length() > limits.size) {
      return rejected(env, bad_argument("batch of " + std::to_string(in.Length()) +
                                        " members exceeds the limit of " +
                                        std::to_string(limits.size)));
    }
    // Malformed members fail alone: they are recorded here and never reach the worker.
    auto requests = std::make_shared<std::vector<Request>>(in.Length());
    auto problems = std::make_shared<std::vector<std::string>>(in.Length());
    for (uint32_t i = 0; i < requests->size(); ++i) {
      Napi::Value member = element(in, i, "a batch member", &(*problems)[i]);
      if ((*problems)[i].empty()) read_request(member, &(*requests)[i], &(*problems)[i]);
    }
    // A getter run while marshalling may have closed this very handle.
    if (!root_) return closed(env);
    bool verify = info.Length() > 2 && info[2].IsBoolean() && info[2].As<Napi::Boolean>();
    std::shared_ptr<Root> root = root_;
    return PromiseJob<std::vector<Result<pinnedfs::Value>>>::start(
        env,
        [root, requests, problems, limits, verify]() {
          std::vector<Request> runnable;
          std::vector<std::size_t> where;
          for (std::size_t i = 0; i < requests->size(); ++i) {
            if ((*problems)[i].empty()) {
              runnable.push_back(std::move((*requests)[i]));
              where.push_back(i);
            }
          }
          auto ran = execute_batch(*root, runnable, limits, verify);
          std::vector<Result<pinnedfs::Value>> out;
          out.reserve(requests->size());
          for (std::size_t i = 0; i < requests->size(); ++i) out.emplace_back(Error{});
          for (std::size_t i = 0; i < requests->size(); ++i) {
            if (!(*problems)[i].empty()) out[i] = Result<pinnedfs::Value>(bad_argument((*problems)[i]));
          }
          for (std::size_t k = 0; k < where.size(); ++k) out[where[k]] = std::move(ran[k]);
          return out;
        },
        [](Napi::Env e, Napi::Promise::Deferred& d, std::vector<Result<pinnedfs::Value>>& results) {
          Napi::Array a = Napi::Array::New(e, results.size());
          for (std::size_t i = 0; i < results.size(); ++i) {
            Napi::Object entry = Napi::Object::New(e);
            entry.Set("ok", results[i].ok());
            if (results[i].ok()) entry.Set("value", value_to_js(e, results[i].value()));
            else entry.Set("error", error_to_js(e, results[i].error()));
            a.Set(static_cast<uint32_t>(i), entry);
          }
          d.Resolve(a);
        });
  }

  // confine(request: Uint8Array) -> [Promise<Buffer>, cancel()]: a pinnedfs/confine program
  // (ops/confine.h), bytes in and bytes out. Descriptors the answer names become the caller's when
  // the promise settles; an answer never delivered closes them.
  Napi::Value confine(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    auto cancel = std::make_shared<std::atomic<bool>>(false);
    auto pair = [&](Napi::Value promise) {
      Napi::Array out = Napi::Array::New(env, 2);
      out.Set(0u, promise);
      out.Set(1u, Napi::Function::New(env, [cancel](const Napi::CallbackInfo& i) -> Napi::Value {
                cancel->store(true);
                return i.Env().Undefined();
              }, "cancel"));
      return out;
    };
    if (!root_) return pair(closed(env));
    if (!info[0].IsTypedArray() || info[0].As<Napi::TypedArray>().TypedArrayType() != napi_uint8_array) {
      return pair(rejected(env, bad_argument("confine(request: Uint8Array)")));
    }
    Napi::Uint8Array a = info[0].As<Napi::Uint8Array>();
    auto bytes = std::make_shared<std::string>(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
    std::shared_ptr<Root> root = root_;
    return pair(PromiseJob<Result<confine::Answer>>::start(
        env, [root, bytes, cancel]() { return confine::run(*root, *bytes, cancel.get()); },
        [](Napi::Env e, Napi::Promise::Deferred& d, Result<confine::Answer>& r) {
          if (!r.ok()) return void(d.Reject(error_to_js(e, r.error())));
          Napi::Value answer = Napi::Buffer<char>::Copy(e, r.value().bytes.data(), r.value().bytes.size());
          for (Fd& fd : r.value().fds) fd.release();
          d.Resolve(answer);
        }));
  }

  Napi::Value close(const Napi::CallbackInfo& info) {
    root_.reset();
    return info.Env().Undefined();
  }
};

// pin(path, strategy) -> Promise<RootHandle with identity, dev, ino, strategy>
Napi::Value pin(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return rejected(env, bad_argument("root path must be a string"));
  bool ok = false;
  Strategy strategy = parse_strategy(info[1], &ok);
  if (!ok) return rejected(env, bad_argument("strategy must be 'auto', 'openat2' or 'walk'"));
  std::string path = info[0].As<Napi::String>().Utf8Value();
  return PromiseJob<Result<std::shared_ptr<Root>>>::start(
      env, [path, strategy]() { return Root::pin(path, strategy); },
      [](Napi::Env e, Napi::Promise::Deferred& d, Result<std::shared_ptr<Root>>& r) {
        if (!r.ok()) {
          d.Reject(error_to_js(e, r.error()));
          return;
        }
        AddonData* data = e.GetInstanceData<AddonData>();
        Napi::Object obj = data->root_ctor.New({});
        RootHandle::Unwrap(obj)->adopt(r.value());
        obj.Set("identity", r.value()->identity().str());
        obj.Set("strategy", strategy_name(r.value()->strategy()));
        obj.Set("path", r.value()->path());
        d.Resolve(obj);
      });
}

// identify(path) -> Promise<"dev:ino">
Napi::Value identify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return rejected(env, bad_argument("path must be a string"));
  std::string path = info[0].As<Napi::String>().Utf8Value();
  return PromiseJob<Result<Identity>>::start(
      env, [path]() { return identify_path(path); },
      [](Napi::Env e, Napi::Promise::Deferred& d, Result<Identity>& r) {
        if (r.ok()) d.Resolve(Napi::String::New(e, r.value().str()));
        else d.Reject(error_to_js(e, r.error()));
      });
}

void teardown(Napi::Env, AddonData* d) {
  for (RootHandle* h : d->registry->live) h->drop();
  delete d;
}

Napi::Object init(Napi::Env env, Napi::Object exports) {
  auto* data = new AddonData();
  data->root_ctor = Napi::Persistent(RootHandle::define(env));
  // Environment teardown (process exit, worker exit) finalizes the instance data: drop every
  // pinned root still held. Operations in flight keep their own reference to the root.
  env.SetInstanceData<AddonData, teardown>(data);
  exports.Set("pin", Napi::Function::New(env, pin, "pin"));
  exports.Set("identify", Napi::Function::New(env, identify, "identify"));
  exports.Set("trips", Napi::Function::New(
                           env,
                           [](const Napi::CallbackInfo& info) -> Napi::Value {
                             AddonData* data = info.Env().GetInstanceData<AddonData>();
                             return Napi::Number::New(info.Env(), data ? data->trips : 0);
                           },
                           "trips"));
  Napi::Object ops = Napi::Object::New(env);
  const char* names[] = {"exists",        "stat",   "readFile", "readDirectory", "readLink",
                         "realPath",      "resolve", "glob",    "makeDirectory", "remove",
                         "rename",        "chmod",  "chown",    "writeFile",     "mkdirs",
                         "rmdirs"};
  for (uint32_t i = 0; i < static_cast<uint32_t>(Op::Count); ++i) ops.Set(names[i], i);
  exports.Set("ops", ops);
  const char* flags[] = {"r", "r+", "w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"};
  Napi::Object fl = Napi::Object::New(env);
  for (uint32_t i = 0; i < 10; ++i) fl.Set(flags[i], i);
  exports.Set("flags", fl);
  return exports;
}

}  // namespace
}  // namespace pinnedfs

static Napi::Object InitPinnedfs(Napi::Env env, Napi::Object exports) {
  return pinnedfs::init(env, exports);
}

NODE_API_MODULE(pinnedfs, InitPinnedfs)
