// One function per operation. Each takes the pinned root and a validated request, resolves its
// paths beneath the root (core/resolve.h), applies the contract's checks on the descriptor it acts
// on, and returns a Value or an Error. Files group operations by what they touch:
//   read.cc      exists, stat, readFile
//   link.cc      readLink, realPath, resolve
//   dir.cc       readDirectory
//   glob.cc      glob (matcher in glob_match.cc)
//   write.cc     writeFile (flags, atomic)
//   mkdir.cc     makeDirectory, mkdirs (the program: mkdirs.cc)
//   remove.cc    remove (tree by handle: remove_tree.cc); rmdirs.cc: rmdirs
//   rename.cc    rename
//   attr.cc      chmod, chown
#pragma once
#include "../core/request.h"
#include "../core/resolve.h"
#include "../core/value.h"

namespace pinnedfs::ops {

// One function per row of the operation table, named by its handler column, so a new operation's
// declaration is its row. read_file_into is the one extra entry point (the binding's buffer reuse).
#define PINNEDFS_OP_HANDLER(name, text, operand, effect, form, text_io, handler) \
  Result<Value> handler(const Root& root, const Request& request);
PINNEDFS_OPS(PINNEDFS_OP_HANDLER)
#undef PINNEDFS_OP_HANDLER

// read_file into `buffer`'s storage (its capacity reused: the binding recycles buffers so a read
// allocates nothing on the worker's heap).
Result<Value> read_file_into(const Root& root, const Request& request, std::string&& buffer);

// Shared by several operations.
StatInfo stat_info(const struct stat& st);
// The contract's rule for objects we read, write, stat, chmod or chown: anything but a directory
// with more than one link (a regular file, a FIFO, a socket, a device, a symbolic link) may have
// its other name outside the root, and acting on it would act on that outside object.
Status refuse_hard_link(const struct stat& st, const std::string& shown_path, const char* syscall);

}  // namespace pinnedfs::ops
