// Pieces writeFile's two paths share: the in-place write (write.cc) and the atomic replacement
// (write_atomic.cc). Internal to native/ops.
#pragma once
#include <string>

#include "ops.h"

namespace pinnedfs::ops {

// Writes all of `data` to `fd` at its current offset: EINTR and short writes retried. A write(2)
// that accepts nothing of a non-empty buffer is reported as WriteZero, never looped on.
Status write_all(int fd, const std::string& data, const std::string& shown_path);

// Replaces `path` with a new file holding `request.data`: temp file in the same directory, fsync,
// renameat over the target, fsync the directory. The target is never half-written.
Result<Value> write_atomic(const Root& root, const LexedPath& path, const Request& request);
// The same, with O_TMPFILE disallowed when `allow_tmpfile` is false: the named-temp fallback that
// file systems without O_TMPFILE (and macOS) take, selectable so the native tests run it here.
Result<Value> write_atomic_with(const Root& root, const LexedPath& path, const Request& request,
                                bool allow_tmpfile);

// Default permission bits of a file writeFile creates, as Node's fs.writeFile (0o666, umask
// applies).
constexpr mode_t kDefaultFileMode = 0666;

}  // namespace pinnedfs::ops
