// Pieces writeFile's two paths share: the in-place write (write.cc) and the replacement
// (write_atomic.cc). Internal to native/ops.
#pragma once
#include <string>

#include "ops.h"

namespace pinnedfs::ops {

// Writes all of `data` to `fd` at its current offset: EINTR and short writes retried. A write(2)
// that accepts nothing of a non-empty buffer is reported as WriteZero, never looped on.
Status write_all(int fd, const std::string& data, const std::string& shown_path);

// fsync, or on macOS F_FULLFSYNC (fsync there only reaches the drive's cache).
Status sync_file(int fd, const std::string& shown_path);

// What a replacement did. InPlace: nothing was changed, and the caller writes in place instead
// (only when neither request.atomic nor an exclusive flag forbids it; see write_atomic.cc).
enum class Replaced : unsigned char { Done, InPlace };

// Replaces `path` with a new file holding `request.data`: a temporary in the same directory, then
// renameat over the target (wx, wx+: published only where nothing has the name). The target is
// never half-written; `request.durable` adds the fsyncs that make the new content survive a crash
// of the machine, not only of the process.
Result<Replaced> write_atomic(const Root& root, const LexedPath& path, const Request& request);
// The same, with O_TMPFILE disallowed when `allow_tmpfile` is false: the named-temp fallback that
// file systems without O_TMPFILE (and macOS) take, selectable so the native tests run it here.
Result<Replaced> write_atomic_with(const Root& root, const LexedPath& path, const Request& request,
                                   bool allow_tmpfile);

// Default permission bits of a file writeFile creates, as Node's fs.writeFile (0o666, umask
// applies).
constexpr mode_t kDefaultFileMode = 0666;

}  // namespace pinnedfs::ops
