// The search for a mount crossing (crossing.h). Plain POSIX, so that it is built and tested on
// Linux although its main user is macOS.
#include "crossing.h"

#include <sys/stat.h>

#include "../platform/platform.h"
#include "eintr.h"
#include "fd.h"

namespace pinnedfs {

namespace {

// The mount of the entry `name` in `dirfd`, already fstatat'ed (no link followed) as `st`. Where
// mounts have no ids the device is the mount (macOS: every volume its own st_dev), and the
// fstatat said it, so nothing is opened: no device or FIFO is ever opened by this search. With
// ids (Linux), the entry is opened as a handle that reads nothing (O_PATH) and asked.
bool mount_of_entry(int dirfd, const std::string& name, const struct stat& st,
                    const MountIdentity& base, MountIdentity* out) {
  if (!base.has_id) {
    out->dev = static_cast<std::uint64_t>(st.st_dev);
    out->has_id = false;
    return true;
  }
  int fd = retry_eintr([&] { return ::openat(dirfd, name.c_str(), kObjectHandleFlags); });
  if (fd < 0) return false;
  Fd held(fd);
  auto m = platform::mount_of(held.get());
  if (!m.ok()) return false;
  *out = m.value();
  return true;
}

}  // namespace

std::string leading_components(const std::string& relative, std::size_t count) {
  std::size_t end = 0;
  for (std::size_t i = 0; i < count && end != std::string::npos; ++i) {
    end = relative.find('/', i == 0 ? 0 : end + 1);
  }
  return count == 0 ? std::string() : relative.substr(0, end);
}

std::size_t first_crossing(int dirfd, const MountIdentity& base, const std::string& relative) {
  if (relative.empty() || relative == ".") return 0;
  Fd cur;
  std::size_t start = 0;
  for (std::size_t count = 1;; ++count) {
    std::size_t slash = relative.find('/', start);
    bool last = slash == std::string::npos;
    std::string name = relative.substr(start, last ? std::string::npos : slash - start);
    int in = cur.valid() ? cur.get() : dirfd;
    struct stat st;
    if (::fstatat(in, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return 0;
    if (S_ISLNK(st.st_mode)) return 0;
    MountIdentity here;
    if (!mount_of_entry(in, name, st, base, &here)) return 0;
    if (!base.same_as(here)) return count;
    if (last || !S_ISDIR(st.st_mode)) return 0;
    int next = retry_eintr([&] { return ::openat(in, name.c_str(), kDirHandleFlags); });
    if (next < 0) return 0;
    cur = Fd(next);
    start = slash + 1;
  }
}

}  // namespace pinnedfs
