/*
 * The seccomp filter both test helpers install (seccomp_exec, for a whole child from its start;
 * seccomp_block, inside a running process): openat2(2) answered with one errno, everything else
 * allowed. A classic-BPF program, so no libseccomp is needed.
 */
#ifndef PINNEDFS_TEST_OPENAT2_FILTER_H
#define PINNEDFS_TEST_OPENAT2_FILTER_H

#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>

#define OPENAT2_NR 437 /* the same number on every architecture */

#if defined(__x86_64__)
#define OPENAT2_FILTER_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define OPENAT2_FILTER_ARCH AUDIT_ARCH_AARCH64
#else
#error "add this architecture's AUDIT_ARCH_* value"
#endif

/*
 * The errnos a test may ask for: ENOSYS (Podman, runc: a syscall the profile does not know), EPERM
 * (Docker's default action, systemd-nspawn), EAGAIN (a lookup that kept racing a rename or mount,
 * as the kernel answers it), EXDEV (a lookup that left the root). -1 for any other name.
 */
static inline int openat2_filter_errno(const char* name) {
  if (strcmp(name, "ENOSYS") == 0) return ENOSYS;
  if (strcmp(name, "EPERM") == 0) return EPERM;
  if (strcmp(name, "EAGAIN") == 0) return EAGAIN;
  if (strcmp(name, "EXDEV") == 0) return EXDEV;
  return -1;
}

struct openat2_filter {
  struct sock_filter code[7];
  struct sock_fprog prog;
};

static inline void openat2_filter_init(struct openat2_filter* f, unsigned errno_value) {
  struct sock_filter code[7] = {
      /* A syscall made through another ABI (e.g. 32-bit) has other numbers: leave it alone. */
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OPENAT2_FILTER_ARCH, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, OPENAT2_NR, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (errno_value & SECCOMP_RET_DATA)),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  memcpy(f->code, code, sizeof code);
  f->prog.len = (unsigned short)(sizeof f->code / sizeof f->code[0]);
  f->prog.filter = f->code;
}

#endif
