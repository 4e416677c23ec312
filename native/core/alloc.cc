// room_for (alloc.h): the address space an RLIMIT_AS leaves, from the process's size now.
#include "alloc.h"

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "../platform/platform.h"
#include "eintr.h"

namespace pinnedfs {

namespace {
// The process's virtual size in bytes (/proc/self/statm's first field), or 0 where it cannot be
// read (no procfs, macOS, out of descriptors).
std::uint64_t virtual_size() {
#if defined(__linux__)
  int fd = retry_eintr([] { return ::open("/proc/self/statm", O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return 0;
  char text[128];
  ssize_t n = retry_eintr([&] { return ::read(fd, text, sizeof text - 1); });
  ::close(fd);
  if (n <= 0) return 0;
  text[n] = '\0';
  unsigned long long pages = std::strtoull(text, nullptr, 10);
  long page = ::sysconf(_SC_PAGESIZE);
  return page > 0 ? static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page) : 0;
#else
  return 0;
#endif
}
}  // namespace

bool room_for(std::size_t bytes) noexcept {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_AS, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY) return true;
  std::uint64_t limit = static_cast<std::uint64_t>(rl.rlim_cur);
  std::uint64_t size = virtual_size();
  if (size == 0) return true;
  std::uint64_t left = limit / 4 < kRoomLeft ? limit / 4 : kRoomLeft;
  return size + bytes + left <= limit;
}

void advise_large_buffer(void* p, std::size_t n) noexcept {
  platform::advise_huge_pages(p, n);
}

}  // namespace pinnedfs
