// Marshal-out (results.h). Built on raw Node-API calls, every status checked: see `Out`.
#include "binding/results.h"

#include <cstring>
#include <variant>

namespace pinnedfs {
namespace binding {

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

napi_value Out::buffer_copy_large(const char* data, std::size_t n) {
  napi_value global = nullptr, buffer_class = nullptr, alloc = nullptr, size = nullptr, v = nullptr;
  napi_status st = napi_get_global(env_, &global);
  if (st == napi_ok) st = napi_get_named_property(env_, global, "Buffer", &buffer_class);
  if (st == napi_ok) st = napi_get_named_property(env_, buffer_class, "allocUnsafeSlow", &alloc);
  if (st == napi_ok) st = napi_create_double(env_, static_cast<double>(n), &size);
  if (st == napi_ok) st = napi_call_function(env_, buffer_class, alloc, 1, &size, &v);
  void* bytes = nullptr;
  std::size_t length = 0;
  if (st == napi_ok) st = napi_get_buffer_info(env_, v, &bytes, &length);
  if (st != napi_ok || length != n) {
    // The RangeError JavaScript threw is taken back here; the caller rejects with ENOMEM.
    bool pending = false;
    if (napi_is_exception_pending(env_, &pending) == napi_ok && pending) {
      napi_value ignored = nullptr;
      napi_get_and_clear_last_exception(env_, &ignored);
    }
    buffer_failed_ = n;
    return keep(napi_generic_failure, nullptr);
  }
  if (n != 0) std::memcpy(bytes, data, n);
  return keep(st, v);
}

void rejected_for_memory(const Out& failed, napi_deferred deferred) {
  napi_env env = failed.env();
  bool pending = false;
  if (napi_is_exception_pending(env, &pending) == napi_ok && pending) {
    napi_value ignored = nullptr;
    napi_get_and_clear_last_exception(env, &ignored);
  }
  Out again(env);
  Error e = sys_error(ENOMEM, "buffer");
  e.description = "out of memory: a Buffer of " + std::to_string(failed.buffer_failed_bytes()) +
                  " bytes for the answer could not be allocated";
  settle(again, deferred, false, error_to_js(again, e));
}

napi_value error_to_js(Out& out, const Error& e) {
  static const char* const kRefusals[] = {
#define PINNEDFS_NAME(name, text) text,
      PINNEDFS_REFUSALS(PINNEDFS_NAME)
#undef PINNEDFS_NAME
  };
  napi_value o = out.object();
  out.set(o, "code", out.string(e.err ? errno_name(e.err) : "EINVAL"));
  out.set(o, "errno", out.number(-e.err));
  out.set(o, "syscall", out.string(e.syscall ? e.syscall : ""));
  out.set(o, "path", out.string(e.path));
  out.set(o, "refusal", out.string(kRefusals[static_cast<unsigned>(e.refusal)]));
  out.set(o, "description", out.string(e.description));
  return o;
}

namespace {

const char* type_name(FileType t) {
  static const char* const kNames[] = {
#define PINNEDFS_NAME(name, text) text,
      PINNEDFS_FILE_TYPES(PINNEDFS_NAME)
#undef PINNEDFS_NAME
  };
  auto i = static_cast<std::size_t>(t);
  return i < sizeof kNames / sizeof kNames[0] ? kNames[i] : "Unknown";
}

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
    out.set(o, "atimeNs", out.bigint_signed(s.atime_ns));
    out.set(o, "mtimeNs", out.bigint_signed(s.mtime_ns));
    out.set(o, "ctimeNs", out.bigint_signed(s.ctime_ns));
    out.set(o, "birthtimeNs", out.bigint_signed(s.birthtime_ns));
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
    static const char* const kStatus[] = {
#define PINNEDFS_NAME(name, text) text,
        PINNEDFS_RMDIR_STATUSES(PINNEDFS_NAME)
#undef PINNEDFS_NAME
    };
    napi_value o = out.object();
    napi_value members = out.array(r.members.size());
    for (std::size_t i = 0; i < r.members.size() && out.ok(); ++i) {
      napi_value m = out.object();
      out.set(m, "path", out.string(r.members[i].path));
      out.set(m, "status", out.string(kStatus[static_cast<unsigned>(r.members[i].status)]));
      bool has_error =
          r.members[i].status == RmdirStatus::Refused || r.members[i].status == RmdirStatus::Kept;
      out.set(m, "error", has_error ? error_to_js(out, r.members[i].error) : out.null());
      out.set(members, static_cast<uint32_t>(i), m);
    }
    out.set(o, "members", members);
    out.set(o, "stopped", out.boolean(r.stopped));
    return o;
  }
};

}  // namespace

napi_value value_to_js(Out& out, pinnedfs::Value& v) {
  return std::visit(ValueToJs{out}, v);
}

}  // namespace binding
}  // namespace pinnedfs
