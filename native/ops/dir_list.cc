// DirLister over the platform's DirectoryReader: one listing code path for every platform.
#include "dir_list.h"

#include "../core/alloc.h"
#include "../core/cancel.h"
#include "../core/limits.h"
#include "../platform/platform.h"

namespace pinnedfs {

Error too_many_names(const std::string& shown_path) {
  return refusal(Refusal::TooLarge, "getdents64", shown_path,
                 "listing exceeds " + std::to_string(kMaxListingBytes >> 20) +
                     " MiB of names: refused rather than held in memory",
                 EFBIG);
}

Status DirLister::list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out,
                       const BatchGuard& guard) {
  DirectoryReader reader(dirfd, buffer);
  std::string_view name;
  unsigned char type = 0;
  std::size_t proven = 1;
  std::size_t bytes = 0;
  // Checked once per directory and per batch: a caller's abort stops a listing, a glob or the
  // listing step of a recursive remove between reads.
  if (cancelled()) return cancelled_error("getdents64", shown_path);
  while (reader.next(&name, &type)) {
    if (reader.batches() > proven && guard) {
      proven = reader.batches();
      if (cancelled()) return cancelled_error("getdents64", shown_path);
      auto still = guard();
      if (!still.ok()) return still;
    }
    // One directory's entries are sized by the disk: bounded, so a directory made huge on purpose
    // is a refusal, never an allocation that aborts the process.
    bytes += name.size() + kNameOverhead;
    if (bytes > kMaxListingBytes) return too_many_names(shown_path);
    if (!room_for_one(out))
      return out_of_memory(out.capacity() * 2 * sizeof(DirEntry), "getdents64", shown_path);
    out.push_back(DirEntry{std::string(name), entry_kind(type)});
  }
  if (reader.error() != 0) {
    Error e = sys_error(reader.error(), "getdents64", shown_path);
    if (reader.error() == EIO) e.description = "the kernel returned a malformed directory record";
    return e;
  }
  return ok_status();
}

}  // namespace pinnedfs
