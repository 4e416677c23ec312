// The syscall floor: the same system calls a pinned read or stat needs, in a tight C++ loop with no
// JavaScript, no thread hop and no marshalling. What the hardware and kernel allow; the benchmark
// reports every contender against it.
//
//   pinnedfs_floor <root> <relative-path> <read|stat|walkread> <iterations>
// prints: {"op":"read","iterations":N,"nsPerOp":X,"syscallsPerOp":K}
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

namespace {
struct how_t {
  std::uint64_t flags, mode, resolve;
};

int open2(int dirfd, const char* path, int flags) {
  how_t how{static_cast<std::uint64_t>(flags | O_CLOEXEC | O_NOFOLLOW), 0, 0x08 | 0x04 | 0x02};
  return static_cast<int>(::syscall(SYS_openat2, dirfd, path, &how, sizeof how));
}

// The portable walk's floor: one O_PATH|O_DIRECTORY|O_NOFOLLOW open and one close per level.
int walk_open(int root, const std::string& rel, int flags) {
  int cur = root;
  std::size_t start = 0;
  for (;;) {
    std::size_t slash = rel.find('/', start);
    std::string part =
        rel.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
    if (slash == std::string::npos) {
      int fd = ::openat(cur, part.c_str(), flags | O_NOFOLLOW | O_CLOEXEC);
      if (cur != root) ::close(cur);
      return fd;
    }
    int next = ::openat(cur, part.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (cur != root) ::close(cur);
    if (next < 0) return -1;
    cur = next;
    start = slash + 1;
  }
}
}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s <root> <relative-path> <read|stat|walkread> <iterations>\n",
                 argv[0]);
    return 2;
  }
  int root = ::open(argv[1], O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (root < 0) {
    std::perror("open root");
    return 1;
  }
  std::string rel = argv[2];
  std::string op = argv[3];
  long n = std::atol(argv[4]);
  std::vector<char> buf(1 << 20);
  std::size_t depth = 1;
  for (char c : rel) depth += c == '/';
  auto t0 = std::chrono::steady_clock::now();
  for (long i = 0; i < n; ++i) {
    if (op == "stat") {
      int fd = open2(root, rel.c_str(), O_PATH);
      struct stat st;
      if (fd < 0 || ::fstat(fd, &st) != 0) {
        std::perror("stat");
        return 1;
      }
      ::close(fd);
    } else {
      int fd = op == "walkread" ? walk_open(root, rel, O_RDONLY | O_NONBLOCK)
                                : open2(root, rel.c_str(), O_RDONLY | O_NONBLOCK);
      struct stat st;
      if (fd < 0 || ::fstat(fd, &st) != 0) {
        std::perror("read open");
        return 1;
      }
      // One read of size+1 sees the whole file and its end.
      ssize_t got = ::read(fd, buf.data(), static_cast<std::size_t>(st.st_size) + 1);
      if (got != st.st_size) {
        std::fprintf(stderr, "short read\n");
        return 1;
      }
      ::close(fd);
    }
  }
  auto t1 = std::chrono::steady_clock::now();
  double ns = std::chrono::duration<double, std::nano>(t1 - t0).count() / static_cast<double>(n);
  long syscalls = op == "stat" ? 3 : op == "walkread" ? static_cast<long>(2 * depth + 2) : 4;
  std::printf("{\"op\":\"%s\",\"iterations\":%ld,\"nsPerOp\":%.1f,\"syscallsPerOp\":%ld}\n",
              op.c_str(), n, ns, syscalls);
  return 0;
}
