/*
 * The race attacker: exchanges pairs of names with renameat2(RENAME_EXCHANGE) in a tight loop, so
 * that a path the executor is resolving flips between a real directory (or file) inside the root
 * and a symlink, a directory moved in from outside, or a hard link to an outside file.
 *
 *   attacker A1 B1 [A2 B2 ...]
 *
 * Says "S 1 0\n" on stdout after its first swap, so the harness starts operations only once the
 * attack is live. Control on stdin, one byte per command, answered on stdout:
 *   p  park: stop with every pair back in its original place, answer "P <swaps> <failures>\n"
 *      (or "X ..." when a pair could not be put back, e.g. an operation removed one side)
 *   r  resume swapping
 *   x  (parked) exchange every pair once and stay parked, answer "x <swaps> <failures>\n" (or "y"
 *      when an exchange failed): the harness opens a check-then-use window on demand this way
 *   q / EOF  park, print "Q <swaps> <failures>\n", exit
 * Parking is how the harness rebuilds a tree between destructive operations without ever writing
 * through a name the attacker might have turned into a link.
 *
 * <swaps> counts only the exchanges of the running attack that the kernel did: a failed exchange
 * is a failure, and the exchanges that park or that `x` asked for are not counted at all, so the
 * count is the attack the operations raced and nothing else. Built by the tests with `cc -O2`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef RENAME_EXCHANGE
#define RENAME_EXCHANGE (1 << 1)
#endif

static long exchange(const char* a, const char* b) {
  /* The raw syscall: glibc's renameat2 wrapper exists only from 2.28. */
  return syscall(SYS_renameat2, AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE);
}

static unsigned long long swaps, failures;

/* Puts every pair whose swap count is odd back; returns 0 if all are home. */
static int park(int pairs, char** names, unsigned char* odd) {
  int home = 0;
  for (int i = 0; i < pairs; i++) {
    if (!odd[i]) continue;
    if (exchange(names[2 * i], names[2 * i + 1]) == 0) {
      odd[i] = 0;
    } else {
      home = -1;
      /* One side is gone: whatever is left is where it is. The harness rebuilds it. */
      odd[i] = 0;
    }
  }
  return home;
}

static void answer(char tag) {
  char line[96];
  int n = snprintf(line, sizeof line, "%c %llu %llu\n", tag, swaps, failures);
  ssize_t w;
  do w = write(1, line, (size_t)n);
  while (w < 0 && errno == EINTR);
}

int main(int argc, char** argv) {
  if (argc < 3 || (argc - 1) % 2 != 0) {
    fprintf(stderr, "usage: attacker A1 B1 [A2 B2 ...]\n");
    return 2;
  }
  int pairs = (argc - 1) / 2;
  char** names = argv + 1;
  unsigned char* odd = calloc((size_t)pairs, 1);
  if (!odd) return 1;
  int running = 1;
  struct pollfd in = {.fd = 0, .events = POLLIN};
  for (;;) {
    /* Running: peek at stdin without waiting. Parked: wait for the next command. */
    int ready = poll(&in, 1, running ? 0 : -1);
    if (ready > 0) {
      char c;
      ssize_t n = read(0, &c, 1);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0 || c == 'q') {
        park(pairs, names, odd);
        answer('Q');
        return 0;
      }
      if (c == 'p') {
        answer(park(pairs, names, odd) == 0 ? 'P' : 'X');
        running = 0;
      } else if (c == 'r') {
        running = 1;
      } else if (c == 'x') {
        /* Only parked: a running attack would undo it at once. */
        char tag = running ? 'y' : 'x';
        for (int i = 0; i < pairs && !running; i++) {
          if (exchange(names[2 * i], names[2 * i + 1]) == 0)
            odd[i] ^= 1;
          else
            tag = 'y';
        }
        answer(tag);
      }
      continue;
    }
    if (!running) continue;
    for (int i = 0; i < pairs; i++) {
      if (exchange(names[2 * i], names[2 * i + 1]) == 0) {
        odd[i] ^= 1;
        if (swaps++ == 0) answer('S');
      } else {
        failures++;
      }
    }
  }
}
