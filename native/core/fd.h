// An owned file descriptor. Every descriptor the core opens lives in one of these, so an early
// return on any error path closes it; nothing else in the core calls close(2).
#pragma once
#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace pinnedfs {

// Directory handle flags for the walk and for parents: O_PATH where the platform has it (no read
// permission needed, no device open side effects), else a plain read-only directory open.
#if defined(O_PATH)
constexpr int kDirHandleFlags = O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_PATH | O_NOFOLLOW | O_CLOEXEC;
#elif defined(O_SEARCH) && defined(__APPLE__)
constexpr int kDirHandleFlags = O_SEARCH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
#else
constexpr int kDirHandleFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC;
constexpr int kObjectHandleFlags = O_RDONLY | O_NONBLOCK | O_NOFOLLOW | O_CLOEXEC;
#endif

class Fd {
 public:
  Fd() = default;
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  Fd(Fd&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}
  Fd& operator=(Fd&& other) noexcept {
    if (this != &other) {
      reset();
      fd_ = std::exchange(other.fd_, -1);
    }
    return *this;
  }
  ~Fd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  // close(2) is not retried on EINTR: on Linux the descriptor is gone either way, and a retry could
  // close a number another thread has just been given.
  void reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }

 private:
  int fd_ = -1;
};

// A directory handle that is either owned or borrowed from the pinned root (so a root-level
// operation costs no dup/close pair).
class DirRef {
 public:
  DirRef() = default;
  static DirRef borrow(int fd) {
    DirRef d;
    d.fd_ = fd;
    return d;
  }
  static DirRef own(Fd fd) {
    DirRef d;
    d.fd_ = fd.get();
    d.owned_ = std::move(fd);
    return d;
  }
  int get() const { return fd_; }
  bool owned() const { return owned_.valid(); }

 private:
  int fd_ = -1;
  Fd owned_;
};

}  // namespace pinnedfs
