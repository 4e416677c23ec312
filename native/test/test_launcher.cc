// The sandbox launcher (native/launcher): its descriptor closing by each method, in a forked child
// so the test binary's own descriptors are untouched, and the executable's protocol and statuses.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include "harness.h"
#include "launcher/close_inherited.h"
#include "launcher/no_unix_sockets.h"

using pinnedfs::launcher::close_inherited;
using pinnedfs::launcher::Method;

namespace {

bool is_open(int fd) {
  return ::fcntl(fd, F_GETFD) >= 0;
}

// Runs `body` in a child and answers its exit status (-1 when it did not exit).
template <typename Body>
int in_child(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  if (pid < 0 || ::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
  return WEXITSTATUS(status);
}

// Descriptors at 10, 11, 40 and 700 (none close-on-exec), then close from 11 up keeping 40: answers
// a bit per descriptor left as it should be not (0: all as expected).
int close_and_report(Method method) {
  // Bounds the counted fallback (and keeps the numbers below the soft limit).
  struct rlimit small {
    1024, 1024
  };
  if (::setrlimit(RLIMIT_NOFILE, &small) != 0) {
    // Valgrind refuses to change the limit; the one it gives (a little under the machine's)
    // bounds the counted fallback as well, if the descriptors below fit under it.
    struct rlimit now {};
    if (::getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur <= 700 || now.rlim_max > (1UL << 20))
      return 64;
  }
  const int source = ::open("/dev/null", O_RDONLY);
  for (int fd : {10, 11, 40, 700}) {
    if (::dup2(source, fd) != fd) return 65;
  }
  const int closed = close_inherited(11, 40, method);
  if (closed != 0) return 66;
  int wrong = 0;
  if (!is_open(10)) wrong |= 1;
  if (is_open(11)) wrong |= 2;
  if (!is_open(40)) wrong |= 4;
  if (is_open(700)) wrong |= 8;
  return wrong;
}

struct Launched {
  int status = -1;   // exit status, -1 when killed
  std::string said;  // what the launcher wrote on its status socket
};

// Starts the launcher with `status` at descriptor 5, keeping below 5, an extra descriptor at 4
// (kept: passed on purpose) and one at 9 (to be closed), and answers `go` once it is ready.
Launched launch(const char* command, const char* go) {
  int pair[2];
  Launched out;
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return out;
  const pid_t pid = ::fork();
  if (pid == 0) {
    // Out of the way first: dup2 onto the number a descriptor already has would keep it
    // close-on-exec (the socket pair is made so), and the launcher would find no status socket.
    const int status = ::fcntl(pair[1], F_DUPFD, 20);
    const int source = ::fcntl(::open("/dev/null", O_RDONLY), F_DUPFD, 20);
    if (status < 0 || source < 0) ::_exit(70);
    if (::dup2(status, 5) != 5 || ::dup2(source, 4) != 4 || ::dup2(source, 9) != 9) ::_exit(70);
    const char* argv[] = {PINNEDFS_LAUNCHER, "5", "5", "--", "/bin/sh", "-c", command, nullptr};
    ::execv(PINNEDFS_LAUNCHER, const_cast<char* const*>(argv));
    ::_exit(71);
  }
  ::close(pair[1]);
  char b = 0;
  if (::read(pair[0], &b, 1) == 1) {
    out.said.push_back(b);
    if (*go != '\0') (void)::write(pair[0], go, std::strlen(go));
    ::shutdown(pair[0], SHUT_WR);
    char rest[16];
    for (ssize_t n; (n = ::read(pair[0], rest, sizeof rest)) > 0;) out.said.append(rest, n);
  }
  ::close(pair[0]);
  int status = 0;
  if (::waitpid(pid, &status, 0) == pid && WIFEXITED(status)) out.status = WEXITSTATUS(status);
  return out;
}

}  // namespace

TEST(launcher_closes_every_inherited_descriptor_by_each_method) {
  for (Method m : {Method::best, Method::range, Method::listed, Method::counted}) {
    const int wrong = in_child([m] { return close_and_report(m); });
    if (m == Method::range && wrong == 66) continue;  // a kernel before 5.9: not there
    if (wrong != 0) std::fprintf(stderr, "  method %d: %d\n", static_cast<int>(m), wrong);
    CHECK(wrong == 0);
  }
}

TEST(launcher_runs_the_command_with_only_what_it_keeps) {
  // 4 was passed on purpose (below KEEP), 9 was not; 5 (the status socket) is close-on-exec.
  Launched r =
      launch("[ -e /dev/fd/4 ] && ! [ -e /dev/fd/9 ] && ! [ -e /dev/fd/5 ] && exit 7", "G");
  CHECK(r.said == "R");
  CHECK(r.status == 7);
}

TEST(launcher_without_the_go_ahead_runs_nothing_and_exits_125) {
  std::string dir = pinnedfs::test::scratch_dir();
  std::string marker = dir + "/ran";
  std::string command = "touch '" + marker + "'";
  Launched eof = launch(command.c_str(), "");
  CHECK(eof.said == "R");
  CHECK(eof.status == 125);
  Launched other = launch(command.c_str(), "x");
  CHECK(other.status == 125);
  struct stat st {};
  CHECK(::stat(marker.c_str(), &st) != 0);
}

TEST(launcher_exits_127_for_a_missing_command_and_126_for_one_it_cannot_execute) {
  std::string dir = pinnedfs::test::scratch_dir();
  pinnedfs::test::write_file(dir + "/plain", "#!/bin/sh\nexit 0\n");
  ::chmod((dir + "/plain").c_str(), 0644);
  int pair[2];
  CHECK(::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) == 0);
  auto run = [&](const char* command) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      const int status = ::fcntl(pair[1], F_DUPFD, 20);  // see launch(): never dup2 onto itself
      if (status < 0 || ::dup2(status, 3) != 3) ::_exit(70);
      const char* argv[] = {PINNEDFS_LAUNCHER, "3", "3", "--", command, nullptr};
      ::execv(PINNEDFS_LAUNCHER, const_cast<char* const*>(argv));
      ::_exit(71);
    }
    char b = 0;
    if (::read(pair[0], &b, 1) != 1 || b != 'R') return -2;
    (void)::write(pair[0], "G", 1);
    char report[1 + sizeof(int)] = {};
    if (::read(pair[0], report, sizeof report) != sizeof report || report[0] != 'E') return -3;
    int status = 0;
    if (::waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return -1;
    return WEXITSTATUS(status);
  };
  CHECK(run("pinnedfs-no-such-command") == 127);
  CHECK(run((dir + "/missing").c_str()) == 127);
  if (::geteuid() != 0) CHECK(run((dir + "/plain").c_str()) == 126);
  CHECK(run(dir.c_str()) == 126);  // a directory
  ::close(pair[0]);
  ::close(pair[1]);
}

TEST(launcher_refuses_bad_arguments_with_125) {
  for (const char* keep : {"2", "x", "", "99"}) {
    const int status = in_child([keep] {
      const char* argv[] = {PINNEDFS_LAUNCHER, "5", keep, "--", "/bin/true", nullptr};
      ::execv(PINNEDFS_LAUNCHER, const_cast<char* const*>(argv));
      return 71;
    });
    CHECK(status == 125);
  }
}

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
TEST(launcher_refuses_new_unix_sockets_and_keeps_the_rest) {
  const int wrong = in_child([] {
    if (pinnedfs::launcher::refuse_unix_sockets() != 0) return 64;
    int bits = 0;
    const int unix_socket = ::socket(AF_UNIX, SOCK_STREAM, 0);
    if (unix_socket >= 0 || errno != EPERM) bits |= 1;
    const int inet = ::socket(AF_INET, SOCK_STREAM, 0);
    if (inet < 0) bits |= 2;
    int pair[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM, 0, pair) != 0) bits |= 4;  // no path: reaches no one
    // And in what it executes: the filter is inherited and cannot be removed.
    const pid_t pid = ::fork();
    if (pid == 0) {
      const char* argv[] = {"/bin/sh", "-c", "exec 3<>/dev/null", nullptr};
      ::execv("/bin/sh", const_cast<char* const*>(argv));
      ::_exit(9);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) bits |= 8;
    if (::socket(AF_UNIX, SOCK_DGRAM, 0) >= 0) bits |= 16;
    return bits;
  });
  CHECK(wrong == 0);
}
#endif
