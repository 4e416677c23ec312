// Whether a recursive remove should hold each file while it unlinks it (ops/remove_tree.cc): only
// where the file system frees a file's blocks inside the call that drops its last reference, and
// that wait is long (ext4 mounted with `discard` waits for the device). Judged from the removal's
// own calls, since no interface tells: unlinks made without a handle carry the free, closes of
// held handles carry it instead. On this project's disk an unlink takes about 4 us where nothing
// waits (a file not yet written back) and 64-75 us where the device does; the threshold sits
// between, and half of a window decides, so one preempted call does not.
#pragma once
#include <atomic>
#include <chrono>

namespace pinnedfs::ops {

class FreeWatch {
 public:
  using Duration = std::chrono::steady_clock::duration;
  static constexpr unsigned kWindow = 16;
  static constexpr auto kSlow = std::chrono::microseconds(20);

  explicit FreeWatch(bool hold_from_start = false) : holding_(hold_from_start) {}

  bool holding() const { return holding_.load(std::memory_order_relaxed); }

  // An unlink made without a handle took `took` (the remover's thread only). Half a window of
  // slow ones turns holding on.
  void unlinked(Duration took) {
    if (took >= kSlow) ++slow_unlinks_;
    if (++unlinks_ < kWindow) return;
    if (slow_unlinks_ * 2 >= kWindow) holding_.store(true, std::memory_order_relaxed);
    unlinks_ = slow_unlinks_ = 0;
  }

  // The close of a held handle took `took` (one closing thread at a time: the caller serialises).
  // More than half a window of quick ones turns holding off.
  void closed(Duration took) {
    if (took < kSlow) ++quick_closes_;
    if (++closes_ < kWindow) return;
    if (quick_closes_ * 2 > kWindow) holding_.store(false, std::memory_order_relaxed);
    closes_ = quick_closes_ = 0;
  }

 private:
  // Written by the remover's thread, cleared by a closing thread; a stale read holds one file more
  // or one less, nothing else.
  std::atomic<bool> holding_;
  unsigned unlinks_ = 0;
  unsigned slow_unlinks_ = 0;
  unsigned closes_ = 0;
  unsigned quick_closes_ = 0;
};

}  // namespace pinnedfs::ops
