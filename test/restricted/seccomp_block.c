/*
 * A test-only Node addon (plain N-API, C): block(errnoName) installs, in the running process, the
 * seccomp filter that answers openat2(2) with that errno, on every thread at once
 * (SECCOMP_FILTER_FLAG_TSYNC: the addon's lookups run on libuv's pool, not on the thread that
 * asks). It lets a test change the kernel under a process after openat2 has worked in it: the
 * no-downgrade rule, EAGAIN after the bounded retries. A filter cannot be removed: the test runs
 * it in a child process it throws away.
 */
#define _GNU_SOURCE
#include <node_api.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "openat2_filter.h"

#ifndef SECCOMP_SET_MODE_FILTER
#define SECCOMP_SET_MODE_FILTER 1
#endif
#ifndef SECCOMP_FILTER_FLAG_TSYNC
#define SECCOMP_FILTER_FLAG_TSYNC 1
#endif

static napi_value fail(napi_env env, const char* what) {
  char message[160];
  snprintf(message, sizeof message, "seccomp_block: %s: %s", what, strerror(errno));
  napi_throw_error(env, NULL, message);
  return NULL;
}

static napi_value block(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value argv[1];
  char name[16] = {0};
  size_t length = 0;
  if (napi_get_cb_info(env, info, &argc, argv, NULL, NULL) != napi_ok || argc < 1 ||
      napi_get_value_string_utf8(env, argv[0], name, sizeof name, &length) != napi_ok) {
    napi_throw_type_error(env, NULL, "block(errnoName): a string");
    return NULL;
  }
  int errno_value = openat2_filter_errno(name);
  if (errno_value < 0) {
    napi_throw_range_error(env, NULL, "block(errnoName): ENOSYS, EPERM, EAGAIN or EXDEV");
    return NULL;
  }
  struct openat2_filter filter;
  openat2_filter_init(&filter, (unsigned)errno_value);
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return fail(env, "PR_SET_NO_NEW_PRIVS");
  /* TSYNC answers 0, or the id of a thread it could not synchronise. */
  long synced =
      syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &filter.prog);
  if (synced != 0) {
    if (synced > 0) errno = ESRCH;
    return fail(env, "seccomp(SECCOMP_SET_MODE_FILTER, TSYNC)");
  }
  napi_value undefined;
  napi_get_undefined(env, &undefined);
  return undefined;
}

NAPI_MODULE_INIT() {
  napi_value fn;
  if (napi_create_function(env, "block", NAPI_AUTO_LENGTH, block, NULL, &fn) != napi_ok ||
      napi_set_named_property(env, exports, "block", fn) != napi_ok) {
    return NULL;
  }
  return exports;
}
