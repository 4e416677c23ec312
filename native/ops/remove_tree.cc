#include "remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <functional>
#include <vector>

#if defined(__linux__)
#include <sys/syscall.h>
#endif

namespace pinnedfs::ops {

namespace {

// A directory that keeps gaining entries while we empty it is someone racing us; give up visibly
// rather than loop for ever.
constexpr int kMaxPasses = 64;

using EntryFn = std::function<Status(const std::string& name, unsigned char type)>;

// Lists `dirfd` (freshly opened, so from its start), calling `fn` per entry other than "." and "..". This is a minimal
// private lister for removal only (readDirectory has its own in dir.cc). The type is d_type, a
// hint: every decision it steers is enforced by the no-follow open or unlinkat that follows.
#if defined(__linux__)
struct LinuxDirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

Status list_entries(int dirfd, const std::string& shown, const EntryFn& fn) {
  // 32 KiB, as platform-notes suggests; the buffer is read whole before any entry is acted on.
  alignas(8) static thread_local char buf[32 * 1024];
  for (;;) {
    long n;
    do n = ::syscall(SYS_getdents64, dirfd, buf, sizeof buf);
    while (n < 0 && errno == EINTR);
    if (n < 0) return sys_error(errno, "getdents64", shown);
    if (n == 0) return ok_status();
    // Copy the names out first: fn recurses, and the recursion reuses this thread's buffer.
    std::vector<std::pair<std::string, unsigned char>> batch;
    for (long off = 0; off < n;) {
      auto* d = reinterpret_cast<LinuxDirent64*>(buf + off);
      off += d->d_reclen;
      const char* name = d->d_name;
      if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
      batch.emplace_back(name, d->d_type);
    }
    for (auto& [name, type] : batch) {
      auto st = fn(name, type);
      if (!st.ok()) return st;
    }
  }
}
#else
Status list_entries(int dirfd, const std::string& shown, const EntryFn& fn) {
  // A fresh description each pass (pitfall 9), handed to fdopendir, which takes it over.
  int fresh;
  do fresh = ::openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  while (fresh < 0 && errno == EINTR);
  if (fresh < 0) return sys_error(errno, "openat", shown);
  DIR* dir = ::fdopendir(fresh);
  if (!dir) {
    int err = errno;
    ::close(fresh);
    return sys_error(err, "fdopendir", shown);
  }
  std::vector<std::pair<std::string, unsigned char>> names;
  for (;;) {
    errno = 0;
    struct dirent* d = ::readdir(dir);
    if (!d) break;
    const char* name = d->d_name;
    if (name[0] == '.' && (name[1] == '\0' || (name[1] == '.' && name[2] == '\0'))) continue;
    names.emplace_back(name, d->d_type);
  }
  int err = errno;
  ::closedir(dir);
  if (err != 0) return sys_error(err, "readdir", shown);
  for (auto& [name, type] : names) {
    auto st = fn(name, type);
    if (!st.ok()) return st;
  }
  return ok_status();
}
#endif

bool is_directory_errno(int err, int dirfd, const std::string& name) {
  if (err == EISDIR) return true;
#if defined(__APPLE__)
  // macOS unlink(2) on a directory answers EPERM.
  if (err == EPERM) {
    struct stat st;
    return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode);
  }
#else
  (void)dirfd;
  (void)name;
#endif
  return false;
}

std::string join(const std::string& a, const std::string& b) { return a.empty() ? b : a + "/" + b; }

Status remove_dir(const Root& root, int parent, const std::string& name, const std::string& shown,
                  const dev_t* dev, int depth);

// One entry of a directory being emptied: unlinked as an entry unless it is a directory.
Status remove_entry(const Root& root, int dirfd, const std::string& name, unsigned char type,
                    const std::string& shown, dev_t dev, int depth) {
  if (type != DT_DIR) {
    int rc;
    do rc = ::unlinkat(dirfd, name.c_str(), 0);
    while (rc != 0 && errno == EINTR);
    if (rc == 0 || errno == ENOENT) return ok_status();
    int err = errno;
    if (!is_directory_errno(err, dirfd, name)) return sys_error(err, "unlink", shown);
  }
  return remove_dir(root, dirfd, name, shown, &dev, depth + 1);
}

Status remove_dir(const Root& root, int parent, const std::string& name, const std::string& shown,
                  const dev_t* dev, int depth) {
  if (depth > kMaxRemoveDepth) {
    Error e = sys_error(ENAMETOOLONG, "rm", shown);
    e.description = "directory tree deeper than " + std::to_string(kMaxRemoveDepth) + " levels";
    return e;
  }
  for (int attempt = 0;; ++attempt) {
    auto opened = open_child(root, parent, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK, 0, shown);
    if (!opened.ok()) {
      const Error& e = opened.error();
      if (e.refusal == Refusal::None && e.err == ENOENT) return ok_status();  // already gone
      if (e.refusal == Refusal::Symlink || (e.refusal == Refusal::None && e.err == ENOTDIR)) {
        // No longer a directory (d_type was stale, or something was swapped in): the entry itself
        // is what we remove; what a link names is never touched.
        int rc;
        do rc = ::unlinkat(parent, name.c_str(), 0);
        while (rc != 0 && errno == EINTR);
        if (rc == 0 || errno == ENOENT) return ok_status();
        return sys_error(errno, "unlink", shown);
      }
      return opened.take_error();
    }
    int fd = opened.value().get();
    struct stat st;
    if (::fstat(fd, &st) != 0) return sys_error(errno, "fstat", shown);
    if (dev && st.st_dev != *dev) {
      // A mount point inside the tree: emptying it would reach into another file system, which
      // may be a bind mount of something outside the root.
      Error e = sys_error(EXDEV, "rm", shown);
      e.description = "refusing to descend into a mount point";
      return e;
    }
    // One listing pass, then rmdir: the kernel's ENOTEMPTY is the authoritative "a fresh listing
    // is not empty" (entries skipped by deleting while iterating, or added meanwhile), and sends
    // us round again, boundedly. An empty directory costs no second listing.
    auto listed = list_entries(fd, shown, [&](const std::string& entry, unsigned char type) {
      return remove_entry(root, fd, entry, type, join(shown, entry), st.st_dev, depth);
    });
    if (!listed.ok()) return listed;
    opened.value().reset();
    int rc;
    do rc = ::unlinkat(parent, name.c_str(), AT_REMOVEDIR);
    while (rc != 0 && errno == EINTR);
    if (rc == 0 || errno == ENOENT) return ok_status();
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST) return sys_error(err, "rmdir", shown);
    if (attempt + 1 >= kMaxPasses) {
      Error e = sys_error(err, "rmdir", shown);
      e.description = "directory kept gaining entries while it was being emptied";
      return e;
    }
  }
}

}  // namespace

Status remove_tree(const Root& root, int parent, const std::string& name, const std::string& shown) {
  return remove_dir(root, parent, name, shown, nullptr, 0);
}

}  // namespace pinnedfs::ops
