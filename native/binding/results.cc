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

void stat_record(const StatInfo& s, double* slots) {
  const double numbers[] = {static_cast<double>(s.type),
                            static_cast<double>(s.dev),
                            static_cast<double>(s.ino),
                            static_cast<double>(s.mode),
                            static_cast<double>(s.nlink),
                            static_cast<double>(s.uid),
                            static_cast<double>(s.gid),
                            static_cast<double>(s.rdev),
                            static_cast<double>(s.size),
                            static_cast<double>(s.blksize),
                            static_cast<double>(s.blocks),
                            s.atime_ms,
                            s.mtime_ms,
                            s.ctime_ms,
                            s.birthtime_ms};
  const std::uint64_t exact[] = {s.dev, s.ino, s.nlink, s.rdev, s.size, s.blksize, s.blocks};
  const std::int64_t nanos[] = {s.atime_ns, s.mtime_ns, s.ctime_ns, s.birthtime_ns};
  static_assert(sizeof numbers / sizeof numbers[0] == kStatNumbers, "PINNEDFS_STAT_NUMBERS");
  static_assert(sizeof exact / sizeof exact[0] == kStatExact, "PINNEDFS_STAT_EXACT");
  static_assert(sizeof nanos / sizeof nanos[0] == kStatNanos, "PINNEDFS_STAT_NANOS");
  // Bytes, not values, for the integers: each slot is read back as a 64-bit integer.
  std::memcpy(slots, numbers, sizeof numbers);
  std::memcpy(slots + kStatNumbers, exact, sizeof exact);
  std::memcpy(slots + kStatNumbers + kStatExact, nanos, sizeof nanos);
}

namespace {

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
    double* slots = nullptr;
    napi_value record = out.float64array(kStatSlots, &slots);
    if (slots != nullptr) stat_record(s, slots);
    return record;
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
