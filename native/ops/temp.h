// The temporary file a replacement is written into beside its target (writeFile's replacement, a
// copy), from its creation to its publication under the target's name, and the check of what
// stands at that name before it is replaced. One lifecycle for every operation that publishes a
// whole file: temp.cc, temp_target.cc. Internal to native/ops.
#pragma once
#include <sys/stat.h>

#include <string>

#include "ops.h"

namespace pinnedfs::ops {

// A random name of the kind the temporaries get, `.pinnedfs-<16 hex><suffix>`: unlikely to
// collide, never trusted not to (every create is O_EXCL, a collision a retry).
std::string random_temp_name(const char* suffix = ".tmp");

// A temporary file an operation makes beside its target. While it has a name and is not
// published, leaving scope unlinks that name, every early return cleaning up so; and only while
// the directory is still beneath the root: a temporary left in a directory that has moved out stays
// there, outside, untouched. An anonymous one (O_TMPFILE) has no name to drop.
//
// Every name it makes, moves or drops in `dir` goes through a descriptor `dir` proves just before
// that act: the creation, each attempt at a random name, the publication and the cleanup.
class OwnedTemp {
 public:
  // `suffix`: what its random names end with (a string literal: it is kept, not copied).
  OwnedTemp(const Root& root, Held& dir, const std::string& shown, const char* suffix = ".tmp")
      : root_(root), dir_(dir), shown_(shown), suffix_(suffix) {}
  OwnedTemp(const OwnedTemp&) = delete;
  OwnedTemp& operator=(const OwnedTemp&) = delete;
  ~OwnedTemp() { drop(); }

  // An anonymous O_TMPFILE in `dir` where `allow_anonymous` and the file system has one (no name
  // until publish: nothing to see, open or leave behind); else create_named. `mode` less the umask.
  Status create(mode_t mode, bool allow_anonymous);
  // A new empty file under a random name (O_CREAT|O_EXCL|O_NOFOLLOW, `mode` less the umask),
  // another name on EEXIST, a bounded number of times.
  Status create_named(mode_t mode);
  // Publishes the complete file as `leaf`. `create_only`: only where nothing has that name (EEXIST
  // otherwise): an anonymous file is linked straight to it, a named one renamed without replacing.
  // Otherwise an anonymous file is first given a random name (linkat never replaces), and the name
  // is renamed over `leaf`.
  Status publish(const std::string& leaf, bool create_only);

  // Unlinks the name now (unless published), and forgets it.
  void drop();
  // Takes `n`, a name the caller just made in `dir`, as this temporary's own (unlinked with it).
  void adopt(std::string n) { name_ = std::move(n); }
  // The name is the caller's from here: never unlinked by this object.
  void release() { published_ = true; }

  Fd fd;
  bool anonymous() const { return anonymous_; }
  const std::string& name() const { return name_; }

 private:
  Status link_random_name();
  Status rename_onto(int dirfd, const std::string& leaf, bool create_only);

  const Root& root_;
  Held& dir_;
  const std::string& shown_;
  const char* suffix_;
  std::string name_;
  bool anonymous_ = false;
  bool published_ = false;
};

// What stands at a target's name, looked at before it is replaced: whether there is anything, and
// its lstat. Whatever is there may be replaced only if it is a regular file with one link on the
// root's mount, which the caller may write.
struct Target {
  bool exists = false;
  struct stat st {};
};

// Looks at `leaf` in `dirfd` (a held directory's look(): this looks only) for a replacement.
// `syscall` names the operation in each refusal ("open" for writeFile, "copyfile" for a copy).
// `exclusive`: anything at the name, a link included, is EEXIST, as open(O_CREAT|O_EXCL) answers.
// Refused otherwise: a link, a directory (a mount point there as a mount point), a hard-linked
// file, a FIFO, socket or device, a file on another mount, a file the caller may not write.
Status check_target(const Root& root, int dirfd, const std::string& leaf, const char* syscall,
                    const std::string& shown, bool exclusive, Target* t);

}  // namespace pinnedfs::ops
