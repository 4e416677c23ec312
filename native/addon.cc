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
#include "core/limits.h"
#include "core/request.h"
#include "core/root.h"
#include "core/value.h"
#include "ops/confine.h"
#include "settle_pacer.h"

namespace pinnedfs {
namespace {

// ---------------------------------------------------------------------------------------------
// JavaScript <- core
//
// Built on raw Node-API calls, every status checked. A worker thread's environment can stop running
// JavaScript at any moment (worker.terminate() from another thread), and from then on the calls
// that may run JavaScript fail: creating a buffer, setting a property, settling a promise. A
// node-addon-api wrapper answers such a failure with an empty object, and the next call through it
// dereferences nothing (SIGSEGV) or builds an Error with a null environment (FATAL ERROR:
// Error::New napi_get_last_error_info). `Out` instead remembers the first failure and turns every
// later call into a no-op: the answer is dropped, quietly, with the environment that would have
// received it.

// napi_no_external_buffers_allowed, which the N-API 8 headers do not name.
constexpr int kNoExternalBuffers = 22;

class Out {
 public:
  explicit Out(napi_env env) : env_(env) {}
  napi_env env() const { return env_; }
  bool ok() const { return ok_; }

  napi_value object() {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_object(env_, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value array(std::size_t n) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_array_with_length(env_, n, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value string(const std::string& s) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_string_utf8(env_, s.data(), s.size(), &v) : napi_ok;
    return keep(st, v);
  }
  napi_value string(const char* s) { return string(std::string(s)); }
  napi_value number(double d) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_double(env_, d, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value boolean(bool b) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_get_boolean(env_, b, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value bigint(std::uint64_t n) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_bigint_uint64(env_, n, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value null() {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_get_null(env_, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value undefined() {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_get_undefined(env_, &v) : napi_ok;
    return keep(st, v);
  }
  napi_value buffer_copy(const char* data, std::size_t n) {
    napi_value v = nullptr;
    void* copied = nullptr;
    napi_status st = ok_ ? napi_create_buffer_copy(env_, n, data, &copied, &v) : napi_ok;
    return keep(st, v);
  }
  // The string's storage becomes the Buffer's, without a copy; freed by the Buffer's finalizer, or
  // here when no Buffer could be made.
  napi_value buffer_adopt(std::string&& s) {
    if (!ok_) return nullptr;
    auto* owned = new std::string(std::move(s));
    napi_value v = nullptr;
    napi_status st = napi_create_external_buffer(
        env_, owned->size(), owned->empty() ? nullptr : &(*owned)[0],
        [](napi_env, void*, void* hint) { delete static_cast<std::string*>(hint); }, owned, &v);
    if (st == static_cast<napi_status>(kNoExternalBuffers)) {
      // A runtime that forbids external buffers (a V8 sandbox): copy instead.
      napi_value copy = buffer_copy(owned->data(), owned->size());
      delete owned;
      return copy;
    }
    if (st != napi_ok) delete owned;
    return keep(st, v);
  }
  // A Uint8Array of n zero bytes; `*data` points at them, or is null once anything failed.
  napi_value uint8array(std::size_t n, std::uint8_t** data) {
    *data = nullptr;
    napi_value buffer = nullptr, v = nullptr;
    void* bytes = nullptr;
    // Each status first, then keep(): argument evaluation order is unspecified, and `buffer` or `v`
    // read before the call that fills it would be null.
    napi_status st = ok_ ? napi_create_arraybuffer(env_, n, &bytes, &buffer) : napi_ok;
    keep(st, buffer);
    st = ok_ ? napi_create_typedarray(env_, napi_uint8_array, n, buffer, 0, &v) : napi_ok;
    keep(st, v);
    if (ok_) *data = static_cast<std::uint8_t*>(bytes);
    return ok_ ? v : nullptr;
  }
  void set(napi_value object, const char* key, napi_value v) {
    if (ok_ && object && v) keep(napi_set_named_property(env_, object, key, v), object);
  }
  void set(napi_value array, std::uint32_t i, napi_value v) {
    if (ok_ && array && v) keep(napi_set_element(env_, array, i, v), array);
  }

 private:
  napi_value keep(napi_status st, napi_value v) {
    if (st != napi_ok || (ok_ && v == nullptr)) ok_ = false;
    return ok_ ? v : nullptr;
  }
  napi_env env_;
  bool ok_ = true;
};

// Settles `deferred` with `value` unless anything failed on the way; then, or if settling itself
// fails, leaves the promise pending and takes back any exception a failed call left, so nothing
// is thrown into an environment that is shutting down.
void settle(Out& out, napi_deferred deferred, bool resolve, napi_value value) {
  napi_env env = out.env();
  bool settled = out.ok() && value != nullptr &&
                 (resolve ? napi_resolve_deferred(env, deferred, value)
                          : napi_reject_deferred(env, deferred, value)) == napi_ok;
  if (settled) return;
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
    napi_value ignored = nullptr;
    napi_get_and_clear_last_exception(env, &ignored);
  }
}

napi_value error_to_js(Out& out, const Error& e) {
  static const char* const kRefusals[] = {"",           "symlink",    "escape",
                                          "hardlink",   "notregular", "badargument",
                                          "identity",   "toolarge",   "writezero"};
  napi_value o = out.object();
  out.set(o, "code", out.string(e.err ? errno_name(e.err) : "EINVAL"));
  out.set(o, "errno", out.number(-e.err));
  out.set(o, "syscall", out.string(e.syscall ? e.syscall : ""));
  out.set(o, "path", out.string(e.path));
  out.set(o, "refusal", out.string(kRefusals[static_cast<unsigned>(e.refusal)]));
  out.set(o, "description", out.string(e.description));
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
  Out& out;
  napi_value operator()(std::monostate&) const { return out.undefined(); }
  napi_value operator()(bool& b) const { return out.boolean(b); }
  napi_value operator()(Bytes& b) const {
    if (b.data.size() <= kCopyThreshold) return out.buffer_copy(b.data.data(), b.data.size());
    // Large content is handed over without a copy: the string's storage becomes the Buffer's.
    return out.buffer_adopt(std::move(b.data));
  }
  napi_value operator()(Text& t) const { return out.string(t.text); }
  napi_value operator()(Names& n) const {
    napi_value a = out.array(n.names.size());
    for (std::size_t i = 0; i < n.names.size() && out.ok(); ++i) {
      out.set(a, static_cast<uint32_t>(i), out.string(n.names[i]));
    }
    return a;
  }
  napi_value operator()(StatInfo& s) const {
    napi_value o = out.object();
    out.set(o, "type", out.string(type_name(s.type)));
    out.set(o, "dev", out.bigint(s.dev));
    out.set(o, "ino", out.bigint(s.ino));
    out.set(o, "mode", out.number(s.mode));
    out.set(o, "nlink", out.bigint(s.nlink));
    out.set(o, "uid", out.number(s.uid));
    out.set(o, "gid", out.number(s.gid));
    out.set(o, "rdev", out.bigint(s.rdev));
    out.set(o, "size", out.bigint(s.size));
    out.set(o, "blksize", out.bigint(s.blksize));
    out.set(o, "blocks", out.bigint(s.blocks));
    out.set(o, "atimeMs", out.number(s.atime_ms));
    out.set(o, "mtimeMs", out.number(s.mtime_ms));
    out.set(o, "ctimeMs", out.number(s.ctime_ms));
    out.set(o, "birthtimeMs", out.number(s.birthtime_ms));
    return o;
  }
  napi_value operator()(Resolution& r) const {
    napi_value o = out.object();
    out.set(o, "path", out.string(r.path));
    out.set(o, "target", r.has_target ? out.string(r.target) : out.null());
    return o;
  }
  napi_value operator()(MkdirsOutcome& m) const {
    napi_value o = out.object();
    napi_value created = out.array(m.created.size());
    for (std::size_t i = 0; i < m.created.size() && out.ok(); ++i) {
      napi_value c = out.object();
      out.set(c, "path", out.string(m.created[i].path));
      out.set(c, "identity", out.string(m.created[i].identity.str()));
      out.set(created, static_cast<uint32_t>(i), c);
    }
    out.set(o, "created", created);
    out.set(o, "error", m.failed ? error_to_js(out, m.error) : out.null());
    return o;
  }
  napi_value operator()(RmdirsOutcome& r) const {
    static const char* const kStatus[] = {"removed", "kept", "missing", "refused"};
    napi_value o = out.object();
    napi_value members = out.array(r.members.size());
    for (std::size_t i = 0; i < r.members.size() && out.ok(); ++i) {
      napi_value m = out.object();
      out.set(m, "path", out.string(r.members[i].path));
      out.set(m, "status", out.string(kStatus[static_cast<unsigned>(r.members[i].status)]));
      bool has_error = r.members[i].status == RmdirStatus::Refused ||
                       r.members[i].status == RmdirStatus::Kept;
      out.set(m, "error", has_error ? error_to_js(out, r.members[i].error) : out.null());
      out.set(members, static_cast<uint32_t>(i), m);
    }
    out.set(o, "members", members);
    out.set(o, "stopped", out.boolean(r.stopped));
    return o;
  }
};

napi_value value_to_js(Out& out, pinnedfs::Value& v) { return std::visit(ValueToJs{out}, v); }

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

// An array's length, read once: everything checked, sized or bounded by it uses this one figure.
// A second read may disagree. A member's getter can grow or shrink the array, so a bound checked on
// one read did not bound the next. And worker.terminate(), on the parent's thread, marks this
// environment as stopping at any instant, even between two statements here; every read after that
// fails, and node-addon-api's Length() reports the failure as 0. batch() sized its requests by one
// read and its problems by the next, then walked both by the first: an empty vector was indexed
// and the process died (SIGSEGV). False when the length cannot be read.
bool length_of(Napi::Array a, uint32_t* n) {
  *n = 0;
  return napi_get_array_length(a.Env(), a, n) == napi_ok;
}

constexpr uint32_t kMaxListMembers = 100000;

// What one call may copy out of JavaScript (core/limits.h). A string is measured before it is
// copied, so one huge string, or one string referenced from a million array slots, is refused
// instead of copied until an allocation fails.
struct Budget {
  std::size_t text = kMaxRequestText;
  std::size_t data = kMaxRequestData;
};

// `v`'s UTF-8 bytes into `out`, charged to `*left`; false (nothing copied) when they do not fit.
bool utf8_within(Napi::Value v, std::size_t* left, std::string* out) {
  std::size_t length = 0;
  if (napi_get_value_string_utf8(v.Env(), v, nullptr, 0, &length) != napi_ok || length > *left) {
    return false;
  }
  *left -= length;
  out->resize(length);
  // The terminating NUL napi writes lands on the string's own terminator.
  return napi_get_value_string_utf8(v.Env(), v, &(*out)[0], length + 1, &length) == napi_ok;
}

std::string over_budget(const char* what) {
  return std::string(what) + " exceeds what one call may carry (" +
         std::to_string(kMaxRequestText >> 20) + " MiB of text, " +
         std::to_string(kMaxRequestData) + " bytes of data)";
}

struct Reader {
  Napi::Object obj;
  Budget* budget;
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
    std::string out;
    if (!utf8_within(v, &budget->text, &out)) fail(over_budget((std::string("operand '") + key + "'").c_str()));
    return out;
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
    uint32_t n = 0;
    if (!length_of(a, &n)) {
      fail(std::string("operand '") + key + "' could not be read");
      return {};
    }
    if (n > kMaxListMembers) {
      fail(std::string("operand '") + key + "' has more than " + std::to_string(kMaxListMembers) + " members");
      return {};
    }
    for (uint32_t i = 0; i < n; ++i) {
      Napi::Value e = element(a, i, "an array member", &problem);
      if (!e.IsString()) {
        fail(std::string("operand '") + key + "' must be an array of strings");
        return {};
      }
      std::string text;
      if (!utf8_within(e, &budget->text, &text)) {
        fail(over_budget((std::string("operand '") + key + "'").c_str()));
        return {};
      }
      out.push_back(std::move(text));
    }
    return out;
  }
};

bool read_request(Napi::Value value, Request* r, std::string* problem, Budget* budget) {
  if (!value.IsObject() || value.IsArray()) {
    *problem = "request must be an object";
    return false;
  }
  Reader in{value.As<Napi::Object>(), budget, {}};
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
      if (a.ByteLength() > budget->data) {
        in.fail(over_budget("operand 'data'"));
      } else {
        budget->data -= a.ByteLength();
        r->data.assign(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
      }
    } else if (d.IsString()) {
      if (!utf8_within(d, &budget->data, &r->data)) in.fail(over_budget("operand 'data'"));
    } else {
      in.fail("operand 'data' must be a Uint8Array or a string");
    }
  }
  if (in.has("plan")) {
    Napi::Value p = in.get("plan");
    uint32_t n = 0;
    if (!p.IsArray() || !length_of(p.As<Napi::Array>(), &n) || n > kMaxListMembers) {
      in.fail("operand 'plan' must be an array of { path, mode }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < n && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("plan member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), budget, {}};
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
    uint32_t n = 0;
    if (!p.IsArray() || !length_of(p.As<Napi::Array>(), &n) || n > kMaxListMembers) {
      in.fail("operand 'owned' must be an array of { path, identity, optional }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < n && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("owned member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), budget, {}};
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
    uint32_t n = 0;
    if (!p.IsArray() || !length_of(p.As<Napi::Array>(), &n) || n > 64) {
      in.fail("operand 'testAfterPlan' must be an array of { kind, path, to }");
    } else {
      Napi::Array a = p.As<Napi::Array>();
      for (uint32_t i = 0; i < n && in.problem.empty(); ++i) {
        Napi::Value e = element(a, i, "a list member", &in.problem);
        if (!e.IsObject()) { in.fail("testAfterPlan member must be an object"); break; }
        Reader m{e.As<Napi::Object>(), budget, {}};
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

bool read_path_only(int op, Napi::Value path, bool recursive, Request* r, std::string* problem,
                    Budget* budget) {
  if (op < 0 || op >= static_cast<int>(Op::Count) || !path_only(static_cast<Op>(op))) {
    *problem = "operation must be a path-only read";
    return false;
  }
  if (!path.IsString()) {
    *problem = "operand 'path' must be a string";
    return false;
  }
  r->op = static_cast<Op>(op);
  if (!utf8_within(path, &budget->text, &r->path)) {
    *problem = over_budget("operand 'path'");
    return false;
  }
  r->recursive = recursive;
  return true;
}

// The verifyRoot argument: `true` checks the root path's identity in the worker before the work
// runs; a string checks the root path and that second spelling of the root (the extension's
// logicalRoot). Anything else checks nothing.
bool read_verify(Napi::Value v, std::string* alias) {
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value();
  if (!v.IsString()) return false;
  std::size_t left = kMaxRequestText;
  // An alias too long to be a path cannot name the root: checking "" would skip it, so keep a
  // spelling that fails the check instead.
  if (!utf8_within(v, &left, alias) || alias->empty()) *alias = std::string(1, '\0');
  return true;
}

// An optional read limit argument: undefined leaves `*out` alone (0, the ceiling); otherwise an
// integer in [1, kMaxContentBytes].
bool byte_limit(Napi::Value v, std::uint64_t* out) {
  if (v.IsUndefined()) return true;
  if (!v.IsNumber()) return false;
  double d = v.As<Napi::Number>().DoubleValue();
  if (!(d >= 1 && d <= static_cast<double>(kMaxContentBytes)) ||
      d != static_cast<double>(static_cast<int64_t>(d))) {
    return false;
  }
  *out = static_cast<std::uint64_t>(d);
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
  void run(const Root& root, const BatchLimits& limits, bool verify, const std::string& alias) {
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
                             },
                             alias);
    results.reserve(n);
    for (std::size_t i = 0; i < n; ++i) {
      results.emplace_back(refused[i] ? bad_argument("refused before the batch was sent") : Error{});
    }
    for (std::size_t k = 0; k < where.size(); ++k) results[where[k]] = std::move(ran[k]);
    for (auto& p : problems) results[p.first] = Result<pinnedfs::Value>(bad_argument(std::move(p.second)));
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

Strategy parse_strategy(Napi::Value v, bool* ok) {
  *ok = true;
  if (v.IsUndefined()) return Strategy::Auto;
  std::size_t left = 16;  // longer than any strategy name: compared, never kept
  std::string s;
  if (v.IsString() && utf8_within(v, &left, &s)) {
    if (s == "auto") return Strategy::Auto;
    if (s == "openat2" || s == "kernel") return Strategy::Kernel;
    if (s == "walk") return Strategy::Walk;
  }
  *ok = false;
  return Strategy::Auto;
}

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
  // Trips off the JavaScript thread this environment has made: tests count them to prove a batch
  // or a directory program is one trip.
  double trips = 0;
  ScratchPool scratch{8u << 20, 16u << 20, {}, 0};         // compact batches
  ScratchPool reads{kCopyThreshold + 1, 4u << 20, {}, 0}; // single reads (contents copied at settle)
  // Spreads a flood of completions over several turns of the loop (nullptr: settle each at once).
  std::unique_ptr<SettlePacer> pacer;
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
// The one async shape: run `work` on the thread pool, then settle a promise with `settle`.
// Raw async work rather than Napi::AsyncWorker, whose completion path builds node-addon-api objects
// that cannot fail quietly once the environment stops running JavaScript.

// What a settle function answers: resolve or reject, with which value (nullptr: nothing to send).
struct Settled {
  bool resolve;
  napi_value value;
};

template <class R>
class PromiseJob : public PendingSettle {
 public:
  using Work = std::function<R()>;
  using Settle = std::function<Settled(Out&, EnvState&, R&)>;

  // The promise, or nullptr when none could be made (the environment is stopping; any exception a
  // failed call left is the caller's to see).
  static napi_value start(napi_env env, Work work, Settle settle) {
    std::shared_ptr<EnvState> state = state_of(env);
    if (!state) return nullptr;
    state->trips += 1;
    auto* job = new PromiseJob(std::move(state), std::move(work), std::move(settle));
    napi_value promise = nullptr, name = nullptr;
    if (napi_create_promise(env, &job->deferred_, &promise) != napi_ok) {
      delete job;
      return nullptr;
    }
    if (napi_create_string_utf8(env, "pinnedfs", NAPI_AUTO_LENGTH, &name) != napi_ok ||
        napi_create_async_work(env, nullptr, name, run, complete, job, &job->work_) != napi_ok) {
      // The promise stays pending: nothing can run JavaScript to observe it any more.
      delete job;
      return promise;
    }
    if (napi_queue_async_work(env, job->work_) != napi_ok) {
      napi_delete_async_work(env, job->work_);
      delete job;
    }
    return promise;
  }

 private:
  PromiseJob(std::shared_ptr<EnvState> state, Work work, Settle settle)
      : state_(std::move(state)), work_fn_(std::move(work)), settle_(std::move(settle)) {}

  static void run(napi_env, void* data) {
    auto* job = static_cast<PromiseJob*>(data);
    job->result_.emplace(job->work_fn_());
  }

  static void complete(napi_env env, napi_status status, void* data) {
    std::unique_ptr<PromiseJob> job(static_cast<PromiseJob*>(data));
    napi_delete_async_work(env, job->work_);
    job->work_ = nullptr;
    // Cancelled (the environment is going away before the work ran), or past the cleanup hook: no
    // JavaScript will look at the promise again, and touching it could only fail.
    if (status != napi_ok || !job->result_ || !job->state_->alive) return;
    SettlePacer* pacer = job->state_->pacer.get();
    if (pacer == nullptr) return job->deliver(env);
    pacer->take(env, std::move(job));
  }

  void deliver(napi_env env) override {
    if (!state_->alive) return;
    napi_handle_scope scope = nullptr;
    if (napi_open_handle_scope(env, &scope) != napi_ok) return;
    Out out(env);
    Settled s = settle_(out, *state_, *result_);
    settle(out, deferred_, s.resolve, s.value);
    napi_close_handle_scope(env, scope);
  }

  std::shared_ptr<EnvState> state_;
  Work work_fn_;
  Settle settle_;
  std::optional<R> result_;
  napi_deferred deferred_ = nullptr;
  napi_async_work work_ = nullptr;
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
  static Napi::Value rejected(Napi::Env env, const Error& e) { return js(env, pinnedfs::rejected(env, e)); }

  Napi::Value closed(Napi::Env env) {
    return rejected(env, refusal(Refusal::BadArgument, "execute", "", "root is closed", EBADF));
  }

  // execute(request, verifyRoot: boolean | alias) -> Promise<value>
  Napi::Value execute(const Napi::CallbackInfo& info) {
    Napi::Env env = info.Env();
    if (!root_) return closed(env);
    auto request = std::make_shared<Request>();
    std::string problem;
    Budget budget;
    if (!read_request(info[0], request.get(), &problem, &budget)) {
      return rejected(env, bad_argument(problem));
    }
    // A getter run while marshalling may have closed this very handle.
    if (!root_) return closed(env);
    std::string alias;
    bool verify = read_verify(info[1], &alias);
    std::shared_ptr<Root> root = root_;
    return js(env, PromiseJob<Result<pinnedfs::Value>>::start(
        env,
        [root, request, verify, alias]() { return pinnedfs::execute(*root, *request, verify, alias); },
        [](Out& out, EnvState&, Result<pinnedfs::Value>& r) { return value_or_error(out, r); }));
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
    if (!read_path_only(static_cast<int>(op), info[1], recursive, request.get(), &problem, &budget)) {
      return rejected(env, bad_argument(problem));
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
            return pinnedfs::execute_read(*root, *request, std::move(*buffer), verify, alias);
          },
          [](Out& out, EnvState& state, Result<pinnedfs::Value>& r) {
            Settled s = value_or_error(out, r);
            // A small content was copied into the Buffer: its storage goes back to the pool.
            Bytes* b = r.ok() ? std::get_if<Bytes>(&r.value()) : nullptr;
            if (b && b->data.size() <= kCopyThreshold) state.reads.give(std::move(b->data));
            return s;
          }));
    }
    return js(env, PromiseJob<Result<pinnedfs::Value>>::start(
        env, [root, request, verify, alias]() { return pinnedfs::execute(*root, *request, verify, alias); },
        [](Out& out, EnvState&, Result<pinnedfs::Value>& r) { return value_or_error(out, r); }));
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
      return rejected(env, bad_argument("readMany(ops: Uint8Array, paths: string[], recursive: Uint8Array, ...)"));
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

  // batch(requests, { size, response, member }, verifyRoot) -> Promise<Array<{ ok, value } | { ok, error }>>
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
      return rejected(env, bad_argument("batch of " + std::to_string(n) +
                                        " members exceeds the limit of " +
                                        std::to_string(limits.size)));
    }
    // Malformed members fail alone: they are recorded here and never reach the worker.
    auto requests = std::make_shared<std::vector<Request>>(n);
    auto problems = std::make_shared<std::vector<std::string>>(n);
    for (uint32_t i = 0; i < n; ++i) {
      Napi::Value member = element(in, i, "a batch member", &(*problems)[i]);
      if ((*problems)[i].empty()) read_request(member, &(*requests)[i], &(*problems)[i], &budget);
    }
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
          for (std::size_t i = 0; i < requests->size(); ++i) out.emplace_back(Error{});
          for (std::size_t i = 0; i < requests->size(); ++i) {
            if (!(*problems)[i].empty()) out[i] = Result<pinnedfs::Value>(bad_argument((*problems)[i]));
          }
          for (std::size_t k = 0; k < where.size(); ++k) out[where[k]] = std::move(ran[k]);
          return out;
        },
        [](Out& out, EnvState&, std::vector<Result<pinnedfs::Value>>& results) {
          napi_value a = out.array(results.size());
          for (std::size_t i = 0; i < results.size() && out.ok(); ++i) {
            napi_value entry = out.object();
            out.set(entry, "ok", out.boolean(results[i].ok()));
            if (results[i].ok()) out.set(entry, "value", value_to_js(out, results[i].value()));
            else out.set(entry, "error", error_to_js(out, results[i].error()));
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
    return pair(js(env, PromiseJob<Result<confine::Answer>>::start(
        env, [root, bytes, cancel]() { return confine::run(*root, *bytes, cancel.get()); },
        [](Out& out, EnvState&, Result<confine::Answer>& r) -> Settled {
          if (!r.ok()) return {false, error_to_js(out, r.error())};
          napi_value answer = out.buffer_copy(r.value().bytes.data(), r.value().bytes.size());
          // The descriptors become the caller's only with an answer that names them; an answer
          // that could not be built (the environment is stopping) leaves them to close here.
          if (out.ok()) for (Fd& fd : r.value().fds) fd.release();
          return {true, answer};
        })));
  }

  Napi::Value close(const Napi::CallbackInfo& info) {
    root_.reset();
    return info.Env().Undefined();
  }
};

Napi::Value js(Napi::Env env, napi_value v) { return Napi::Value(env, v); }

// pin(path, strategy) -> Promise<RootHandle with identity, dev, ino, strategy>
Napi::Value pin(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return js(env, rejected(env, bad_argument("root path must be a string")));
  bool ok = false;
  Strategy strategy = parse_strategy(info[1], &ok);
  if (!ok) return js(env, rejected(env, bad_argument("strategy must be 'auto', 'openat2' or 'walk'")));
  Budget budget;
  std::string path;
  if (!utf8_within(info[0], &budget.text, &path)) {
    return js(env, rejected(env, bad_argument(over_budget("root path"))));
  }
  return js(env, PromiseJob<Result<std::shared_ptr<Root>>>::start(
      env, [path, strategy]() { return Root::pin(path, strategy); },
      [](Out& out, EnvState& state, Result<std::shared_ptr<Root>>& r) -> Settled {
        if (!r.ok()) return {false, error_to_js(out, r.error())};
        // Every step checked: constructing the handle runs JavaScript, which a stopping
        // environment refuses. Then the root is never adopted and closes with this job.
        napi_value ctor = nullptr, obj = nullptr;
        void* unwrapped = nullptr;
        if (state.root_ctor == nullptr ||
            napi_get_reference_value(out.env(), state.root_ctor, &ctor) != napi_ok || ctor == nullptr ||
            napi_new_instance(out.env(), ctor, 0, nullptr, &obj) != napi_ok ||
            napi_unwrap(out.env(), obj, &unwrapped) != napi_ok || unwrapped == nullptr) {
          return {true, nullptr};
        }
        static_cast<RootHandle*>(unwrapped)->adopt(r.value());
        out.set(obj, "identity", out.string(r.value()->identity().str()));
        out.set(obj, "strategy", out.string(strategy_name(r.value()->strategy())));
        out.set(obj, "path", out.string(r.value()->path()));
        return {true, obj};
      }));
}

// identify(path) -> Promise<"dev:ino">
Napi::Value identify(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (!info[0].IsString()) return js(env, rejected(env, bad_argument("path must be a string")));
  Budget budget;
  std::string path;
  if (!utf8_within(info[0], &budget.text, &path)) {
    return js(env, rejected(env, bad_argument(over_budget("path"))));
  }
  return js(env, PromiseJob<Result<Identity>>::start(
      env, [path]() { return identify_path(path); },
      [](Out& out, EnvState&, Result<Identity>& r) -> Settled {
        if (r.ok()) return {true, out.string(r.value().str())};
        return {false, error_to_js(out, r.error())};
      }));
}

// The environment's cleanup hook, run when it is torn down (worker exit or terminate(), process
// exit), before its instance data is finalized: from here on no completion touches JavaScript,
// and every pinned root is dropped (operations in flight keep their own reference).
void stopping(void* arg) {
  auto* held = static_cast<std::shared_ptr<EnvState>*>(arg);
  (*held)->alive = false;
  for (RootHandle* h : (*held)->live) h->drop();
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
  auto* held = new std::shared_ptr<EnvState>(data->state);
  if (napi_add_env_cleanup_hook(env, stopping, held) != napi_ok) delete held;
  exports.Set("pin", Napi::Function::New(env, pin, "pin"));
  exports.Set("identify", Napi::Function::New(env, identify, "identify"));
  exports.Set("trips", Napi::Function::New(
                           env,
                           [](const Napi::CallbackInfo& info) -> Napi::Value {
                             std::shared_ptr<EnvState> state = state_of(info.Env());
                             return Napi::Number::New(info.Env(), state ? state->trips : 0);
                           },
                           "trips"));
  exports.Set("paced", Napi::Function::New(
                           env,
                           [](const Napi::CallbackInfo& info) -> Napi::Value {
                             std::shared_ptr<EnvState> state = state_of(info.Env());
                             return Napi::Number::New(info.Env(), state && state->pacer ? state->pacer->waited() : 0);
                           },
                           "paced"));
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
