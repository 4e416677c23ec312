// What a directory entry or an opened object is: the one kind every part of the core speaks (a
// listing's d_type hint, a glob's visit, a confinement's hold and its wire answer, where the values
// are the numbers sent).
#pragma once
#include <dirent.h>
#include <sys/stat.h>

#include <cstdint>

namespace pinnedfs {

enum class EntryKind : std::uint8_t { Unknown = 0, File = 1, Directory = 2, Link = 3, Other = 4 };

// From an object's st_mode.
inline EntryKind entry_kind_of_mode(mode_t mode) {
  if (S_ISDIR(mode)) return EntryKind::Directory;
  if (S_ISLNK(mode)) return EntryKind::Link;
  if (S_ISREG(mode)) return EntryKind::File;
  return EntryKind::Other;
}

// From a listing's d_type: a hint only. The decision to descend is enforced by an
// O_DIRECTORY|O_NOFOLLOW open, never by this value; DT_UNKNOWN (a file system that does not say)
// is Unknown.
inline EntryKind entry_kind(unsigned char d_type) {
  switch (d_type) {
    case DT_DIR:
      return EntryKind::Directory;
    case DT_LNK:
      return EntryKind::Link;
    case DT_REG:
      return EntryKind::File;
    case DT_UNKNOWN:
      return EntryKind::Unknown;
    default:
      return EntryKind::Other;
  }
}

}  // namespace pinnedfs
