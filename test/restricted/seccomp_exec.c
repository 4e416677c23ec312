/*
 * seccomp_exec ENOSYS|EPERM|EAGAIN|EXDEV command [args...]
 *
 * Runs `command` under a seccomp filter that answers openat2(2) with the given errno, as container
 * runtimes do for syscalls their profile does not know (Podman and runc: ENOSYS; Docker's default
 * action and systemd-nspawn: EPERM). Everything else is allowed. The filter is inherited by every
 * child and kept across execve, so a whole test run sees a kernel without openat2. Sets
 * no_new_privs first, which lets an unprivileged caller install the filter too.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "openat2_filter.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: seccomp_exec ENOSYS|EPERM|EAGAIN|EXDEV command [args...]\n");
    return 2;
  }
  int errno_value = openat2_filter_errno(argv[1]);
  if (errno_value < 0) {
    fprintf(stderr, "seccomp_exec: errno must be ENOSYS, EPERM, EAGAIN or EXDEV, not %s\n",
            argv[1]);
    return 2;
  }
  struct openat2_filter filter;
  openat2_filter_init(&filter, (unsigned)errno_value);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
    perror("seccomp_exec: PR_SET_NO_NEW_PRIVS");
    return 1;
  }
  if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &filter.prog) != 0) {
    perror("seccomp_exec: PR_SET_SECCOMP");
    return 1;
  }
  execvp(argv[2], argv + 2);
  fprintf(stderr, "seccomp_exec: exec %s: %s\n", argv[2], strerror(errno));
  return 127;
}
