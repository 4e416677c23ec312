// The residual window of the moved-out rule, measured: how long after the kernel last said "this
// handle is beneath the root" the act through it runs. Straight on the core (no JavaScript), in a
// scratch root, for each way a held directory is proven before it is acted in:
//   lookup  the kernel strategy's proof (openat2 of the root-relative path from the root, fstat,
//           compare), depth 8;
//   proc    /proc's account (root, held, root), the walk's proof and the kernel strategy's past 32
//           components, at depth 8 and 40;
//   fresh   no proof: the act follows a kernel-confined lookup from the root (openat2 of the
//           parent), as mkdir, remove and rename do, depth 8.
// The act is mkdirat (then an untimed rmdir). For each, over N rounds: "span", from just before
// the proof (or lookup) starts to just after the act returns, the window's upper bound (the check
// happens inside the proof's last call, the act's own lookup at the start of the act); and "gap",
// from the proof's return to the act's return. Median and 99th percentile, microseconds.
// And the attacker's side: "reaction", from just before a mkdirat in a watched directory to the
// return of the rename an inotify-woken thread makes when it sees the IN_CREATE: how soon after
// an event it can cause an attacker can have moved a directory.
//
//   pinnedfs_window <scratch-dir> [rounds]
#include <fcntl.h>
#include <stdio.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "core/beneath.h"
#include "core/resolve.h"

using namespace pinnedfs;

namespace {

using Clock = std::chrono::steady_clock;

double us(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

double percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(p * static_cast<double>(v.size() - 1))];
}

std::string chain(std::size_t depth) {
  std::string rel;
  for (std::size_t i = 0; i < depth; ++i) rel += i ? "/d" : "d";
  return rel;
}

void report(const char* name, const std::vector<double>& span, const std::vector<double>& gap) {
  std::printf(
      "{\"proof\":\"%s\",\"rounds\":%zu,\"spanMedianUs\":%.1f,\"spanP99Us\":%.1f,"
      "\"gapMedianUs\":%.1f,\"gapP99Us\":%.1f}\n",
      name, span.size(), percentile(span, 0.5), percentile(span, 0.99), percentile(gap, 0.5),
      percentile(gap, 0.99));
}

// The act a proof guards, mkdir of "x" through the proven handle, timed: `span` from `t0` (before
// the proof) and `gap` from `t1` (the proof done) to the act's end. The rmdir after it is untimed.
bool timed_act(const Result<Proven>& proof, Clock::time_point t0, Clock::time_point t1,
               std::vector<double>& span, std::vector<double>& gap) {
  if (!proof.ok()) return false;
  int rc = ::mkdirat(proof.value().fd(), "x", 0755);
  auto t2 = Clock::now();
  if (rc != 0) return false;
  ::unlinkat(proof.value().fd(), "x", AT_REMOVEDIR);
  span.push_back(us(t0, t2));
  gap.push_back(us(t1, t2));
  return true;
}

// Proven handle, then act.
int run_proven(const char* name, const std::string& dir, Strategy s, std::size_t depth,
               int rounds) {
  std::string rel = chain(depth);
  std::string cmd = "mkdir -p '" + dir + "/" + rel + "'";
  if (std::system(cmd.c_str()) != 0) return 1;
  auto root = Root::pin(dir, s);
  if (!root.ok()) return 1;
  auto lexed = lex_path(rel);
  auto held = hold_beneath(*root.value(), lexed.value(), kDirHandleFlags);
  if (!held.ok()) return 1;
  Held h = held.take();
  std::vector<double> span, gap;
  for (int i = 0; i < rounds; ++i) {
    h.spend();
    auto t0 = Clock::now();
    auto proof = h.prove(*root.value(), "mkdir", rel);
    if (!timed_act(proof, t0, Clock::now(), span, gap)) return 1;
  }
  report(name, span, gap);
  return 0;
}

// A kernel-confined lookup of the parent from the root, then the act: the lookup is the proof.
int run_fresh(const std::string& dir, int rounds) {
  std::string rel = chain(8);
  auto root = Root::pin(dir, Strategy::Kernel);
  if (!root.ok()) return 1;
  LexedPath path = lex_path(rel + "/x").take();
  std::vector<double> span, gap;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    auto parent = open_parent(*root.value(), path);
    auto t1 = Clock::now();
    if (!parent.ok()) return 1;
    // Spends the lookup: no syscall.
    auto proof = parent.value().dir.prove(*root.value(), "mkdir", rel);
    if (!timed_act(proof, t0, t1, span, gap)) return 1;
  }
  report("fresh lookup (openat2), depth 8", span, gap);
  return 0;
}

// An attacker thread woken by inotify: at each IN_CREATE of "x" it renames "x" to "y".
int run_reaction(const std::string& dir, int rounds) {
  std::string watched = dir + "/watched";
  ::mkdir(watched.c_str(), 0755);
  int in = ::inotify_init1(IN_CLOEXEC);
  if (in < 0 || ::inotify_add_watch(in, watched.c_str(), IN_CREATE) < 0) return 1;
  std::atomic<long> done{0};
  std::vector<Clock::time_point> moved(static_cast<std::size_t>(rounds));
  std::thread attacker([&] {
    char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
    for (long i = 0; i < rounds;) {
      ssize_t n = ::read(in, buf, sizeof buf);
      if (n <= 0) return;
      for (char* at = buf; at < buf + n;
           at += sizeof(struct inotify_event) + reinterpret_cast<struct inotify_event*>(at)->len) {
        auto* e = reinterpret_cast<struct inotify_event*>(at);
        if (e->len == 0 || std::string(e->name) != "x") continue;
        ::rename((watched + "/x").c_str(), (watched + "/y").c_str());
        moved[static_cast<std::size_t>(i)] = Clock::now();
        done.store(++i);
      }
    }
  });
  std::vector<double> reaction;
  for (int i = 0; i < rounds; ++i) {
    auto t0 = Clock::now();
    if (::mkdir((watched + "/x").c_str(), 0755) != 0) break;
    while (done.load() <= i) std::this_thread::yield();
    reaction.push_back(us(t0, moved[static_cast<std::size_t>(i)]));
    ::rmdir((watched + "/y").c_str());
  }
  attacker.join();
  ::close(in);
  if (reaction.size() != static_cast<std::size_t>(rounds)) return 1;
  std::printf(
      "{\"attacker\":\"inotify IN_CREATE -> rename\",\"rounds\":%zu,\"reactionMedianUs\":%.1f,"
      "\"reactionP1Us\":%.1f}\n",
      reaction.size(), percentile(reaction, 0.5), percentile(reaction, 0.01));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: pinnedfs_window <scratch-dir> [rounds]\n");
    return 64;
  }
  std::string dir = argv[1];
  int rounds = argc > 2 ? std::atoi(argv[2]) : 20000;
  int bad = 0;
  bad |= run_proven("lookup (kernel strategy), depth 8", dir, Strategy::Kernel, 8, rounds);
  bad |= run_proven("proc (walk strategy), depth 8", dir, Strategy::Walk, 8, rounds);
  bad |= run_proven("proc (kernel strategy), depth 40", dir, Strategy::Kernel, 40, rounds);
  bad |= run_fresh(dir, rounds);
  bad |= run_reaction(dir, rounds / 10);
  if (bad) std::fprintf(stderr, "a measurement failed\n");
  return bad;
}
