/*
 * The moved-out attacker: waits with inotify for the operation under test to touch a directory,
 * then renames directories (or anything) as told, typically the directory the operation holds (or
 * an ancestor of it) out of the root, and something from outside into the departed tree.
 *
 *   mover WATCH EVENT COUNT TIMEOUT_MS FROM1 TO1 [FROM2 TO2 ...]
 *
 * WATCH is a directory, or DIR/... for DIR and every directory below it (watched as they are when
 * the mover starts: an operation's deeper acts are then in its sight too).
 *
 * EVENT is one of open, access, create, delete, moved_to, or several joined by '+': the first is
 * the inotify event on WATCH (the directory itself or an entry in it) that says the operation is at
 * work there; all of them are the operation's acts that are counted after the move. After COUNT
 * events of the first kind every FROM -> TO rename is done in order. FROM1 is watched too, for its
 * own move: inotify queues events in the order the kernel makes them, so every counted event on
 * WATCH that the queue holds after FROM1's move is something the operation did in the departed
 * tree, and none at all means the operation's last act there came before the move.
 *
 * Says "R\n" once the watches are in place (the harness starts the operation only then), then
 * "D <renames done> <renames failed> <start ns> <end ns>\n" after the renames, the two times read
 * from CLOCK_MONOTONIC just before the first rename began and just after it returned (the clock
 * Node's process.hrtime reads: the harness compares them with when the operation settled, so a
 * rename that came too late is known, not guessed), or "T\n" (exit 2) when no EVENT came
 * within TIMEOUT_MS (or before stdin closed). It then counts until its stdin closes (the harness
 * closes it once the operation has returned, so every event of the operation is queued), and ends
 * with "A <counted events on WATCH after the move>\n". Nothing is timed by sleeping: the trigger is
 * the kernel's notification of the operation's own system call. Built by the tests with `cc -O2`.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <time.h>
#include <unistd.h>

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static long long now_ms(void) {
  return now_ns() / 1000000;
}

static unsigned one_mask(const char* name, size_t n) {
  if (n == 4 && strncmp(name, "open", n) == 0) return IN_OPEN;
  if (n == 6 && strncmp(name, "access", n) == 0) return IN_ACCESS;
  if (n == 6 && strncmp(name, "create", n) == 0) return IN_CREATE;
  if (n == 6 && strncmp(name, "delete", n) == 0) return IN_DELETE;
  if (n == 8 && strncmp(name, "moved_to", n) == 0) return IN_MOVED_TO;
  return 0;
}

/* "open+create": the first event is the trigger, all of them are counted. 0 when malformed. */
static int masks_of(const char* spec, unsigned* trigger, unsigned* counted) {
  *trigger = *counted = 0;
  for (const char* at = spec;;) {
    const char* plus = strchr(at, '+');
    size_t n = plus ? (size_t)(plus - at) : strlen(at);
    unsigned m = one_mask(at, n);
    if (!m) return 0;
    if (!*trigger) *trigger = m;
    *counted |= m;
    if (!plus) return 1;
    at = plus + 1;
  }
}

#define MAX_WATCHES 8192
static int watches[MAX_WATCHES];
static int nwatches;
static int moved_watch;
static unsigned mask, counted;
static int deep;

static int watched(int wd) {
  for (int i = 0; i < nwatches; i++)
    if (watches[i] == wd) return 1;
  return 0;
}

/* Watches `dir`, and with `deep` every directory below it, never through a link. */
static int watch_tree(int in, const char* dir, int deep) {
  if (nwatches == MAX_WATCHES) {
    fprintf(stderr, "mover: more than %d directories to watch\n", MAX_WATCHES);
    return -1;
  }
  int wd = inotify_add_watch(in, dir, counted | IN_ONLYDIR | IN_DONT_FOLLOW);
  if (wd < 0) {
    perror("mover: inotify_add_watch");
    return -1;
  }
  watches[nwatches++] = wd;
  if (!deep) return 0;
  DIR* d = opendir(dir);
  if (!d) {
    perror("mover: opendir");
    return -1;
  }
  int rc = 0;
  for (struct dirent* e; rc == 0 && (e = readdir(d));) {
    if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
      continue;
    char child[PATH_MAX];
    if (snprintf(child, sizeof child, "%s/%s", dir, e->d_name) >= (int)sizeof child) {
      fprintf(stderr, "mover: path too long under %s\n", dir);
      rc = -1;
    } else {
      rc = watch_tree(in, child, 1);
    }
  }
  closedir(d);
  return rc;
}
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
      /* Watching a whole tree, an open of a subdirectory is told twice, to its own watch and to its
       * parent's (as a named child): one act, counted once, by its own watch. */
      int twice = deep && (e->mask & (IN_OPEN | IN_ACCESS)) && (e->mask & IN_ISDIR) && e->len > 0;
      if (watched(e->wd) && (e->mask & mask) && !twice) seen++;
      if (watched(e->wd) && (e->mask & counted) && !twice && moved) after++;
      at += sizeof *e + e->len;
    }
  }
}

int main(int argc, char** argv) {
  if (argc < 7 || (argc - 5) % 2 != 0) {
    fprintf(stderr, "usage: mover WATCH EVENT COUNT TIMEOUT_MS FROM TO [FROM TO ...]\n");
    return 64;
  }
  int parsed = masks_of(argv[2], &mask, &counted);
  long count = strtol(argv[3], NULL, 10);
  long timeout = strtol(argv[4], NULL, 10);
  if (!parsed || count < 1 || timeout < 1) {
    fprintf(stderr, "mover: bad EVENT, COUNT or TIMEOUT_MS\n");
    return 64;
  }
  int in = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
  if (in < 0) {
    perror("mover: inotify_init1");
    return 1;
  }
  char top[PATH_MAX];
  size_t len = strlen(argv[1]);
  deep = len > 4 && strcmp(argv[1] + len - 4, "/...") == 0;
  if (snprintf(top, sizeof top, "%.*s", (int)(deep ? len - 4 : len), argv[1]) >= (int)sizeof top) {
    fprintf(stderr, "mover: WATCH too long\n");
    return 64;
  }
  if (watch_tree(in, top, deep) < 0) return 1;
  /* The same inode may be both: inotify then answers one descriptor for both masks. */
  moved_watch = inotify_add_watch(in, argv[5], IN_MOVE_SELF | IN_MASK_ADD);
  if (moved_watch < 0) {
    perror("mover: inotify_add_watch");
    return 1;
  }
  /* Walking the tree opened its directories: those events are the mover's own, not the operation's.
   */
  if (drain(in) < 0) return 1;
  seen = 0;
  after = 0;
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
  long long started = 0, ended = 0;
  for (int i = 5; i + 1 < argc; i += 2) {
    if (i == 5) started = now_ns();
    int rc = rename(argv[i], argv[i + 1]);
    if (i == 5) ended = now_ns();
    if (rc == 0) {
      done++;
    } else {
      failed++;
      fprintf(stderr, "mover: rename %s -> %s: %s\n", argv[i], argv[i + 1], strerror(errno));
    }
  }
  printf("D %d %d %lld %lld\n", done, failed, started, ended);
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
