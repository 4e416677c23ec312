/*
 * The moved-out attacker: waits with inotify for the operation under test to touch a directory,
 * then renames directories (or anything) as told, typically the directory the operation holds (or
 * an ancestor of it) out of the root, and something from outside into the departed tree.
 *
 *   mover WATCH EVENT COUNT TIMEOUT_MS FROM1 TO1 [FROM2 TO2 ...]
 *
 * EVENT is one of open, access, create, delete: the inotify event on WATCH (the directory itself
 * or an entry in it) that says the operation is at work there. After COUNT such events every
 * FROM -> TO rename is done in order. FROM1 is watched too, for its own move: inotify queues events
 * in the order the kernel makes them, so every EVENT on WATCH that the queue holds after FROM1's
 * move is something the operation did in the departed tree.
 *
 * Says "R\n" once the watches are in place (the harness starts the operation only then), then
 * "D <renames done> <renames failed>\n" after the renames, or "T\n" (exit 2) when no EVENT came
 * within TIMEOUT_MS (or before stdin closed). It then counts until its stdin closes (the harness
 * closes it once the operation has returned, so every event of the operation is queued), and ends
 * with "A <EVENTs on WATCH after the move>\n". Nothing is timed by sleeping: the trigger is the
 * kernel's notification of the operation's own system call. Built by the tests with `cc -O2`.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long long now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static unsigned mask_of(const char* name) {
  if (strcmp(name, "open") == 0) return IN_OPEN;
  if (strcmp(name, "access") == 0) return IN_ACCESS;
  if (strcmp(name, "create") == 0) return IN_CREATE;
  if (strcmp(name, "delete") == 0) return IN_DELETE;
  return 0;
}

static int watch, moved_watch;
static unsigned mask;
static long seen, after;
static int moved;

/* Reads what the queue holds; returns -1 on error. */
static int drain(int in) {
  char buf[64 * 1024] __attribute__((aligned(__alignof__(struct inotify_event))));
  for (;;) {
    ssize_t n = read(in, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return 0;
      perror("mover: read");
      return -1;
    }
    for (char* at = buf; at < buf + n;) {
      struct inotify_event* e = (struct inotify_event*)at;
      if (e->wd == moved_watch && (e->mask & IN_MOVE_SELF)) moved = 1;
      if (e->wd == watch && (e->mask & mask)) {
        seen++;
        if (moved) after++;
      }
      at += sizeof *e + e->len;
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 7 || (argc - 5) % 2 != 0) {
    fprintf(stderr, "usage: mover WATCH EVENT COUNT TIMEOUT_MS FROM TO [FROM TO ...]\n");
    return 64;
  }
  mask = mask_of(argv[2]);
  long count = strtol(argv[3], NULL, 10);
  long timeout = strtol(argv[4], NULL, 10);
  if (!mask || count < 1 || timeout < 1) {
    fprintf(stderr, "mover: bad EVENT, COUNT or TIMEOUT_MS\n");
    return 64;
  }
  int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (in < 0) {
    perror("mover: inotify_init1");
    return 1;
  }
  watch = inotify_add_watch(in, argv[1], mask);
  /* The same inode may be both: inotify then answers one descriptor for both masks. */
  moved_watch = inotify_add_watch(in, argv[5], IN_MOVE_SELF | IN_MASK_ADD);
  if (watch < 0 || moved_watch < 0) {
    perror("mover: inotify_add_watch");
    return 1;
  }
  printf("R\n");
  fflush(stdout);

  long long deadline = now_ms() + timeout;
  while (seen < count) {
    long long left = deadline - now_ms();
    if (left <= 0) {
      printf("T\n");
      fflush(stdout);
      return 2;
    }
    /* stdin closing first means the operation is over and never touched WATCH. */
    struct pollfd p[2] = {{in, POLLIN, 0}, {0, POLLIN, 0}};
    int ready = poll(p, 2, (int)left);
    if (ready < 0 && errno != EINTR) {
      perror("mover: poll");
      return 1;
    }
    if (ready > 0 && (p[0].revents & POLLIN) && drain(in) < 0) return 1;
    if (ready > 0 && seen < count && (p[1].revents & (POLLIN | POLLHUP))) {
      printf("T\n");
      fflush(stdout);
      return 2;
    }
  }
  int done = 0, failed = 0;
  for (int i = 5; i + 1 < argc; i += 2) {
    if (rename(argv[i], argv[i + 1]) == 0) {
      done++;
    } else {
      failed++;
      fprintf(stderr, "mover: rename %s -> %s: %s\n", argv[i], argv[i + 1], strerror(errno));
    }
  }
  printf("D %d %d\n", done, failed);
  fflush(stdout);

  /* Count until the harness says the operation is over (stdin closed), then take what is left. */
  for (;;) {
    struct pollfd p[2] = {{in, POLLIN, 0}, {0, POLLIN, 0}};
    int ready = poll(p, 2, -1);
    if (ready < 0) {
      if (errno == EINTR) continue;
      perror("mover: poll");
      return 1;
    }
    if (p[0].revents & POLLIN && drain(in) < 0) return 1;
    if (p[1].revents & (POLLIN | POLLHUP)) {
      char c;
      ssize_t n = read(0, &c, 1);
      if (n <= 0) break;
    }
  }
  if (drain(in) < 0) return 1;
  printf("A %ld\n", after);
  fflush(stdout);
  return 0;
}
