// Reading the entries of one open directory: the platform seam under readDirectory.
//
// Linux calls getdents64 directly (linux/getdents.cc); elsewhere portable readdir(3) runs on a dup
// of the descriptor (posix/readdir.cc). Why not fdopendir on Linux (platform-notes §1): it costs an
// extra fstat + fcntl per directory, takes ownership of the descriptor we still need to open the
// children through, and on glibc < 2.39 accepts an O_PATH descriptor whose first readdir fails.
#pragma once
#include <dirent.h>

#include <cstddef>
#include <string>
#include <vector>

#include "../core/error.h"

namespace pinnedfs {

// What d_type said about an entry. A hint only (platform-notes pitfall 8): the decision to descend
// is enforced by an O_DIRECTORY|O_NOFOLLOW open, never by this value.
enum class EntryKind : unsigned char { Unknown, Directory, Link, Other };

struct DirEntry {
  std::string name;  // bytes as the kernel gave them; never "." or ".."
  EntryKind kind = EntryKind::Unknown;
};

// Lists a directory opened O_RDONLY|O_DIRECTORY. The descriptor stays open and owned by the caller
// (a recursive listing opens the children through it); its offset is consumed, so each descriptor
// is listed once. One lister is reused across a recursive listing so its buffer is allocated once.
struct DirLister {
  Status list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out);
  // Linux: the getdents64 buffer. Public so the readdir build, which needs none, has no unused
  // private field to warn about.
  std::vector<char> buffer;
};

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
// a record is malformed (a zero or overrunning d_reclen): the caller reports EIO rather than loop.
bool parse_dirents64(const char* buf, std::size_t len, std::vector<DirEntry>& out);
#endif

}  // namespace pinnedfs
