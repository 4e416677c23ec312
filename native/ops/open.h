// open: a descriptor on a regular file beneath the root, handed to the caller to read and write
// through (PinnedRoot.open's file handle). Not an execute() operation: a descriptor inside a Value
// could be dropped by a batch or a failed answer, so the binding runs this through its own call and
// owns the descriptor until JavaScript has it.
#pragma once
#include "ops.h"

namespace pinnedfs::ops {

// Opens `request.path` with `request.flag` (r, r+, w, wx, a, ax; any other is BadArgument) and,
// for a file it creates, `request.mode` (default 0666, the umask applies). The leaf is opened with
// O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK|O_NOCTTY and no O_TRUNC, through the one resolution every
// operation uses; then the descriptor is checked (a directory is EISDIR; a FIFO, socket or device
// is `notregular`; a hard-linked file is `hardlink`) before anything changes, O_NONBLOCK is
// cleared, and only then does `w` truncate.
Result<Fd> open_file(const Root& root, const Request& request);

#ifdef PINNEDFS_TEST_HOOKS
// Called by `w` once the descriptor has passed the open's checks, right before the file is
// emptied: a test makes its change there (the directory moved out, a second link) at an exact
// point rather than by a race it might lose.
extern void (*open_truncate_test_hook)();
#endif

}  // namespace pinnedfs::ops
