#include "remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <deque>
#include <vector>

#include "../core/cancel.h"
#include "../core/eintr.h"
#include "../platform/platform.h"
#include "dir_list.h"
#include "free_watch.h"

namespace pinnedfs::ops {

namespace {

// A directory that keeps gaining entries while we empty it is someone racing us; give up visibly
// rather than loop for ever.
constexpr int kMaxPasses = 64;

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

// Where the file system frees a file's blocks synchronously when its last reference goes (ext4
// mounted with `discard` waits for the device to discard them), unlinking file after file waits out
// one device round trip each, and a large tree is removed at the device's latency. There each file
// is held (an O_PATH handle taken just before its unlink): the unlink then only removes the entry,
// and the last reference, with the freeing it triggers, goes when the handle is closed here, by a
// few threads side by side. Every act in a directory stays where it was: one at a time, each after
// its own proof. Closing a handle to an unlinked file acts in no directory.
//
// Holding costs an open and a close a file, and a thread: where the free is quick (a file never
// written back, a file system that frees later) it buys nothing (on this project's disk an unlink
// takes 4 us then and 64-75 us after a sync; docs/performance.md, "The remover holds only where
// freeing is slow"). So the removal watches its own frees: unlinks without a handle until half of a
// window of them were slow, closes of held handles until half of a window were quick, and holds
// or not accordingly. Threads start with the backlog (the first with the first handle, another
// whenever handles wait for one), live for one removal; where none can be started the caller closes
// its own.
class Closer {
 public:
  // `most`: handles held at once, at most kPending (0: none is ever held).
  explicit Closer(std::size_t most, bool hold_from_start) : most_(most), watch_(hold_from_start) {
    ::pthread_mutex_init(&lock_, nullptr);
    ::pthread_cond_init(&wake_, nullptr);
    ::pthread_cond_init(&room_, nullptr);
  }
  Closer(const Closer&) = delete;
  Closer& operator=(const Closer&) = delete;
  ~Closer() {
    ::pthread_mutex_lock(&lock_);
    stopping_ = true;
    ::pthread_cond_broadcast(&wake_);
    ::pthread_mutex_unlock(&lock_);
    for (pthread_t t : threads_) ::pthread_join(t, nullptr);
    ::pthread_cond_destroy(&room_);
    ::pthread_cond_destroy(&wake_);
    ::pthread_mutex_destroy(&lock_);
  }

  // Whether the next file is worth holding: only while frees have been found slow.
  bool worth_holding() const { return most_ > 0 && watch_.holding(); }

  // An unlink done without a handle took `took`: the free was in it.
  void unlinked(FreeWatch::Duration took) {
    if (most_ > 0) watch_.unlinked(took);
  }

  // The process ran out of descriptors: what is held is closed now, and nothing more is held for
  // the rest of this removal (every descriptor is better spent on the removal itself).
  void stop_holding() {
    most_ = 0;
    drain();
  }

  // Hands `fd` over to be closed. Waits while `most` handles are already waiting.
  void close(Fd fd) {
    ::pthread_mutex_lock(&lock_);
    if (can_start_ && threads_.size() < kThreads && (threads_.empty() || pending_.size() > idle_))
      start_locked();
    if (threads_.empty()) {
      ::pthread_mutex_unlock(&lock_);
      return;  // fd closes here, by the caller
    }
    while (most_ > 0 && pending_.size() >= most_) ::pthread_cond_wait(&room_, &lock_);
    pending_.push_back(std::move(fd));
    ::pthread_cond_signal(&wake_);
    ::pthread_mutex_unlock(&lock_);
  }

  // Returns once every handle given is closed.
  void drain() {
    ::pthread_mutex_lock(&lock_);
    while (!pending_.empty() || closing_ != 0) ::pthread_cond_wait(&room_, &lock_);
    ::pthread_mutex_unlock(&lock_);
  }

 private:
  static constexpr std::size_t kThreads = 8;

 public:
  // Bounds the descriptors held at once, whatever the process's limit allows.
  static constexpr std::size_t kPending = 256;

 private:
  void start_locked() {
    pthread_t t;
    if (::pthread_create(&t, nullptr, &Closer::main, this) != 0) {
      can_start_ = false;
      return;
    }
    threads_.push_back(t);
    ++idle_;
  }

  static void* main(void* self) {
    static_cast<Closer*>(self)->serve();
    return nullptr;
  }

  // std::condition_variable would bring in libstdc++'s thread-exit machinery and with it glibc
  // symbols the portable prebuilds cannot name; the pthread calls are the same thing.
  void serve() {
    ::pthread_mutex_lock(&lock_);
    for (;;) {
      while (!stopping_ && pending_.empty()) ::pthread_cond_wait(&wake_, &lock_);
      if (pending_.empty()) break;  // stopping, and nothing left
      Fd fd = std::move(pending_.front());
      pending_.pop_front();
      ++closing_;
      --idle_;
      ::pthread_mutex_unlock(&lock_);
      auto began = std::chrono::steady_clock::now();
      fd.reset();
      auto took = std::chrono::steady_clock::now() - began;
      ::pthread_mutex_lock(&lock_);
      watch_.closed(took);
      ++idle_;
      --closing_;
      ::pthread_cond_broadcast(&room_);
    }
    ::pthread_mutex_unlock(&lock_);
  }

  std::size_t most_;
  FreeWatch watch_;  // closed() under lock_
  std::vector<pthread_t> threads_;
  bool can_start_ = true;
  pthread_mutex_t lock_;
  pthread_cond_t wake_;
  pthread_cond_t room_;
  std::deque<Fd> pending_;
  std::size_t idle_ = 0;  // threads started and not closing
  std::size_t closing_ = 0;
  bool stopping_ = false;
};

// A handle on `name` in `dirfd` that refers to the entry itself, never what a link names; invalid
// where the platform has no such handle or the open fails (the unlink answers for the entry then).
Fd hold_entry(int dirfd, const std::string& name) {
#if defined(O_PATH)
  return Fd(
      retry_eintr([&] { return ::openat(dirfd, name.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC); }));
#else
  (void)dirfd;
  (void)name;
  return Fd();
#endif
}

// How many handles the remover may hold at once: an eighth of the process's descriptor limit (the
// rest of the process, its other operations and the removal's own descent need the others), and
// never more than kPending. Read per removal: a limit lowered since is obeyed.
std::size_t held_handle_bound() {
  struct rlimit rl;
  if (::getrlimit(RLIMIT_NOFILE, &rl) != 0) return 0;
  if (rl.rlim_cur == RLIM_INFINITY) return Closer::kPending;
  rlim_t share = rl.rlim_cur / 8;
  return share < Closer::kPending ? static_cast<std::size_t>(share) : Closer::kPending;
}

std::atomic<bool> hold_from_start{false};

class Remover {
 public:
  explicit Remover(const Root& root)
      : root_(root),
        closer_(held_handle_bound(), hold_from_start.load(std::memory_order_relaxed)) {}
  ~Remover() { closer_.drain(); }
  Status remove_dir(Held& parent, const std::string& name, const std::string& shown, int depth,
                    std::vector<std::string>* split = nullptr);

 private:
  Status unlink_entry(Held& dir, const std::string& name, const std::string& shown, bool* is_dir);
  Status split_off(Held& dir, const std::vector<DirEntry>& entries, const std::string& shown,
                   std::vector<std::string>* split);
  const Root& root_;
  DirLister lister_;
  Closer closer_;
};

// Unlinks `name` in `dir` as an entry (never what it names), once `dir` is proven beneath the root.
// A directory there is not unlinked: *is_dir says so and the caller descends.
Status Remover::unlink_entry(Held& dir, const std::string& name, const std::string& shown,
                             bool* is_dir) {
  *is_dir = false;
  // Between acts, never inside one: what was removed stays removed, nothing is half-done.
  if (cancelled()) return cancelled_error("unlink", shown);
  // The handle is taken first (a look: an O_PATH open acts on nothing), so that the proof is the
  // last call before the unlink, as it is where nothing is held.
  Fd held;
  if (closer_.worth_holding()) {
    held = hold_entry(dir.look(), name);
    if (!held.valid() && (errno == EMFILE || errno == ENFILE)) closer_.stop_holding();
  }
  auto still = dir.prove(root_, "unlink", shown);
  if (!still.ok()) return still.take_error();
  int dirfd = still.value().fd();
  auto began = std::chrono::steady_clock::now();
  int rc = retry_eintr([&] { return ::unlinkat(dirfd, name.c_str(), 0); });
  if (rc == 0 && held.valid())
    closer_.close(std::move(held));
  else if (rc == 0)
    closer_.unlinked(std::chrono::steady_clock::now() - began);
  if (rc == 0 || errno == ENOENT) return ok_status();
  int err = errno;
  if (platform::unlink_met_directory(err, dirfd, name)) {
    *is_dir = true;
    return ok_status();
  }
  // A file bind-mounted over the entry: the kernel will not unlink a mount point.
  if (err == EBUSY) return mount_point("unlink", shown, shown);
  return sys_error(err, "unlink", shown);
}

// The split: every entry but the directories unlinked (one that turns out to be a directory joins
// them), the directory's identity and then the directories' names handed to the caller, the
// directory kept.
Status Remover::split_off(Held& dir, const std::vector<DirEntry>& entries, const std::string& shown,
                          std::vector<std::string>* split) {
  auto id = dir.identity(shown);
  if (!id.ok()) return id.take_error();
  split->push_back(id.value().str());
  for (const DirEntry& entry : entries) {
    bool is_dir = entry.kind == EntryKind::Directory;
    if (!is_dir) {
      auto gone = unlink_entry(dir, entry.name, join(shown, entry.name), &is_dir);
      if (!gone.ok()) return gone;
    }
    if (is_dir) split->push_back(entry.name);
  }
  return ok_status();
}

Status Remover::remove_dir(Held& parent, const std::string& name, const std::string& shown,
                           int depth, std::vector<std::string>* split) {
  if (depth > kMaxRemoveDepth) {
    // The same refusal as the recursive listing's depth limit: toolarge (BadArgument),
    // ENAMETOOLONG.
    return refusal(Refusal::TooLarge, "rm", shown,
                   "directory tree is deeper than the recursive remove limit of " +
                       std::to_string(kMaxRemoveDepth) + " levels",
                   ENAMETOOLONG);
  }
  for (int attempt = 0;; ++attempt) {
    if (cancelled()) return cancelled_error("rm", shown);
    if (attempt >= kMaxPasses) {
      Error e = sys_error(ENOTEMPTY, "rmdir", shown);
      e.description = "directory kept changing while it was being emptied";
      return e;
    }
    auto opened = descend(root_, parent, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK, shown);
    if (!opened.ok()) {
      const Error& e = opened.error();
      if (e.refusal == Refusal::None && e.err == ENOENT) return ok_status();  // already gone
      if (e.refusal == Refusal::Symlink || (e.refusal == Refusal::None && e.err == ENOTDIR)) {
        // No longer a directory (d_type was stale, or something was swapped in): the entry itself
        // is what we remove; what a link names is never touched.
        bool is_dir = false;
        auto gone = unlink_entry(parent, name, shown, &is_dir);
        if (!gone.ok() || !is_dir) return gone;
        continue;  // a directory again: go round
      }
      // A mount point (nothing beneath it is touched), a departed parent, anything else: stop.
      return opened.take_error();
    }
    Held dir = opened.take();
    // One listing pass, then rmdir: the kernel's ENOTEMPTY is the authoritative "a fresh listing
    // is not empty" (entries skipped by deleting while iterating, or added meanwhile), and sends
    // us round again, boundedly. The whole listing is taken before any entry is removed, so the
    // lister's buffer is free for the levels below.
    auto listable = dir.prove(root_, "getdents64", shown);
    if (!listable.ok()) return listable.take_error();
    std::vector<DirEntry> entries;
    auto listed = lister_.list(listable.value().fd(), shown, entries);
    if (!listed.ok()) return listed;
    if (split != nullptr && attempt == 0) {
      std::size_t dirs = 0;
      for (const DirEntry& entry : entries) dirs += entry.kind == EntryKind::Directory ? 1 : 0;
      if (dirs >= 2) return split_off(dir, entries, shown, split);
    }
    for (const DirEntry& entry : entries) {
      std::string below = join(shown, entry.name);
      // d_type is a hint: a "directory" that is a link by now fails the no-follow open in
      // remove_dir and is unlinked as an entry there.
      bool is_dir = entry.kind == EntryKind::Directory;
      if (!is_dir) {
        auto gone = unlink_entry(dir, entry.name, below, &is_dir);
        if (!gone.ok()) return gone;
      }
      if (is_dir) {
        auto sub = remove_dir(dir, entry.name, below, depth + 1);
        if (!sub.ok()) return sub;
      }
    }
    dir.reset();
    // The files' last references go before their directory is removed: rmdir would otherwise
    // spin over their departed entries, still held, until the closes land.
    closer_.drain();
    if (cancelled()) return cancelled_error("rmdir", shown);
    auto still = parent.prove(root_, "rmdir", shown);
    if (!still.ok()) return still.take_error();
    int rc =
        retry_eintr([&] { return ::unlinkat(still.value().fd(), name.c_str(), AT_REMOVEDIR); });
    if (rc == 0 || errno == ENOENT) return ok_status();
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST) return sys_error(err, "rmdir", shown);
  }
}

}  // namespace

void hold_every_file(bool on) {
  hold_from_start.store(on, std::memory_order_relaxed);
}

Status remove_tree(const Root& root, Held& parent, const std::string& name,
                   const std::string& shown, std::vector<std::string>* split) {
  Remover remover(root);
  return remover.remove_dir(parent, name, shown, 0, split);
}

}  // namespace pinnedfs::ops
