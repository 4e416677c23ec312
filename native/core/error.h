// Errors as data. The core never throws: every fallible function returns a Result, and the N-API
// glue turns an Error into Node's error shape (code, errno, syscall, path) plus our refusal kind.
// The mapping to Effect's reason tags lives in one TypeScript function (src/internal/errors.ts).
#pragma once
#include <cerrno>
#include <string>
#include <utility>
#include <variant>

namespace pinnedfs {

// Why we refused, when the refusal is ours rather than the kernel's: the enum and the name the
// binding sends to JavaScript come from this one list.
// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_REFUSALS(X)                                                                      \
  X(None, "")                 /* a plain errno from a syscall */                                  \
  X(Symlink, "symlink")       /* a symbolic link met where none may be followed -> PermissionDenied */ \
  X(Escape, "escape")         /* the path leaves the root (moved out, mount) -> PermissionDenied */ \
  X(HardLink, "hardlink")     /* a non-directory with more than one link      -> PermissionDenied */ \
  X(NotRegular, "notregular") /* a FIFO, socket or device                     -> BadResource */    \
  X(BadArgument, "badargument") /* malformed input, caught before any syscall -> BadArgument */    \
  X(IdentityChanged, "identity") /* the root path no longer names the pinned handle -> Busy */     \
  X(TooLarge, "toolarge")     /* an answer or payload over a configured limit -> BadArgument */    \
  X(WriteZero, "writezero")   /* write(2) accepted no byte of a non-empty buffer -> WriteZero */ \
  X(Changed, "changed")       /* a compare-and-swap found the file changed   -> Busy */
// clang-format on

enum class Refusal : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text) name,
  PINNEDFS_REFUSALS(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
};

struct Error {
  int err = 0;               // errno, or 0 for a refusal with no errno behind it
  const char* syscall = "";  // static string: the call that failed, or the check that refused
  std::string path;          // root-relative path the error concerns
  Refusal refusal = Refusal::None;
  std::string description;  // human text for refusals; empty for plain errno errors
  bool mount = false;       // an Escape refusal because a mount point stood in the way
  bool moved = false;       // a held handle failed its proof: it is no longer at its path
};

inline Error sys_error(int err, const char* syscall, std::string path = {}) {
  return Error{err, syscall, std::move(path), Refusal::None, {}};
}

inline Error refusal(Refusal kind, const char* syscall, std::string path, std::string description,
                     int err = 0) {
  return Error{err, syscall, std::move(path), kind, std::move(description)};
}

// A symbolic link met where none may be followed. `component` names the link when it is known;
// empty, the kernel only said that one lay somewhere on the path. ELOOP, as O_NOFOLLOW answers.
inline Error symlink_refusal(const char* syscall, std::string path, const std::string& component) {
  return refusal(Refusal::Symlink, syscall, std::move(path),
                 component.empty() ? std::string("path contains a symbolic link")
                                   : "path component '" + component + "' is a symbolic link",
                 ELOOP);
}

inline Error bad_argument(std::string description, std::string path = {}) {
  return Error{EINVAL, "validate", std::move(path), Refusal::BadArgument, std::move(description)};
}

// A value or an Error. Deliberately tiny: the core needs no more than this.
template <class T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }
  T& value() { return std::get<0>(v_); }
  const T& value() const { return std::get<0>(v_); }
  T&& take() { return std::move(std::get<0>(v_)); }
  Error& error() { return std::get<1>(v_); }
  const Error& error() const { return std::get<1>(v_); }
  Error&& take_error() { return std::move(std::get<1>(v_)); }

 private:
  std::variant<T, Error> v_;
};

struct Unit {};
using Status = Result<Unit>;
inline Status ok_status() {
  return Status(Unit{});
}

// Name of an errno value ("ENOENT"), as libuv's uv_err_name would give it.
const char* errno_name(int err);

}  // namespace pinnedfs
