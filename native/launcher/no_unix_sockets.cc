#include "launcher/no_unix_sockets.h"

#include <cerrno>

#if defined(__linux__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>

#include <cstddef>
#endif

namespace pinnedfs::launcher {

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))

namespace {

#if defined(__x86_64__)
constexpr unsigned kArch = AUDIT_ARCH_X86_64;
// x32 system calls reach the same kernel entry points with this bit set in the number.
constexpr unsigned kForeignBit = 0x40000000U;
#else
constexpr unsigned kArch = AUDIT_ARCH_AARCH64;
constexpr unsigned kForeignBit = 0;
#endif

#ifndef __NR_io_uring_setup
#define __NR_io_uring_setup 425
#endif

constexpr unsigned kErrno(int e) {
  return SECCOMP_RET_ERRNO | (static_cast<unsigned>(e) & SECCOMP_RET_DATA);
}

}  // namespace

int refuse_unix_sockets() {
  constexpr unsigned kArchAt = offsetof(struct seccomp_data, arch);
  constexpr unsigned kNrAt = offsetof(struct seccomp_data, nr);
  // The low 32 bits of the first argument (little endian): the kernel reads the family as an int.
  constexpr unsigned kFamilyAt = offsetof(struct seccomp_data, args);
  struct sock_filter program[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kArchAt),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kArch, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, kErrno(ENOSYS)),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kNrAt),
      // Another ABI's numbers (x32): refused whole. On aarch64 the bit is 0 and nothing matches.
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, kForeignBit, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrno(ENOSYS)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_io_uring_setup, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrno(ENOSYS)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_socket, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, kFamilyAt),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AF_UNIX, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, kErrno(EPERM)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog filter = {static_cast<unsigned short>(sizeof program / sizeof program[0]),
                              program};
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return errno;
  if (::prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter) != 0) return errno;
  return 0;
}

#else

int refuse_unix_sockets() {
  return ENOSYS;
}

#endif

}  // namespace pinnedfs::launcher
