// replaceIfUnchanged and removeIfUnchanged (unchanged.cc): compare-and-swap on one file. Internal
// to native/ops and its tests.
#pragma once
#include "ops.h"

namespace pinnedfs::ops {

// Where a test may interpose between the check and the act: after the first check, before the name
// is moved (BeforeMove), and after the move, before the check is made again (AfterMove).
enum class UnchangedPhase : unsigned char { BeforeMove, AfterMove };

#ifdef PINNEDFS_TEST_HOOKS
// Called at each phase when set (native tests only: a build without the hooks has no such call).
extern void (*unchanged_test_hook)(UnchangedPhase);
#endif

}  // namespace pinnedfs::ops
