// Reading the entries of one open directory: the platform seam under readDirectory, glob and the
// recursive remove.
//
// Linux calls getdents64 directly (linux/getdents.cc); elsewhere portable readdir(3) runs on a dup
// of the descriptor (posix/readdir.cc). Why not fdopendir on Linux: it costs an extra fstat + fcntl
// per directory, takes ownership of the descriptor we still need to open the children through, and
// on glibc < 2.39 accepts an O_PATH descriptor whose first readdir fails.
//
// A large directory arrives in several batches, each a separate read of the directory. The first
// is covered by the proof its caller took before listing (core/beneath.h); every later one is
// proven again before any of its names is used, so a directory moved out of the root between two
// batches is never listed.
#pragma once
#include <dirent.h>

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "../core/error.h"

namespace pinnedfs {

// What d_type said about an entry. A hint only: the decision to descend
// is enforced by an O_DIRECTORY|O_NOFOLLOW open, never by this value.
enum class EntryKind : unsigned char { Unknown, Directory, Link, Other };

struct DirEntry {
  std::string name;  // bytes as the kernel gave them; never "." or ".."
  EntryKind kind = EntryKind::Unknown;
};

// Streams the entries of a directory opened O_RDONLY|O_DIRECTORY, allocation-free per entry: each
// name is a view into a buffer the caller owns and may reuse across directories (glob walks
// thousands). The descriptor stays the caller's and its offset is consumed: list it once.
class DirectoryReader {
 public:
  DirectoryReader(int fd, std::vector<char>& buffer);
  ~DirectoryReader();
  DirectoryReader(const DirectoryReader&) = delete;
  DirectoryReader& operator=(const DirectoryReader&) = delete;

  // The next entry other than "." and "..": true with `name` (valid until the next call) and
  // `type` (a DT_* value; DT_UNKNOWN when the file system does not say), or false at the end or on
  // error (`error()` then non-zero: an errno, EIO for a malformed kernel record).
  bool next(std::string_view* name, unsigned char* type);
  int error() const { return error_; }
  // How many reads of the directory the entries so far came from (1 for the first batch). Where
  // the platform hides its reads (readdir), every 512 entries count as one.
  std::size_t batches() const { return batches_; }

 private:
  int fd_;
  int error_ = 0;
  bool done_ = false;
  std::size_t batches_ = 0;
  [[maybe_unused]] std::vector<char>& buffer_;
  [[maybe_unused]] std::size_t pos_ = 0;  // Linux: the unread part of the last getdents64 answer
  [[maybe_unused]] std::size_t len_ = 0;
  [[maybe_unused]] void* dir_ = nullptr;  // elsewhere: the DIR* over a private dup
  [[maybe_unused]] std::size_t delivered_ = 0;  // elsewhere: entries given out so far
};

// Runs before the names of every batch after the first are used: the proof that the directory is
// still beneath the root. Empty: no check (the caller acts on nothing it lists).
using BatchGuard = std::function<Status()>;

// Collects a whole directory into DirEntry values (names owned), for callers that list, then act.
struct DirLister {
  Status list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out,
              const BatchGuard& guard = {});
  std::vector<char> buffer;  // the reader's buffer, reused across the directories of one operation
};

// The refusal of a listing whose names would take more than kMaxListingBytes (core/limits.h).
Error too_many_names(const std::string& shown_path);

inline EntryKind entry_kind(unsigned char d_type) {
  switch (d_type) {
    case DT_DIR: return EntryKind::Directory;
    case DT_LNK: return EntryKind::Link;
    case DT_UNKNOWN: return EntryKind::Unknown;
    default: return EntryKind::Other;
  }
}

#if defined(__linux__)
// Appends the entries of one getdents64 answer (`len` bytes of linux_dirent64 records) to `out`,
// skipping "." and "..". Pure, so the native tests can feed it crafted records. Returns false when
// a record is malformed (a zero or overrunning d_reclen).
bool parse_dirents64(const char* buf, std::size_t len, std::vector<DirEntry>& out);

// One record of a getdents64 answer at `pos`: its name, type and length, or false when malformed.
bool dirent64_at(const char* buf, std::size_t len, std::size_t pos, std::string_view* name,
                 unsigned char* type, std::size_t* reclen);
#endif

}  // namespace pinnedfs
