#include "dir_reader.h"

#include <cerrno>
#include <cstring>

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#else
#include <fcntl.h>
#include <unistd.h>
#endif

namespace pinnedfs {

namespace {

bool dot_or_dotdot(const char* n) { return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0)); }

#if defined(__linux__)
constexpr std::size_t kBufferSize = 32 * 1024;

// The kernel's record layout for getdents64 (glibc exposes no type for it before 2.30).
struct Dirent64 {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};
#endif
}  // namespace

#if defined(__linux__)
DirectoryReader::DirectoryReader(int fd, std::vector<char>& buffer) : fd_(fd), buffer_(buffer) {
  if (buffer_.size() < kBufferSize) buffer_.resize(kBufferSize);
}
#else
DirectoryReader::DirectoryReader(int fd, std::vector<char>&) : fd_(fd) {}
#endif

DirectoryReader::~DirectoryReader() {
#if !defined(__linux__)
  if (dir_) ::closedir(dir_);
#endif
}

bool DirectoryReader::next(std::string_view* name, unsigned char* type) {
#if defined(__linux__)
  for (;;) {
    while (pos_ < len_) {
      const auto* d = reinterpret_cast<const Dirent64*>(buffer_.data() + pos_);
      pos_ += d->d_reclen;
      if (dot_or_dotdot(d->d_name)) continue;
      *name = std::string_view(d->d_name);
      *type = d->d_type;
      return true;
    }
    if (done_) return false;
    long n;
    do n = ::syscall(SYS_getdents64, fd_, buffer_.data(), buffer_.size());
    while (n < 0 && errno == EINTR);
    if (n < 0) {
      error_ = errno;
      done_ = true;
      return false;
    }
    if (n == 0) {
      done_ = true;
      return false;
    }
    pos_ = 0;
    len_ = static_cast<std::size_t>(n);
  }
#else
  if (done_) return false;
  if (!dir_) {
    // fdopendir takes the descriptor; give it a duplicate so the caller's stays the caller's.
    int dup = ::fcntl(fd_, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) {
      error_ = errno;
      done_ = true;
      return false;
    }
    dir_ = ::fdopendir(dup);
    if (!dir_) {
      error_ = errno;
      ::close(dup);
      done_ = true;
      return false;
    }
  }
  for (;;) {
    errno = 0;
    struct dirent* d = ::readdir(dir_);
    if (!d) {
      error_ = errno;
      done_ = true;
      return false;
    }
    if (dot_or_dotdot(d->d_name)) continue;
    *name = std::string_view(d->d_name);
    *type = d->d_type;
    return true;
  }
#endif
}

}  // namespace pinnedfs
