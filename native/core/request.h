// One operation, as the core sees it: already marshalled out of JavaScript, paths relative to the
// root (the TypeScript layer strips the root prefix without cleaning the text; the core lexes).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "root.h"

namespace pinnedfs {

// The operation table: one row per operation, in wire-code order, from which the enum, the
// binding's `ops` and `opTable` exports and (through them) every TypeScript list of operations are
// derived. Columns:
//   name     the enum member
//   text     the operation's name in the binding and on the wire
//   operand  what it carries beside the root: Path (one path), PathTo (path and `to`), Glob
//            (pattern, `to`, excludes), Data (one path and its bytes), Plan (a mkdirs plan), Owned
//            (the directories an rmdirs may remove), Method (a PinnedRoot method's own operands,
//            read by the binding for that operation: never on the executor wire, so in none of
//            the protocol's lists)
//   effect   Read (reads what it names), Write (changes it), Resolve (says where a path leads)
//   form     Compact: a path (and readDirectory's `recursive`) is all it takes, so it may travel on
//            the compact calls (`call`, `readMany`); Full: only as a request object
//   text_io  Text: the wire also has `<text>String`, the same call with the bytes decoded or
//            encoded in JavaScript; Bytes: no such form
//   handler  the function in `pinnedfs::ops` that performs it, `Result<Value>(const Root&, const
//            Request&)`: ops.h declares it and execute()'s dispatch calls it, both from this
//            column, so the body in its own native/ops/<op>.cc is all a new row needs beside it
// A row in the older two-column shape, `X(Name, "text")`, converts by appending the five columns;
// one in the six-column shape by appending its handler, e.g. `..., Bytes, utimes)`.
// One entry per line, as written (clang-format would pack the list).
// clang-format off
#define PINNEDFS_OPS(X)                                                                            \
  X(Exists, "exists", Path, Read, Compact, Bytes, exists)                                          \
  X(Stat, "stat", Path, Read, Compact, Bytes, stat)                                                \
  X(ReadFile, "readFile", Path, Read, Compact, Text, read_file)                                    \
  X(ReadDirectory, "readDirectory", Path, Read, Compact, Bytes, read_directory)                    \
  X(ReadLink, "readLink", Path, Read, Compact, Bytes, read_link)                                   \
  X(RealPath, "realPath", Path, Read, Compact, Bytes, real_path)                                   \
  X(Resolve, "resolve", Path, Resolve, Compact, Bytes, resolve)                                    \
  X(Glob, "glob", Glob, Read, Full, Bytes, glob)                                                   \
  X(MakeDirectory, "makeDirectory", Path, Write, Full, Bytes, make_directory)                      \
  X(Remove, "remove", Path, Write, Full, Bytes, remove)                                            \
  X(Rename, "rename", PathTo, Write, Full, Bytes, rename)                                          \
  X(Chmod, "chmod", Path, Write, Full, Bytes, chmod)                                               \
  X(Chown, "chown", Path, Write, Full, Bytes, chown)                                               \
  X(WriteFile, "writeFile", Data, Write, Full, Text, write_file)                                   \
  X(Mkdirs, "mkdirs", Plan, Write, Full, Bytes, mkdirs) /* directory program: creation */          \
  X(Rmdirs, "rmdirs", Owned, Write, Full, Bytes, rmdirs) /* directory program: cleanup */          \
  X(Open, "open", Method, Read, Full, Bytes, open_unbatched) /* a descriptor: open() only */       \
  X(CopyFile, "copyFile", Method, Write, Full, Bytes, copy_file) /* a regular file, whole */       \
  X(Cp, "cp", Method, Write, Full, Bytes, cp) /* a file, link or tree */                           \
  X(Symlink, "symlink", Method, Write, Full, Bytes, symlink) /* its text stays beneath */          \
  X(Link, "link", Method, Write, Full, Bytes, link) /* a hard link, held parents */                \
  X(Utimes, "utimes", Method, Write, Full, Bytes, utimes) /* atime and mtime */                    \
  X(Truncate, "truncate", Method, Write, Full, Bytes, truncate) /* a regular single-link file */   \
  X(Lchown, "lchown", Method, Write, Full, Bytes, lchown) /* chown of a final link */       \
  X(ReplaceIfUnchanged, "replaceIfUnchanged", Method, Write, Full, Bytes, replace_if_unchanged) /* compare-and-swap */ \
  X(RemoveIfUnchanged, "removeIfUnchanged", Method, Write, Full, Bytes, remove_if_unchanged) /* compare-and-remove */
// clang-format on

enum class Op : unsigned char {
#define PINNEDFS_ENUM_MEMBER(name, text, operand, effect, form, text_io, handler) name,
  PINNEDFS_OPS(PINNEDFS_ENUM_MEMBER)
#undef PINNEDFS_ENUM_MEMBER
      Count
};

// The table's columns as values, for the binding's `opTable` export and for the core's own checks.
enum class OpOperand : unsigned char { Path, PathTo, Glob, Data, Plan, Owned, Method };
enum class OpEffect : unsigned char { Read, Write, Resolve };
enum class OpForm : unsigned char { Compact, Full };
enum class OpText : unsigned char { Bytes, Text };

struct OpRow {
  Op op;
  const char* text;
  OpOperand operand;
  OpEffect effect;
  OpForm form;
  OpText text_io;
};

inline constexpr OpRow kOpTable[] = {
#define PINNEDFS_OP_ROW(name, text, operand, effect, form, text_io, handler) \
  {Op::name, text, OpOperand::operand, OpEffect::effect, OpForm::form, OpText::text_io},
    PINNEDFS_OPS(PINNEDFS_OP_ROW)
#undef PINNEDFS_OP_ROW
};
static_assert(sizeof(kOpTable) / sizeof(kOpTable[0]) == static_cast<std::size_t>(Op::Count),
              "one table row per operation");

// Whether `op` may travel on the compact calls: a path (and `recursive`) and nothing else.
constexpr bool path_only(Op op) {
  return op < Op::Count && kOpTable[static_cast<std::size_t>(op)].form == OpForm::Compact;
}

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
  // remove, recursive: where the directory holds two or more directories, remove only its other
  // entries and answer the directory's identity ("dev:ino") followed by those directories' names,
  // keeping the directory; the caller removes them side by side, each with that identity as
  // `expect_identity` (a remove whose parent is no longer that directory does nothing), then the
  // directory itself (src/root/removeWide.ts). Otherwise the whole tree, as without.
  bool split = false;
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
  // replaceIfUnchanged, removeIfUnchanged (ops/unchanged.cc): what the caller expects the file to
  // be, its content (`expect`) and/or its identity (`expect_identity`); at least one is given.
  // remove: the identity its parent directory must have (see `split`).
  std::string expect;
  bool has_expect = false;
  Identity expect_identity;
  bool has_expect_identity = false;
};

}  // namespace pinnedfs
