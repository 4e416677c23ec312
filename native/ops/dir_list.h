// Listing one open directory whole, over the platform's DirectoryReader (platform/platform.h): the
// layer under readDirectory, glob and the recursive remove.
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
#include "../platform/platform.h"

namespace pinnedfs {

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

}  // namespace pinnedfs
