// pinnedfs-launch: what runs inside the sandbox between bubblewrap and the command.
//
//   pinnedfs-launch STATUS KEEP [--no-unix-sockets] -- COMMAND [ARG...]
//
// 1. Closes every descriptor from KEEP up except STATUS (see close_inherited.h), and checks that
//    none is left. The command then has 0, 1, 2 and the descriptors below KEEP its caller passed
//    on purpose, and nothing the caller of pinnedfs or bubblewrap happened to leave open. With
//    --no-unix-sockets, it also makes new Unix sockets fail for the command and all it starts (see
//    no_unix_sockets.h); a system where that cannot be done is a launch that cannot be confined.
// 2. Writes 'R' on STATUS (a socket to the supervisor) and waits for one byte. The supervisor
//    checks the finished sandbox from outside in that pause and answers 'G'; anything else, or the
//    supervisor gone (end of file), exits 125 and the command never runs. STATUS is close-on-exec
//    from here on, so the supervisor reads end of file once the command is running.
// 3. Executes COMMAND, found on the sandbox's PATH. When that fails, it writes 'E' and the errno
//    on STATUS and exits as shells do: 127 when there is no such command, 126 when it cannot be
//    executed. 125 is left to the supervisor's "cannot confine".
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "launcher/close_inherited.h"
#include "launcher/no_unix_sockets.h"

namespace {

constexpr int kCannotConfine = 125;
constexpr int kNotExecutable = 126;
constexpr int kNotFound = 127;

void say(const char* a, const char* b = "", const char* c = "") {
  const char* const parts[] = {"pinnedfs: ", a, b, c, "\n"};
  for (const char* part : parts) {
    size_t left = std::strlen(part);
    while (left > 0) {
      const ssize_t n = ::write(2, part, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return;
      part += n;
      left -= static_cast<size_t>(n);
    }
  }
}

// A descriptor number written in decimal, nothing else.
bool parse_fd(const char* text, int* out) {
  if (text == nullptr || *text < '0' || *text > '9') return false;
  char* end = nullptr;
  errno = 0;
  const long v = std::strtol(text, &end, 10);
  if (errno != 0 || *end != '\0' || v < 0 || v > 1 << 30) return false;
  *out = static_cast<int>(v);
  return true;
}

bool send(int fd, const void* data, size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

char receive(int fd) {
  char b = 0;
  for (;;) {
    const ssize_t n = ::read(fd, &b, 1);
    if (n < 0 && errno == EINTR) continue;
    return n == 1 ? b : 0;
  }
}

}  // namespace

int main(int argc, char** argv) {
  int status = -1;
  int keep = -1;
  int at = 3;
  bool no_unix_sockets = false;
  if (argc > at && std::strcmp(argv[at], "--no-unix-sockets") == 0) {
    no_unix_sockets = true;
    ++at;
  }
  if (argc < at + 2 || !parse_fd(argv[1], &status) || !parse_fd(argv[2], &keep) ||
      std::strcmp(argv[at], "--") != 0 || status < keep || keep < 3) {
    say("usage: pinnedfs-launch STATUS KEEP [--no-unix-sockets] -- COMMAND [ARG...] "
        "(KEEP >= 3, STATUS >= KEEP)");
    return kCannotConfine;
  }
  if (::fcntl(status, F_GETFD) < 0) {
    say("the status descriptor is not open");
    return kCannotConfine;
  }
  const int closed = pinnedfs::launcher::close_inherited(keep, status);
  // Only a listing that shows nothing else open counts (1); one that cannot be taken (-1) is no
  // proof that the counted loop reached every descriptor.
  if (closed != 0 || pinnedfs::launcher::only_kept_open(keep, status) != 1) {
    say("inherited descriptors could not all be closed: ", std::strerror(closed ? closed : EBADF));
    return kCannotConfine;
  }
  if (no_unix_sockets) {
    const int refused = pinnedfs::launcher::refuse_unix_sockets();
    if (refused != 0) {
      say("new Unix sockets cannot be refused here (seccomp): ", std::strerror(refused));
      return kCannotConfine;
    }
  }
  if (::fcntl(status, F_SETFD, FD_CLOEXEC) != 0 || !send(status, "R", 1) ||
      receive(status) != 'G') {
    return kCannotConfine;
  }
  char* const* command = argv + at + 1;
  ::execvp(command[0], command);
  const int error = errno;
  char report[1 + sizeof error];
  report[0] = 'E';
  std::memcpy(report + 1, &error, sizeof error);
  (void)send(status, report, sizeof report);
  const bool missing = error == ENOENT || error == ENOTDIR;
  if (missing && std::strchr(command[0], '/') == nullptr) {
    say(command[0], ": command not found");
  } else {
    say(command[0], ": ", std::strerror(error));
  }
  return missing ? kNotFound : kNotExecutable;
}
