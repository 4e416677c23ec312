// One operation, as the core sees it: already marshalled out of JavaScript, paths relative to the
// root (the TypeScript layer strips the root prefix without cleaning the text; the core lexes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "root.h"

namespace pinnedfs {

// The operations, with the name each has in the binding's `ops` table, in wire-code order.
// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_OPS(X)                                                                           \
  X(Exists, "exists")                                                                             \
  X(Stat, "stat")                                                                                 \
  X(ReadFile, "readFile")           /* readFile and readFileString (decoded in JavaScript) */     \
  X(ReadDirectory, "readDirectory")                                                               \
  X(ReadLink, "readLink")                                                                         \
  X(RealPath, "realPath")                                                                         \
  X(Resolve, "resolve")                                                                           \
  X(Glob, "glob")                                                                                 \
  X(MakeDirectory, "makeDirectory")                                                               \
  X(Remove, "remove")                                                                             \
  X(Rename, "rename")                                                                             \
  X(Chmod, "chmod")                                                                               \
  X(Chown, "chown")                                                                               \
  X(WriteFile, "writeFile")         /* writeFile and writeFileString */                           \
  X(Mkdirs, "mkdirs")               /* pinned-parent directory program: planned creation */       \
  X(Rmdirs, "rmdirs")               /* pinned-parent directory program: owned cleanup */     \
  X(Open, "open")                   /* a descriptor for a file handle: binding open() only */    \
  X(CopyFile, "copyFile")           /* fileops: one regular file, published atomically */        \
  X(Cp, "cp")                       /* fileops: a file, link or (recursive) tree */              \
  X(Symlink, "symlink")             /* fileops: a link whose text stays beneath the root */      \
  X(Link, "link")                   /* fileops: a hard link, from held parents */                \
  X(Utimes, "utimes")               /* fileops: access and modification times */                 \
  X(Truncate, "truncate")           /* fileops: ftruncate of a regular, single-link file */      \
  X(Lchown, "lchown")               /* fileops: chown of a final link itself */
// clang-format on

enum class Op : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text) name,
  PINNEDFS_OPS(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
      Count
};

// Node/Effect open flags for writeFile, with the flag text each stands for.
// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_OPEN_FLAGS(X)                                                                    \
  X(R, "r") X(RPlus, "r+") X(W, "w") X(WX, "wx") X(WPlus, "w+") X(WXPlus, "wx+") X(A, "a")      \
  X(AX, "ax") X(APlus, "a+") X(AXPlus, "ax+")
// clang-format on

enum class OpenFlag : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text) name,
  PINNEDFS_OPEN_FLAGS(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
};

struct MkdirsEntry {
  std::string path;
  std::uint32_t mode = 0777;
};

// Test hook for the mkdirs program: file-system steps run inside the same trip, after planning and
// before the first creation, so a test can make "something appeared after planning" happen
// deterministically. Every step is confined beneath the root exactly as the public operations are
// (mkdir, an empty file, rmdir, rename of one entry): nothing a caller could not already do.
struct HookStep {
  enum class Kind : unsigned char { Mkdir, File, Rmdir, Rename };
  Kind kind = Kind::Mkdir;
  std::string path;
  std::string to;  // rename only
};

struct OwnedDir {
  std::string path;
  Identity identity;
  bool optional = false;
  // Removed only under flock(LOCK_EX|LOCK_NB): a directory another confined launch holds a lease
  // on (LOCK_SH) is kept (ops/confine.h).
  bool leased = false;
};

struct Request {
  Op op = Op::Exists;
  std::string path;                  // root-relative; "" is the root
  std::string to;                    // rename: destination; glob: the directory matched under
  std::string pattern;               // glob: pattern relative to `to`
  std::vector<std::string> exclude;  // glob: exclude patterns relative to `to`
  bool recursive = false;
  bool force = false;
  // writeFile with a w-family flag (w, w+, wx, wx+) replaces the whole file: a temporary beneath
  // the same directory, then renameat (wx: a create that fails if the name exists). `atomic`
  // insists on it (a failure rather than an in-place write); `in_place` asks for Node's
  // truncate-and-write instead. Neither: the replacement, or in place where the directory takes no
  // temporary or the owner could not be kept (ops/write_atomic.cc says when).
  bool atomic = false;
  bool in_place = false;
  bool durable =
      false;         // writeFile: fsync the data before it is published, and the directory after
  bool dot = false;  // glob: wildcards match leading '.'
  bool unnamed = false;     // glob: also answer the names that are not UTF-8 (see ops/glob.cc)
  bool no_replace = false;  // rename: an existing destination is refused by the rename itself
  bool has_mode = false;
  std::uint32_t mode = 0;
  std::int64_t uid = -1;
  std::int64_t gid = -1;
  OpenFlag flag = OpenFlag::W;
  std::string data;                  // writeFile: the bytes, or their base64 text (see base64)
  bool base64 = false;               // writeFile: `data` is strict base64, decoded on the worker
  std::uint64_t max_bytes = 0;       // readFile: refuse a file larger than this (0 = no limit)
  std::vector<MkdirsEntry> plan;     // mkdirs
  std::vector<OwnedDir> owned;       // rmdirs
  std::vector<HookStep> after_plan;  // mkdirs: test hook, see HookStep
  // fileops (copyFile, cp, symlink, link, utimes, truncate, lchown); `to` is the destination.
  std::string target;           // symlink: the link's text
  std::uint32_t copy_mode = 0;  // copyFile, cp: fs.constants.COPYFILE_* bits
  bool error_on_exist = false;  // cp: with force false, an existing file is an error
  double atime = 0;             // utimes: seconds since the epoch, as fs.utimes takes them
  double mtime = 0;
  std::uint64_t length = 0;  // truncate
};

}  // namespace pinnedfs
