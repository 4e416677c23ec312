// Marshal-in (args.h).
#include "binding/args.h"

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "core/alloc.h"

namespace pinnedfs {
namespace binding {

namespace {

// A getter or Proxy trap that throws leaves a JavaScript exception pending; every N-API call after
// it fails, and a promise created then is never settled properly. `checked` takes the exception
// back, so hostile input is one more BadArgument problem and marshalling goes on safely.
Napi::Value checked(Napi::Env env, Napi::Value v, const std::string& what, std::string* problem) {
  if (!env.IsExceptionPending()) return v;
  env.GetAndClearPendingException();
  if (problem->empty()) *problem = "reading " + what + " threw";
  return env.Undefined();
}

constexpr uint32_t kMaxListMembers = 100000;

}  // namespace

Napi::Value element(Napi::Array a, uint32_t i, const char* what, std::string* problem) {
  return checked(a.Env(), a.Get(i), what, problem);
}

bool length_of(Napi::Array a, uint32_t* n) {
  *n = 0;
  return napi_get_array_length(a.Env(), a, n) == napi_ok;
}

Error Budget::no_memory() const {
  return out_of_memory(refused, "copy", {});
}

bool utf8_within(Napi::Value v, std::size_t* left, std::string* out, std::size_t* refused) {
  std::size_t length = 0;
  if (napi_get_value_string_utf8(v.Env(), v, nullptr, 0, &length) != napi_ok || length > *left) {
    return false;
  }
  // Checked (core/alloc.h): a string the size of the caller's budget is an allocation that can
  // fail, and fails as ENOMEM.
  if (!try_reserve(*out, length)) {
    if (refused) *refused = length;
    return false;
  }
  *left -= length;
  if (length >= kHugeBuffer) advise_large_buffer(&(*out)[0], length);
  out->resize(length);
  // The terminating NUL napi writes lands on the string's own terminator.
  return napi_get_value_string_utf8(v.Env(), v, &(*out)[0], length + 1, &length) == napi_ok;
}

std::string over_budget(const char* what) {
  return std::string(what) + " exceeds what one call may carry (" +
         std::to_string(kMaxRequestText >> 20) + " MiB of text, " +
         std::to_string(kMaxRequestData) + " bytes of data)";
}

Napi::Value Reader::get(const char* key) {
  return checked(obj.Env(), obj.Get(key), std::string("operand '") + key + "'", &problem);
}

bool Reader::has(const char* key) {
  Napi::Value v = get(key);
  return !v.IsUndefined() && !v.IsNull();
}

void Reader::fail(const std::string& why) {
  if (problem.empty()) problem = why;
}

std::string Reader::str(const char* key, bool required) {
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
  if (!utf8_within(v, &budget->text, &out, &budget->refused))
    fail(over_budget((std::string("operand '") + key + "'").c_str()));
  return out;
}

bool Reader::boolean(const char* key) {
  Napi::Value v = get(key);
  if (v.IsUndefined() || v.IsNull()) return false;
  if (!v.IsBoolean()) {
    fail(std::string("operand '") + key + "' must be a boolean");
    return false;
  }
  return v.As<Napi::Boolean>().Value();
}

int64_t Reader::integer(const char* key, int64_t lo, int64_t hi, bool* present) {
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

std::vector<std::string> Reader::strings(const char* key) {
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
    fail(std::string("operand '") + key + "' has more than " + std::to_string(kMaxListMembers) +
         " members");
    return {};
  }
  for (uint32_t i = 0; i < n; ++i) {
    Napi::Value e = element(a, i, "an array member", &problem);
    if (!e.IsString()) {
      fail(std::string("operand '") + key + "' must be an array of strings");
      return {};
    }
    std::string text;
    if (!utf8_within(e, &budget->text, &text, &budget->refused)) {
      fail(over_budget((std::string("operand '") + key + "'").c_str()));
      return {};
    }
    out.push_back(std::move(text));
  }
  return out;
}

namespace {

// The array operand `key`, each member an object read by `member` through a Reader of its own. A
// list that is not an array, is longer than `most` or has a malformed member is `in`'s problem;
// members are read until the first problem.
template <class Member>
void read_list(Reader& in, const char* key, uint32_t most, const char* shape, Member member) {
  Napi::Value p = in.get(key);
  uint32_t n = 0;
  if (!p.IsArray() || !length_of(p.As<Napi::Array>(), &n) || n > most) {
    in.fail(std::string("operand '") + key + "' must be an array of " + shape);
    return;
  }
  Napi::Array a = p.As<Napi::Array>();
  for (uint32_t i = 0; i < n && in.problem.empty(); ++i) {
    Napi::Value e = element(a, i, "a list member", &in.problem);
    if (!e.IsObject()) {
      in.fail(std::string(key) + " member must be an object");
      break;
    }
    Reader m{e.As<Napi::Object>(), in.budget, {}};
    member(m);
    if (!m.problem.empty()) in.fail(std::string(key) + " member: " + m.problem);
  }
}

// "dev:ino" in decimal, nothing else: strtoull alone would accept " 1:2", "+1:2" and wrap "-1:2".
void read_identity(Reader& m, const std::string& id, Identity* out) {
  std::size_t colon = id.find(':');
  char* end = nullptr;
  if (colon == std::string::npos || colon == 0 || colon + 1 == id.size()) {
    m.fail("identity must be \"dev:ino\"");
  } else if (id.find_first_not_of("0123456789:") != std::string::npos ||
             id.find(':', colon + 1) != std::string::npos) {
    m.fail("identity must be \"dev:ino\" in decimal");
  } else {
    errno = 0;
    out->dev = std::strtoull(id.substr(0, colon).c_str(), &end, 10);
    bool ok1 = errno == 0 && end && *end == '\0';
    out->ino = std::strtoull(id.substr(colon + 1).c_str(), &end, 10);
    bool ok2 = errno == 0 && end && *end == '\0';
    if (!ok1 || !ok2 || id[0] == '-' || id[colon + 1] == '-') {
      m.fail("identity must be \"dev:ino\" in decimal");
    }
  }
}

// The scalar operands every op may carry.
void read_scalars(Reader& in, Request* r) {
  bool present = false;
  r->recursive = in.boolean("recursive");
  r->force = in.boolean("force");
  r->split = in.boolean("split");
  r->atomic = in.boolean("atomic");
  r->in_place = in.boolean("inPlace");
  r->durable = in.boolean("durable");
  r->no_replace = in.boolean("noReplace");
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
}

// writeFile's bytes: a Uint8Array, copied, or a string, as UTF-8; charged to the data budget. With
// `base64: true` the string is base64 text the worker decodes (core/base64.h). It is copied as
// UTF-8, not Latin-1: a character above U+00FF becomes bytes >= 0x80 the decoder refuses, where the
// Latin-1 copy would keep only its low byte (U+0141 as 'A') and accept what was never base64.
void read_bytes(Reader& in, const char* key, std::string* out) {
  const std::string what = std::string("operand '") + key + "'";
  Napi::Value d = in.get(key);
  if (d.IsTypedArray() && d.As<Napi::TypedArray>().TypedArrayType() == napi_uint8_array) {
    Napi::Uint8Array a = d.As<Napi::Uint8Array>();
    if (a.ByteLength() > in.budget->data) {
      in.fail(over_budget(what.c_str()));
    } else if (!try_reserve(*out, a.ByteLength())) {
      in.budget->refused = a.ByteLength();
      in.fail(over_budget(what.c_str()));
    } else {
      in.budget->data -= a.ByteLength();
      out->assign(reinterpret_cast<const char*>(a.Data()), a.ByteLength());
    }
  } else if (d.IsString()) {
    if (!utf8_within(d, &in.budget->data, out, &in.budget->refused))
      in.fail(over_budget(what.c_str()));
  } else {
    in.fail(what + " must be a Uint8Array or a string");
  }
}

void read_data(Reader& in, Request* r) {
  r->base64 = in.boolean("base64");
  read_bytes(in, "data", &r->data);
}

// The identity an op expects to find (the file, or remove's parent directory), when given.
void read_expected_identity(Reader& in, Request* r) {
  if (in.has("identity")) {
    r->has_expect_identity = true;
    std::string id = in.str("identity", true);
    if (in.problem.empty()) read_identity(in, id, &r->expect_identity);
  }
}

// replaceIfUnchanged, removeIfUnchanged: what the file is expected to be (ops/unchanged.cc).
void read_expectation(Reader& in, Request* r) {
  if (r->op == Op::ReplaceIfUnchanged && !in.has("data")) in.fail("missing operand 'data'");
  if (in.has("expect")) {
    r->has_expect = true;
    read_bytes(in, "expect", &r->expect);
  }
  read_expected_identity(in, r);
}

void read_plan(Reader& in, Request* r) {
  read_list(in, "plan", kMaxListMembers, "{ path, mode }", [r](Reader& m) {
    MkdirsEntry entry;
    entry.path = m.str("path", true);
    bool has = false;
    int64_t md = m.integer("mode", 0, 07777, &has);
    entry.mode = has ? static_cast<uint32_t>(md) : 0777;
    r->plan.push_back(std::move(entry));
  });
}

void read_owned(Reader& in, Request* r) {
  read_list(in, "owned", kMaxListMembers, "{ path, identity, optional }", [r](Reader& m) {
    OwnedDir entry;
    entry.path = m.str("path", true);
    std::string id = m.str("identity", true);
    entry.optional = m.boolean("optional");
    if (m.problem.empty()) read_identity(m, id, &entry.identity);
    r->owned.push_back(std::move(entry));
  });
}

// The operands of the fileops operations (copyFile, cp, symlink, link, utimes, truncate).
void read_fileops(Reader& in, Request* r) {
  bool present = false;
  if (r->op == Op::CopyFile || r->op == Op::Cp || r->op == Op::Link) r->to = in.str("to", true);
  if (r->op == Op::Symlink) r->target = in.str("target", true);
  r->copy_mode = static_cast<uint32_t>(in.integer("copyMode", 0, 7, &present));
  r->error_on_exist = in.boolean("errorOnExist");
  r->length = static_cast<uint64_t>(in.integer("length", 0, (1ll << 53), &present));
  if (r->op != Op::Utimes) return;
  for (auto [key, out] : {std::pair<const char*, double*>{"atime", &r->atime},
                          std::pair<const char*, double*>{"mtime", &r->mtime}}) {
    Napi::Value v = in.get(key);
    if (!v.IsNumber()) {
      in.fail(std::string("operand '") + key + "' must be a number of seconds");
      return;
    }
    *out = v.As<Napi::Number>().DoubleValue();
  }
}

#ifdef PINNEDFS_TEST_HOOKS
// Test hook (see HookStep): deterministic "something changed after planning". A build without the
// hooks ignores the operand, as it ignores any name it does not know.
void read_after_plan(Reader& in, Request* r) {
  read_list(in, "testAfterPlan", 64, "{ kind, path, to }", [r](Reader& m) {
    HookStep step;
    std::string kind = m.str("kind", true);
    step.path = m.str("path", true);
    if (kind == "mkdir")
      step.kind = HookStep::Kind::Mkdir;
    else if (kind == "file")
      step.kind = HookStep::Kind::File;
    else if (kind == "rmdir")
      step.kind = HookStep::Kind::Rmdir;
    else if (kind == "rename") {
      step.kind = HookStep::Kind::Rename;
      step.to = m.str("to", true);
    } else
      m.fail("testAfterPlan kind must be mkdir, file, rmdir or rename");
    r->after_plan.push_back(std::move(step));
  });
}
#endif

}  // namespace

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
  // Which operands are read follows the operation table's operand column (core/request.h).
  const OpOperand operand =
      op >= 0 && op < static_cast<int64_t>(Op::Count) ? kOpTable[op].operand : OpOperand::Path;
  r->path = in.str("path", operand != OpOperand::Plan && operand != OpOperand::Owned);
  if (operand == OpOperand::PathTo) r->to = in.str("to", true);
  if (operand == OpOperand::Glob) {
    r->to = in.str("to", false);
    r->pattern = in.str("pattern", true);
    r->exclude = in.strings("exclude");
    r->dot = in.boolean("dot");
    r->unnamed = in.boolean("unnamed");
  }
  read_scalars(in, r);
  read_fileops(in, r);
  if (in.has("data")) read_data(in, r);
  if (in.has("plan")) read_plan(in, r);
  if (in.has("owned")) read_owned(in, r);
  if (r->op == Op::ReplaceIfUnchanged || r->op == Op::RemoveIfUnchanged) read_expectation(in, r);
  if (r->op == Op::Remove) read_expected_identity(in, r);
  if (operand == OpOperand::Plan && !in.has("plan")) in.fail("missing operand 'plan'");
  if (operand == OpOperand::Owned && !in.has("owned")) in.fail("missing operand 'owned'");
#ifdef PINNEDFS_TEST_HOOKS
  if (r->op == Op::Mkdirs && in.has("testAfterPlan")) read_after_plan(in, r);
#endif
  *problem = in.problem;
  return in.problem.empty();
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
  if (!utf8_within(path, &budget->text, &r->path, &budget->refused)) {
    *problem = over_budget("operand 'path'");
    return false;
  }
  r->recursive = recursive;
  return true;
}

bool read_verify(Napi::Value v, std::string* alias) {
  if (v.IsBoolean()) return v.As<Napi::Boolean>().Value();
  if (!v.IsString()) return false;
  std::size_t left = kMaxRequestText;
  // An alias too long to be a path cannot name the root: checking "" would skip it, so keep a
  // spelling that fails the check instead.
  if (!utf8_within(v, &left, alias) || alias->empty()) *alias = std::string(1, '\0');
  return true;
}

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

}  // namespace binding
}  // namespace pinnedfs
