// Reading a directory by descriptor, allocation-free per entry: names are views into a buffer the
// caller owns and reuses. Linux calls getdents64 directly (fdopendir would add an fstat and an
// fcntl per directory and take ownership of the descriptor); elsewhere readdir on a private dup.
//
// NOTE: a second listing helper lives on the `reads` branch (ops/dir.cc); the two are meant to be
// unified once both have landed.
#pragma once
#include <dirent.h>

#include <string_view>
#include <vector>

#include "../core/fd.h"

namespace pinnedfs {

class DirectoryReader {
 public:
  // `fd` must be open for reading (not O_PATH) and positioned at the start; it stays the caller's.
  DirectoryReader(int fd, std::vector<char>& buffer);
  ~DirectoryReader();
  DirectoryReader(const DirectoryReader&) = delete;
  DirectoryReader& operator=(const DirectoryReader&) = delete;

  // The next entry other than "." and "..": true and `name`/`type` (a DT_* value, DT_UNKNOWN when
  // the file system does not say) set, or false at the end or on error (`error()` then non-zero).
  // `name` is valid until the following call.
  bool next(std::string_view* name, unsigned char* type);
  int error() const { return error_; }

 private:
  int fd_;
  int error_ = 0;
  bool done_ = false;
#if defined(__linux__)
  std::vector<char>& buffer_;
  std::size_t pos_ = 0, len_ = 0;
#else
  DIR* dir_ = nullptr;
#endif
};

}  // namespace pinnedfs
