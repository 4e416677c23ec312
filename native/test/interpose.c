/*
 * The syscall-point attacker: acts at one exact system call of the code under test, so a race that
 * depends on where a rename or a kill lands is reproduced every time instead of hoped for.
 *
 * Two builds of this one file:
 *  - the vitest suites build it as a shared library (cc -shared) and load it into a child Node with
 *    LD_PRELOAD: the addon's calls to the functions below then come here first;
 *  - the native test binary compiles it in (native/test/test_interpose.cc), where its definitions
 *    take the place of libc's for the core linked into that binary.
 * Either way every call is passed on unchanged until the environment arms it:
 *
 *   PINNEDFS_AT      when to act, once per process:
 *                      after:CALL:NAME   once CALL (openat, linkat, renameat, unlinkat, fsync)
 *                                        returned successfully for the name NAME (the last path
 *                                        argument; a trailing '*' matches a prefix; fsync matches
 *                                        any descriptor of a regular file);
 *                      before:CALL:NAME  the same, before the call is made;
 *                      bytes:N           once N bytes in all have been written to regular files
 *                                        (a write(2) that crosses N is split there).
 *   PINNEDFS_DO      what to do then: "rename" (PINNEDFS_FROM to PINNEDFS_TO, absolute paths, as an
 *                    attacker with write access on both sides would) or "kill" (SIGKILL to this
 *                    process, exactly as kill -9 from outside at that instant).
 *   PINNEDFS_REPORT  a file the act is appended to: "fired WHEN OUTCOME MONOTONIC_NS\n".
 *   PINNEDFS_NO_TMPFILE=1  every O_TMPFILE open fails EOPNOTSUPP, as on a file system without it:
 *                    the named-temporary path (the one macOS always takes) runs on Linux.
 *
 * Nothing here is timed by sleeping; the act happens inside the very call it names.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
/* Fortified headers define some of these functions inline; these are the real definitions. */
#undef _FORTIFY_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#ifdef __cplusplus
#define PFS_THROW __THROW
extern "C" {
#else
#define PFS_THROW
#endif

static int pfs_fired;
static unsigned long long pfs_written;

static void* pfs_real(const char* name) {
  void* f = dlsym(RTLD_NEXT, name);
  if (!f) {
    fprintf(stderr, "interpose: no next definition of %s\n", name);
    abort();
  }
  return f;
}

/* The act itself, once. Uses only calls this file does not define, so it cannot recurse. */
static void pfs_act(const char* when) {
  if (__atomic_exchange_n(&pfs_fired, 1, __ATOMIC_SEQ_CST)) return;
  const char* what = getenv("PINNEDFS_DO");
  const char* outcome = "none";
  if (what && strcmp(what, "rename") == 0) {
    const char* from = getenv("PINNEDFS_FROM");
    const char* to = getenv("PINNEDFS_TO");
    outcome = from && to && rename(from, to) == 0 ? "renamed" : "rename-failed";
  }
  const char* report = getenv("PINNEDFS_REPORT");
  if (report) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    FILE* f = fopen(report, "a");
    if (f) {
      fprintf(f, "fired %s %s %lld\n", when, outcome,
              (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec);
      fclose(f);
    }
  }
  if (what && strcmp(what, "kill") == 0) kill(getpid(), SIGKILL);
}

/* Whether PINNEDFS_AT is "PHASE:CALL:NAME" for this phase, call and name. */
static int pfs_armed(const char* phase, const char* call, const char* name) {
  if (__atomic_load_n(&pfs_fired, __ATOMIC_SEQ_CST)) return 0;
  const char* at = getenv("PINNEDFS_AT");
  if (!at) return 0;
  size_t p = strlen(phase), c = strlen(call);
  if (strncmp(at, phase, p) != 0 || at[p] != ':' || strncmp(at + p + 1, call, c) != 0 ||
      at[p + 1 + c] != ':')
    return 0;
  const char* want = at + p + 1 + c + 1;
  if (!name) return *want == '\0';
  size_t n = strlen(want);
  if (n > 0 && want[n - 1] == '*') return strncmp(name, want, n - 1) == 0;
  return strcmp(name, want) == 0;
}

static int pfs_regular(int fd) {
  struct stat st;
  return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/* bytes:N armed: how many of `n` bytes to `fd` may go before the act (n when none). */
static size_t pfs_bytes_before_act(int fd, size_t n) {
  if (__atomic_load_n(&pfs_fired, __ATOMIC_SEQ_CST)) return n;
  const char* at = getenv("PINNEDFS_AT");
  if (!at || strncmp(at, "bytes:", 6) != 0 || !pfs_regular(fd)) return n;
  unsigned long long limit = strtoull(at + 6, NULL, 10);
  unsigned long long done = __atomic_load_n(&pfs_written, __ATOMIC_SEQ_CST);
  if (done >= limit) return 0;
  return limit - done < n ? (size_t)(limit - done) : n;
}

static void pfs_count(int fd, ssize_t n) {
  if (n > 0 && getenv("PINNEDFS_AT") && pfs_regular(fd))
    __atomic_add_fetch(&pfs_written, (unsigned long long)n, __ATOMIC_SEQ_CST);
}

typedef int (*pfs_openat_t)(int, const char*, int, ...);

static int pfs_openat(const char* which, int dirfd, const char* path, int flags, mode_t mode) {
  pfs_openat_t real = (pfs_openat_t)pfs_real(which);
#ifdef O_TMPFILE
  if ((flags & O_TMPFILE) == O_TMPFILE && getenv("PINNEDFS_NO_TMPFILE")) {
    errno = EOPNOTSUPP;
    return -1;
  }
#endif
  if (pfs_armed("before", "openat", path)) pfs_act("before:openat");
  int fd = real(dirfd, path, flags, mode);
  if (fd >= 0 && pfs_armed("after", "openat", path)) pfs_act("after:openat");
  return fd;
}

static mode_t pfs_mode(int flags, va_list ap) {
#ifdef O_TMPFILE
  if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) return (mode_t)va_arg(ap, int);
#else
  if (flags & O_CREAT) return (mode_t)va_arg(ap, int);
#endif
  return 0;
}

int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = pfs_mode(flags, ap);
  va_end(ap);
  return pfs_openat("openat", dirfd, path, flags, mode);
}

int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  mode_t mode = pfs_mode(flags, ap);
  va_end(ap);
  return pfs_openat("openat64", dirfd, path, flags, mode);
}

int linkat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
           int flags) PFS_THROW {
  typedef int (*real_t)(int, const char*, int, const char*, int);
  real_t real = (real_t)pfs_real("linkat");
  if (pfs_armed("before", "linkat", newpath)) pfs_act("before:linkat");
  int rc = real(olddirfd, oldpath, newdirfd, newpath, flags);
  if (rc == 0 && pfs_armed("after", "linkat", newpath)) pfs_act("after:linkat");
  return rc;
}

int renameat(int olddirfd, const char* oldpath, int newdirfd, const char* newpath) PFS_THROW {
  typedef int (*real_t)(int, const char*, int, const char*);
  real_t real = (real_t)pfs_real("renameat");
  if (pfs_armed("before", "renameat", newpath)) pfs_act("before:renameat");
  int rc = real(olddirfd, oldpath, newdirfd, newpath);
  if (rc == 0 && pfs_armed("after", "renameat", newpath)) pfs_act("after:renameat");
  return rc;
}

int renameat2(int olddirfd, const char* oldpath, int newdirfd, const char* newpath,
              unsigned int flags) PFS_THROW {
  typedef int (*real_t)(int, const char*, int, const char*, unsigned int);
  real_t real = (real_t)pfs_real("renameat2");
  if (pfs_armed("before", "renameat", newpath)) pfs_act("before:renameat");
  int rc = real(olddirfd, oldpath, newdirfd, newpath, flags);
  if (rc == 0 && pfs_armed("after", "renameat", newpath)) pfs_act("after:renameat");
  return rc;
}

int unlinkat(int dirfd, const char* path, int flags) PFS_THROW {
  typedef int (*real_t)(int, const char*, int);
  real_t real = (real_t)pfs_real("unlinkat");
  if (pfs_armed("before", "unlinkat", path)) pfs_act("before:unlinkat");
  int rc = real(dirfd, path, flags);
  if (rc == 0 && pfs_armed("after", "unlinkat", path)) pfs_act("after:unlinkat");
  return rc;
}

int fsync(int fd) {
  typedef int (*real_t)(int);
  real_t real = (real_t)pfs_real("fsync");
  int regular = pfs_regular(fd);
  if (regular && pfs_armed("before", "fsync", NULL)) pfs_act("before:fsync");
  int rc = real(fd);
  if (rc == 0 && regular && pfs_armed("after", "fsync", NULL)) pfs_act("after:fsync");
  return rc;
}

ssize_t write(int fd, const void* buf, size_t n) {
  typedef ssize_t (*real_t)(int, const void*, size_t);
  real_t real = (real_t)pfs_real("write");
  size_t first = pfs_bytes_before_act(fd, n);
  if (first < n) {
    /* The split: what fits before the mark goes, then the act (a kill ends everything here). */
    if (first > 0) {
      ssize_t done = real(fd, buf, first);
      pfs_count(fd, done);
      if (done != (ssize_t)first) return done;
    }
    pfs_act("bytes");
    if (first > 0) return (ssize_t)first;
  }
  ssize_t done = real(fd, buf, n);
  pfs_count(fd, done);
  return done;
}

#ifdef __cplusplus
}
#endif
