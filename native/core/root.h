// The pinned root: one directory handle, opened once by a trusted path and never reopened by path.
//
// Shared ownership is the lifetime rule: every operation in flight holds a
// reference, so closing the root from JavaScript only drops the caller's reference and the
// descriptor is closed when the last operation finishes. A late openat on a closed, reused number
// cannot happen.
#pragma once
#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>

#include "error.h"
#include "fd.h"

namespace pinnedfs {

// How paths beneath the root are resolved.
//  Kernel: one call the kernel confines (Linux openat2 RESOLVE_BENEATH|NO_SYMLINKS|NO_MAGICLINKS;
//          macOS O_NOFOLLOW_ANY on 11+).
//  Walk:   one openat(O_NOFOLLOW|O_DIRECTORY) per component, portable, selectable for tests.
enum class Strategy : unsigned char { Auto = 0, Kernel = 1, Walk = 2 };

const char* strategy_name(Strategy s);

// What a symbolic link beneath the root gets.
//  Refuse: every link, anywhere on a path (the default, and what the host extension promises).
//  Within: a link is followed while its resolution stays beneath the root (intermediate components
//          always; the final one for reads and listings only). A link whose text is absolute, or
//          whose ".." would climb above the root, is refused as an escape; 40 links on one path is
//          ELOOP; a mount is never crossed. docs/pinnedroot.md, "Links within the root".
enum class Links : unsigned char { Refuse = 0, Within = 1 };

struct Identity {
  std::uint64_t dev = 0;
  std::uint64_t ino = 0;
  bool operator==(const Identity& o) const { return dev == o.dev && ino == o.ino; }
  bool operator!=(const Identity& o) const { return !(*this == o); }
  std::string str() const;  // "dev:ino", decimal, from the 64-bit values
};

// The identity fstat/fstatat reported, widened as Node reports it.
Identity identity_of(const struct stat& st);

// A root's identity as PinnedRoot.identity, the extension's identifyRoot and every request's
// rootIdentity spell it: dev:ino, and what tells this directory from one that got the same inode
// number after it was deleted (ext4 hands a freed number out again at once). Its birth time where
// the file system records one (statx STATX_BTIME; macOS st_birthtimespec), else its generation
// number (FS_IOC_GETVERSION: ext4 without birth times, among others), else nothing: there the
// identity is dev:ino and a reused number goes unseen (docs/root-identity.md).
//   "dev:ino:b<sec>.<nsec, 9 digits>"   "dev:ino:g<generation>"   "dev:ino"
struct RootIdentity {
  enum class Kind : unsigned char { Plain, Birth, Generation };
  Identity id;
  Kind kind = Kind::Plain;
  std::int64_t birth_sec = 0;
  std::uint32_t birth_nsec = 0;
  std::uint64_t generation = 0;
  bool operator==(const RootIdentity& o) const {
    return id == o.id && kind == o.kind && birth_sec == o.birth_sec && birth_nsec == o.birth_nsec &&
           generation == o.generation;
  }
  bool operator!=(const RootIdentity& o) const { return !(*this == o); }
  std::string str() const;
};

// The mount a descriptor lies on: Linux's mount id where the kernel tells it, else only the
// device. Two handles are on the same mount when their ids match (or, lacking ids, their devices):
// a same-device bind mount has the root's st_dev but its own mount id.
struct MountIdentity {
  std::uint64_t id = 0;
  bool has_id = false;
  std::uint64_t dev = 0;
  bool same_as(const MountIdentity& o) const {
    if (has_id && o.has_id) return id == o.id;
    return dev == o.dev;
  }
};

class Root {
 public:
  // Opens `path` (which may itself pass through links: it is trusted) and records its identity.
  // `requested` Auto probes the kernel strategy and falls back to the walk where it is missing.
  static Result<std::shared_ptr<Root>> pin(const std::string& path, Strategy requested,
                                           Links links = Links::Refuse);
  // Pins the directory `relative` names beneath `parent`, resolved as every operation resolves
  // (core/root_beneath.cc). Its path is the parent's joined with the lexed relative path.
  static Result<std::shared_ptr<Root>> pin_beneath(const Root& parent, const std::string& relative);

  int fd() const { return fd_.get(); }
  // dev:ino of the pinned directory: what the proofs compare handles with.
  const Identity& identity() const { return identity_.id; }
  // The identity a caller authorizes the root by (see RootIdentity).
  const RootIdentity& root_identity() const { return identity_; }
  const MountIdentity& mount() const { return mount_; }
  const std::string& path() const { return path_; }
  Strategy strategy() const { return strategy_; }
  Links links() const { return links_; }

  // Confirms the root path still names the pinned directory. The path
  // is trusted, so stat(2) may follow links in it; what matters is the identity it lands on.
  //
  // `alias`, when given, is another spelling of the root the caller also trusts (the extension's
  // logicalRoot): it must land on the pinned directory too, or paths the caller spelled through it
  // would be answered from a directory it does not name.
  Status verify_path_identity(const std::string& alias = {}) const;

 private:
  Root(Fd fd, RootIdentity id, MountIdentity mount, std::string path, Strategy s, Links links)
      : fd_(std::move(fd)),
        identity_(id),
        mount_(mount),
        path_(std::move(path)),
        strategy_(s),
        links_(links) {}
  Fd fd_;
  RootIdentity identity_;
  MountIdentity mount_;
  std::string path_;
  Strategy strategy_;
  Links links_;
};

// dev:ino of a directory named by a trusted path, without pinning it.
Result<Identity> identify_path(const std::string& path);
// The RootIdentity of a directory named by a trusted path, without pinning it (identifyRoot):
// what Root::pin of the same directory records.
Result<RootIdentity> identify_root(const std::string& path);
// The RootIdentity of an open directory descriptor; `shown` names it in an error.
Result<RootIdentity> identify_fd(int fd, const std::string& shown);

}  // namespace pinnedfs
