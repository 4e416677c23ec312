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

// The replacement's named temporary for other publishers (unchanged.cc): a new empty file under a
// random name in `dir` (O_CREAT|O_EXCL|O_NOFOLLOW, `mode` less the umask), proven beneath the root
// first. Its descriptor goes to `*fd` and its name to `*name`, which the caller then owns (and
// unlinks on failure).
Status create_named_temp(const Root& root, Held& dir, mode_t mode, const std::string& shown, Fd* fd,
                         std::string* name);
// A random name of the kind the temporaries get, `.pinnedfs-<16 hex><suffix>`: unlikely to
// collide, never trusted not to (every create is O_EXCL, a collision a retry).
std::string random_temp_name(const char* suffix = ".tmp");

// A temporary file an operation makes beside its target (a replacement, a copy). While it has a
// name and is not published, leaving scope unlinks that name, every early return cleaning up so;
// and only while the directory is still beneath the root: a temporary left in a directory that
// has moved out stays there, outside, untouched. An anonymous one (O_TMPFILE) has no name to drop.
class OwnedTemp {
 public:
  OwnedTemp(const Root& root, Held& dir, const std::string& shown)
      : root_(root), dir_(dir), shown_(shown) {}
  OwnedTemp(const OwnedTemp&) = delete;
  OwnedTemp& operator=(const OwnedTemp&) = delete;
  ~OwnedTemp() { drop(); }
  // Unlinks the name now (unless published), and forgets it.
  void drop();
  Fd fd;
  bool anonymous = false;
  const std::string& name() const { return name_; }
  void named(std::string n) { name_ = std::move(n); }
  void published() { published_ = true; }

 private:
  const Root& root_;
  Held& dir_;
  const std::string& shown_;
  std::string name_;
  bool published_ = false;
};

}  // namespace pinnedfs::ops
