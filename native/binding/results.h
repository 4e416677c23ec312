// Marshal-out: core Values and Errors into JavaScript values, through `Out`.
#pragma once
#include <node_api.h>

#include <cstddef>
#include <cstdint>
#include <new>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/value.h"

namespace pinnedfs {
namespace binding {

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
  // A Buffer could not be made (out of memory, most likely): the answer cannot be delivered, and
  // the caller rejects with ENOMEM instead of leaving the promise pending (see
  // rejected_for_memory).
  bool buffer_failed() const { return buffer_failed_ != 0; }
  std::size_t buffer_failed_bytes() const { return buffer_failed_; }

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
  napi_value bigint_signed(std::int64_t n) {
    napi_value v = nullptr;
    napi_status st = ok_ ? napi_create_bigint_int64(env_, n, &v) : napi_ok;
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
  // A copy into a fresh Buffer. Up to kSmallCopy bytes through napi_create_buffer_copy; beyond,
  // through JavaScript's Buffer.allocUnsafeSlow: V8 answers a native request for a large buffer it
  // cannot allocate with a fatal out-of-memory abort, a JavaScript one with a RangeError we catch.
  napi_value buffer_copy(const char* data, std::size_t n) {
    if (!ok_) return nullptr;
    if (n > kSmallCopy) return buffer_copy_large(data, n);
    napi_value v = nullptr;
    void* copied = nullptr;
    napi_status st = napi_create_buffer_copy(env_, n, data, &copied, &v);
    if (st != napi_ok) buffer_failed_ = n;
    return keep(st, v);
  }
  // The string's storage becomes the Buffer's, without a copy; freed by the Buffer's finalizer, or
  // here when no Buffer could be made.
  napi_value buffer_adopt(std::string&& s) {
    if (!ok_) return nullptr;
    auto* owned = new (std::nothrow) std::string(std::move(s));
    if (owned == nullptr) {
      buffer_failed_ = s.size();
      return keep(napi_generic_failure, nullptr);
    }
    napi_value v = nullptr;
    // V8 is told of the memory (napi_adjust_external_memory) while the Buffer holds it: a
    // collection is then due when garbage Buffers hold much, as it is for Buffers V8 allocated
    // itself. Untold, garbage contents stay mapped until some unrelated collection, and V8's own
    // heap finds no room to grow when the address space runs short: a fatal out-of-memory abort.
    napi_status st = napi_create_external_buffer(
        env_, owned->size(), owned->empty() ? nullptr : &(*owned)[0],
        [](napi_env env, void*, void* hint) {
          auto* held = static_cast<std::string*>(hint);
          int64_t ignored = 0;
          napi_adjust_external_memory(env, -static_cast<int64_t>(held->size()), &ignored);
          delete held;
        },
        owned, &v);
    if (st == napi_ok) {
      int64_t ignored = 0;
      napi_adjust_external_memory(env_, static_cast<int64_t>(owned->size()), &ignored);
    }
    if (st == static_cast<napi_status>(kNoExternalBuffers)) {
      // A runtime that forbids external buffers (a V8 sandbox): copy instead.
      napi_value copy = buffer_copy(owned->data(), owned->size());
      delete owned;
      return copy;
    }
    if (st != napi_ok) {
      buffer_failed_ = owned->size();
      delete owned;
    }
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
  // A Float64Array of n zeroed slots; `*data` points at them, or is null once anything failed.
  napi_value float64array(std::size_t n, double** data) {
    *data = nullptr;
    napi_value buffer = nullptr, v = nullptr;
    void* bytes = nullptr;
    napi_status st =
        ok_ ? napi_create_arraybuffer(env_, n * sizeof(double), &bytes, &buffer) : napi_ok;
    keep(st, buffer);
    st = ok_ ? napi_create_typedarray(env_, napi_float64_array, n, buffer, 0, &v) : napi_ok;
    keep(st, v);
    if (ok_) *data = static_cast<double*>(bytes);
    return ok_ ? v : nullptr;
  }
  void set(napi_value object, const char* key, napi_value v) {
    if (ok_ && object && v) keep(napi_set_named_property(env_, object, key, v), object);
  }
  void set(napi_value array, std::uint32_t i, napi_value v) {
    if (ok_ && array && v) keep(napi_set_element(env_, array, i, v), array);
  }

 private:
  // Copies above this size go through JavaScript's allocator (buffer_copy).
  static constexpr std::size_t kSmallCopy = std::size_t{1} << 20;

  napi_value buffer_copy_large(const char* data, std::size_t n);
  napi_value keep(napi_status st, napi_value v) {
    if (st != napi_ok || (ok_ && v == nullptr)) ok_ = false;
    return ok_ ? v : nullptr;
  }
  napi_env env_;
  bool ok_ = true;
  std::size_t buffer_failed_ = 0;  // bytes of the Buffer that could not be made (0: none failed)
};

// Settles `deferred` with `value` unless anything failed on the way; then, or if settling itself
// fails, leaves the promise pending and takes back any exception a failed call left, so nothing
// is thrown into an environment that is shutting down.
void settle(Out& out, napi_deferred deferred, bool resolve, napi_value value);

// Node's error shape (code, errno, syscall, path) plus the refusal kind and its description.
napi_value error_to_js(Out& out, const Error& e);

// After an answer that failed for want of a Buffer (out.buffer_failed()): rejects `deferred` with
// ENOMEM, through a fresh Out (the failed one drops every call), and takes back any exception the
// failure left. A stopping environment refuses this too, and the promise then stays pending.
void rejected_for_memory(const Out& failed, napi_deferred deferred);

// A stat answers as one Float64Array, not an object: twenty named properties and eleven BigInts
// made through Node-API cost more of the JavaScript thread than the statx itself. The slots, in
// order (clang-format would pack the lists):
// clang-format off
//  - the number form, each as the double Node's own Stats carries (64-bit values rounded to the
//    nearest double, as Node rounds them); `type` is the FileType's index, birthtimeMs -1 for none;
#define PINNEDFS_STAT_NUMBERS(X) \
  X(type) X(dev) X(ino) X(mode) X(nlink) X(uid) X(gid) X(rdev) X(size) X(blksize) X(blocks) \
  X(atimeMs) X(mtimeMs) X(ctimeMs) X(birthtimeMs)
//  - then the exact 64-bit quantities, each slot's eight bytes an unsigned integer (a BigUint64Array
//    over the same buffer reads them);
#define PINNEDFS_STAT_EXACT(X) X(dev) X(ino) X(nlink) X(rdev) X(size) X(blksize) X(blocks)
//  - then the times in whole nanoseconds, each a signed integer (a BigInt64Array reads them).
#define PINNEDFS_STAT_NANOS(X) X(atimeNs) X(mtimeNs) X(ctimeNs) X(birthtimeNs)
// clang-format on
#define PINNEDFS_COUNT(name) +1
constexpr std::size_t kStatNumbers = 0 PINNEDFS_STAT_NUMBERS(PINNEDFS_COUNT);
constexpr std::size_t kStatExact = 0 PINNEDFS_STAT_EXACT(PINNEDFS_COUNT);
constexpr std::size_t kStatNanos = 0 PINNEDFS_STAT_NANOS(PINNEDFS_COUNT);
#undef PINNEDFS_COUNT
constexpr std::size_t kStatSlots = kStatNumbers + kStatExact + kStatNanos;

// The record's slots for `s`, as above.
void stat_record(const StatInfo& s, double* slots);

// Contents up to this size are copied into a fresh Buffer; larger ones are handed over.
constexpr std::size_t kCopyThreshold = 64 * 1024;

// A Value as JavaScript sees it. Large contents move into their Buffer: `v` is spent.
napi_value value_to_js(Out& out, pinnedfs::Value& v);

}  // namespace binding
}  // namespace pinnedfs
