// DirLister over the platform's DirectoryReader: one listing code path for every platform.
#include "dir_list.h"

namespace pinnedfs {

Status DirLister::list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out,
                       const BatchGuard& guard) {
  DirectoryReader reader(dirfd, buffer);
  std::string_view name;
  unsigned char type = 0;
  std::size_t proven = 1;
  while (reader.next(&name, &type)) {
    if (reader.batches() > proven && guard) {
      proven = reader.batches();
      auto still = guard();
      if (!still.ok()) return still;
    }
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
