// Marshal-in: JavaScript values into core Requests and arguments. Every accessor type-checks
// first: a wrong type is a BadArgument problem, never a pending exception or a crash.
#pragma once
#include <napi.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "core/limits.h"
#include "core/request.h"
#include "core/root.h"

namespace pinnedfs {
namespace binding {

// The op code readMany() carries for a member the caller already refused: it is not run. Exported
// to JavaScript as `refusedMember`, so the two sides cannot disagree.
constexpr uint8_t kRefusedMember = 255;

// What one call may copy out of JavaScript (core/limits.h). A string is measured before it is
// copied, so one huge string, or one string referenced from a million array slots, is refused
// instead of copied until an allocation fails.
struct Budget {
  std::size_t text = kMaxRequestText;
  std::size_t data = kMaxRequestData;
  // Bytes of a copy the system refused (0: none): the call is rejected with ENOMEM (no_memory()),
  // not as malformed.
  std::size_t refused = 0;
  Error no_memory() const;
};

// An object's operands, read one by one by name; the first problem met is the one reported.
struct Reader {
  Napi::Object obj;
  Budget* budget;
  std::string problem;  // first marshalling problem met, if any

  Napi::Value get(const char* key);
  bool has(const char* key);
  void fail(const std::string& why);
  std::string str(const char* key, bool required);
  bool boolean(const char* key);
  // An integer within [lo, hi]; `present` says whether it was given.
  int64_t integer(const char* key, int64_t lo, int64_t hi, bool* present);
  std::vector<std::string> strings(const char* key);
};

// Member `i` of `a`; a getter that throws is `what`'s problem, and undefined.
Napi::Value element(Napi::Array a, uint32_t i, const char* what, std::string* problem);

// An array's length, read once: everything checked, sized or bounded by it uses this one figure.
// A second read may disagree. A member's getter can grow or shrink the array, so a bound checked on
// one read did not bound the next. And worker.terminate(), on the parent's thread, marks this
// environment as stopping at any instant, even between two statements here; every read after that
// fails, and node-addon-api's Length() reports the failure as 0. batch() sized its requests by one
// read and its problems by the next, then walked both by the first: an empty vector was indexed
// and the process died (SIGSEGV). False when the length cannot be read.
bool length_of(Napi::Array a, uint32_t* n);

// `v`'s UTF-8 bytes into `out`, charged to `*left`; false (nothing copied) when they do not fit, or
// when the memory for them cannot be had (then `*refused`, when given, is their size).
bool utf8_within(Napi::Value v, std::size_t* left, std::string* out,
                 std::size_t* refused = nullptr);

// Why `what` was refused: more than one call may carry.
std::string over_budget(const char* what);

// A request object ({ op, path, ...operands }) into `*r`; false with `*problem` set when malformed.
bool read_request(Napi::Value value, Request* r, std::string* problem, Budget* budget);

// A path-only read (exists, stat, readFile, readDirectory, readLink, realPath, resolve) from its op
// code and path: what call() and readMany() carry instead of a request object.
bool read_path_only(int op, Napi::Value path, bool recursive, Request* r, std::string* problem,
                    Budget* budget);

// The verifyRoot argument: `true` checks the root path's identity in the worker before the work
// runs; a string checks the root path and that second spelling of the root (the extension's
// logicalRoot). Anything else checks nothing.
bool read_verify(Napi::Value v, std::string* alias);

// An optional read limit argument: undefined leaves `*out` alone (0, the ceiling); otherwise an
// integer in [1, kMaxContentBytes].
bool byte_limit(Napi::Value v, std::uint64_t* out);

// pin()'s strategy: undefined, "auto", "openat2" (or "kernel") or "walk"; `*ok` false otherwise.
Strategy parse_strategy(Napi::Value v, bool* ok);

}  // namespace binding
}  // namespace pinnedfs
