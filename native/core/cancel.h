// Cancellation of one operation between its acts (a caller's AbortSignal, set from JavaScript).
//
// The flag is an atomic the binding shares with the JavaScript side's cancel function; the worker
// running the operation installs it for the duration of the call (CancelScope), and the long loops
// (a listing's batches, a recursive remove's unlinks, a replacement before it is published) ask
// cancelled() between acts. A thread-local pointer rather than a Request field threaded through
// every helper: the acts that check it sit several calls below the request, in code shared by
// operations that cannot be cancelled (for them the pointer is null and the check is one load).
#pragma once
#include <atomic>
#include <cerrno>
#include <string>

#include "error.h"

namespace pinnedfs {

namespace cancel_detail {
inline thread_local const std::atomic<bool>* current = nullptr;
}  // namespace cancel_detail

// Installs `flag` (may be null) as this thread's cancellation for the scope's lifetime.
class CancelScope {
 public:
  explicit CancelScope(const std::atomic<bool>* flag) : saved_(cancel_detail::current) {
    cancel_detail::current = flag;
  }
  ~CancelScope() { cancel_detail::current = saved_; }
  CancelScope(const CancelScope&) = delete;
  CancelScope& operator=(const CancelScope&) = delete;

 private:
  const std::atomic<bool>* saved_;
};

// Whether the operation running on this thread has been asked to stop.
inline bool cancelled() {
  const std::atomic<bool>* flag = cancel_detail::current;
  return flag != nullptr && flag->load(std::memory_order_acquire);
}

// The error an operation stopped by its caller answers: ECANCELED, which the TypeScript layer turns
// into an AbortError.
inline Error cancelled_error(const char* syscall, const std::string& shown) {
  Error e = sys_error(ECANCELED, syscall, shown);
  e.description = "the operation was aborted";
  return e;
}

}  // namespace pinnedfs
