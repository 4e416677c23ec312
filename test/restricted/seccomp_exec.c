/*
 * seccomp_exec ENOSYS|EPERM command [args...]
 *
 * Runs `command` under a classic-BPF seccomp filter that answers openat2(2) with the given errno,
 * as container runtimes do for syscalls their profile does not know (Podman and runc: ENOSYS;
 * Docker's default action and systemd-nspawn: EPERM). Everything else is allowed. The filter is
 * inherited by every child and kept across execve, so a whole test run sees a kernel without
 * openat2. Sets no_new_privs first, which lets an unprivileged caller install the filter too.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

#ifndef SYS_openat2_NR
#define SYS_openat2_NR 437 /* the same number on every architecture */
#endif

#if defined(__x86_64__)
#define THIS_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define THIS_ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH_* value"
#endif

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: seccomp_exec ENOSYS|EPERM command [args...]\n");
    return 2;
  }
  unsigned errno_value;
  if (strcmp(argv[1], "ENOSYS") == 0) errno_value = ENOSYS;
  else if (strcmp(argv[1], "EPERM") == 0) errno_value = EPERM;
  else {
    fprintf(stderr, "seccomp_exec: errno must be ENOSYS or EPERM, not %s\n", argv[1]);
    return 2;
  }
  struct sock_filter filter[] = {
      /* A syscall made through another ABI (e.g. 32-bit) has other numbers: leave it alone. */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, THIS_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat2_NR, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (errno_value & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog prog = {.len = (unsigned short)(sizeof filter / sizeof filter[0]), .filter = filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("seccomp_exec: PR_SET_NO_NEW_PRIVS");
    return 1;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
    perror("seccomp_exec: PR_SET_SECCOMP");
    return 1;
  }
  execvp(argv[2], argv + 2);
  fprintf(stderr, "seccomp_exec: exec %s: %s\n", argv[2], strerror(errno));
  return 127;
}
