// What an operation answers. One variant, so the binding marshals every answer in one place.
#pragma once
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "budget.h"
#include "error.h"
#include "root.h"

namespace pinnedfs {

struct Bytes {
  std::string data;  // file content; moved into an external Buffer without a copy
  Charge charge;     // its share of the process's content budget, until it is handed over
};

struct Text {
  std::string text;  // link text, or a root-relative path (realPath)
};

struct Names {
  std::vector<std::string> names;  // root-relative or directory-relative, as the op documents
};

// The enums the binding names for JavaScript, each with its names in one list.
// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_FILE_TYPES(X)                                                                    \
  X(File, "File") X(Directory, "Directory") X(SymbolicLink, "SymbolicLink")                     \
  X(BlockDevice, "BlockDevice") X(CharacterDevice, "CharacterDevice") X(FIFO, "FIFO")           \
  X(Socket, "Socket") X(Unknown, "Unknown")
// clang-format on

enum class FileType : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text) name,
  PINNEDFS_FILE_TYPES(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
};

struct StatInfo {
  FileType type = FileType::Unknown;
  std::uint64_t dev = 0, ino = 0, nlink = 0, rdev = 0, size = 0, blocks = 0, blksize = 0;
  std::uint32_t mode = 0, uid = 0, gid = 0;
  double atime_ms = 0, mtime_ms = 0, ctime_ms = 0, birthtime_ms = -1;  // -1: unknown
  // The same times in whole nanoseconds since the epoch, exact (a double of milliseconds is not):
  // BigIntStats' …Ns. The birth time's is 0 where birthtime_ms says unknown, as Node reports it.
  std::int64_t atime_ns = 0, mtime_ns = 0, ctime_ns = 0, birthtime_ns = 0;
};

struct Resolution {
  std::string path;  // root-relative, on-disk spelling for existing components
  bool has_target = false;
  std::string target;  // link text when has_target
};

struct CreatedDir {
  std::string path;
  Identity identity;
};

struct MkdirsOutcome {
  std::vector<CreatedDir> created;  // every directory this program made, even when it then failed
  bool failed = false;
  Error error;  // why the program stopped, when failed
};

// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_RMDIR_STATUSES(X) \
  X(Removed, "removed") X(Kept, "kept") X(Missing, "missing") X(Refused, "refused")
// clang-format on

enum class RmdirStatus : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text) name,
  PINNEDFS_RMDIR_STATUSES(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
};

struct RmdirMember {
  std::string path;
  RmdirStatus status = RmdirStatus::Removed;
  Error error;  // for Refused (and Kept: why)
};

struct RmdirsOutcome {
  std::vector<RmdirMember> members;  // in the order they were run (child before parent)
  bool stopped = false;              // a required member was refused
};

using Value = std::variant<std::monostate, bool, Bytes, Text, Names, StatInfo, Resolution,
                           MkdirsOutcome, RmdirsOutcome>;

}  // namespace pinnedfs
