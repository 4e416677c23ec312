// The one way the core restarts a system call a signal interrupted. A call that fails reports -1
// (or a null pointer) with errno set; only EINTR is retried, without limit, and errno is left as
// the last attempt set it so the caller reads the real failure. close(2) must never come through
// here: on Linux the descriptor is released even when it reports EINTR (see Fd::reset).
#pragma once
#include <cerrno>
#include <type_traits>

namespace pinnedfs {

template <typename Call>
auto retry_eintr(Call call) -> decltype(call()) {
  for (;;) {
    auto result = call();
    bool failed;
    if constexpr (std::is_pointer_v<decltype(result)>) {
      failed = result == nullptr;
    } else {
      failed = result < 0;
    }
    if (!failed || errno != EINTR) return result;
  }
}

}  // namespace pinnedfs
