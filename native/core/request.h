// One operation, as the core sees it: already marshalled out of JavaScript, paths relative to the
// root (the TypeScript layer strips the root prefix without cleaning the text; the core lexes).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "root.h"

namespace pinnedfs {

enum class Op : unsigned char {
  Exists,
  Stat,
  ReadFile,        // readFile and readFileString (decoding happens in JavaScript, as Node does)
  ReadDirectory,
  ReadLink,
  RealPath,
  Resolve,
  Glob,
  MakeDirectory,
  Remove,
  Rename,
  Chmod,
  Chown,
  WriteFile,       // writeFile and writeFileString
  Mkdirs,          // pinned-parent directory program: planned creation
  Rmdirs,          // pinned-parent directory program: owned cleanup
  Count
};

// Node/Effect open flags for writeFile.
enum class OpenFlag : unsigned char { R, RPlus, W, WX, WPlus, WXPlus, A, AX, APlus, AXPlus };

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
};

struct Request {
  Op op = Op::Exists;
  std::string path;                    // root-relative; "" is the root
  std::string to;                      // rename: destination; glob: the directory matched under
  std::string pattern;                 // glob: pattern relative to `to`
  std::vector<std::string> exclude;    // glob: exclude patterns relative to `to`
  bool recursive = false;
  bool force = false;
  bool atomic = false;                 // writeFile: temp + fsync + renameat + dir fsync
  bool dot = false;                    // glob: wildcards match leading '.'
  bool has_mode = false;
  std::uint32_t mode = 0;
  std::int64_t uid = -1;
  std::int64_t gid = -1;
  OpenFlag flag = OpenFlag::W;
  std::string data;                    // writeFile: the bytes
  std::uint64_t max_bytes = 0;         // readFile: refuse a file larger than this (0 = no limit)
  std::vector<MkdirsEntry> plan;       // mkdirs
  std::vector<OwnedDir> owned;         // rmdirs
  std::vector<HookStep> after_plan;    // mkdirs: test hook, see HookStep
};

}  // namespace pinnedfs
