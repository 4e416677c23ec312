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

Result<Value> exists(const Root& root, const Request& request);
Result<Value> stat(const Root& root, const Request& request);
Result<Value> read_file(const Root& root, const Request& request);
// read_file into `buffer`'s storage (its capacity reused: the binding recycles buffers so a read
// allocates nothing on the worker's heap).
Result<Value> read_file_into(const Root& root, const Request& request, std::string&& buffer);
Result<Value> read_link(const Root& root, const Request& request);
Result<Value> real_path(const Root& root, const Request& request);
Result<Value> resolve(const Root& root, const Request& request);
Result<Value> read_directory(const Root& root, const Request& request);
Result<Value> glob(const Root& root, const Request& request);
Result<Value> write_file(const Root& root, const Request& request);
Result<Value> make_directory(const Root& root, const Request& request);
Result<Value> mkdirs(const Root& root, const Request& request);
Result<Value> remove(const Root& root, const Request& request);
Result<Value> rmdirs(const Root& root, const Request& request);
Result<Value> rename(const Root& root, const Request& request);
Result<Value> chmod(const Root& root, const Request& request);
Result<Value> chown(const Root& root, const Request& request);
// unchanged.cc: compare-and-swap on one file (replace it, remove it) only while it is what the
// caller expects.
Result<Value> replace_if_unchanged(const Root& root, const Request& request);
Result<Value> remove_if_unchanged(const Root& root, const Request& request);

// Shared by several operations.
StatInfo stat_info(const struct stat& st);
// The contract's rule for objects we read, write, stat, chmod or chown: anything but a directory
// with more than one link (a regular file, a FIFO, a socket, a device, a symbolic link) may have
// its other name outside the root, and acting on it would act on that outside object.
Status refuse_hard_link(const struct stat& st, const std::string& shown_path, const char* syscall);

}  // namespace pinnedfs::ops
