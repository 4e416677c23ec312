// The remover's judgement of whether holding files pays (ops/free_watch.h): slow unlinks turn it
// on, quick closes of held handles turn it off, and one slow call in a window of quick ones (a
// preemption) changes nothing.
#include "ops/free_watch.h"

#include "harness.h"

using namespace pinnedfs::ops;

namespace {
constexpr auto kQuick = std::chrono::microseconds(4);
constexpr auto kSlowCall = std::chrono::microseconds(70);

void unlinks(FreeWatch& w, unsigned slow, unsigned quick) {
  for (unsigned i = 0; i < slow; ++i) w.unlinked(kSlowCall);
  for (unsigned i = 0; i < quick; ++i) w.unlinked(kQuick);
}
void closes(FreeWatch& w, unsigned slow, unsigned quick) {
  for (unsigned i = 0; i < slow; ++i) w.closed(kSlowCall);
  for (unsigned i = 0; i < quick; ++i) w.closed(kQuick);
}
}  // namespace

TEST(quick_unlinks_never_turn_holding_on_even_with_a_slow_one_among_them) {
  FreeWatch w;
  CHECK(!w.holding());
  for (int window = 0; window < 8; ++window) unlinks(w, 1, FreeWatch::kWindow - 1);
  CHECK(!w.holding());
  unlinks(w, FreeWatch::kWindow / 2 - 1, FreeWatch::kWindow / 2 + 1);
  CHECK(!w.holding());
}

TEST(half_a_window_of_slow_unlinks_turns_holding_on_at_the_window_end) {
  FreeWatch w;
  unlinks(w, FreeWatch::kWindow / 2, FreeWatch::kWindow / 2 - 1);
  CHECK(!w.holding());  // the window is not complete yet
  unlinks(w, 0, 1);
  CHECK(w.holding());
}

TEST(quick_closes_turn_holding_off_and_slow_ones_keep_it) {
  FreeWatch w(true);
  CHECK(w.holding());
  closes(w, FreeWatch::kWindow / 2, FreeWatch::kWindow / 2);
  CHECK(w.holding());  // half quick is not more than half
  closes(w, FreeWatch::kWindow / 2 - 1, FreeWatch::kWindow / 2 + 1);
  CHECK(!w.holding());
  // Off again, the unlinks are watched anew: slow ones turn it back on.
  unlinks(w, FreeWatch::kWindow, 0);
  CHECK(w.holding());
}

TEST(the_threshold_lies_between_a_quick_free_and_a_device_round_trip) {
  CHECK(FreeWatch::kSlow > kQuick && FreeWatch::kSlow < kSlowCall);
  FreeWatch w;
  unlinks(w, 0, 0);
  for (unsigned i = 0; i < FreeWatch::kWindow; ++i) w.unlinked(FreeWatch::kSlow);
  CHECK(w.holding());  // at the threshold counts as slow
}
