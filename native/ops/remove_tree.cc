#include "remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "dir_list.h"

namespace pinnedfs::ops {

namespace {

// A directory that keeps gaining entries while we empty it is someone racing us; give up visibly
// rather than loop for ever.
constexpr int kMaxPasses = 64;

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

Status remove_dir(DirLister& lister, const Root& root, int parent, const std::string& name,
                  const std::string& shown, const dev_t* dev, int depth);

// One entry of a directory being emptied: unlinked as an entry unless it is a directory.
Status remove_entry(DirLister& lister, const Root& root, int dirfd, const DirEntry& entry,
                    const std::string& shown, dev_t dev, int depth) {
  const std::string& name = entry.name;
  // d_type is a hint: a "directory" that is a link by now fails the no-follow open in remove_dir
  // and is unlinked as an entry there.
  if (entry.kind != EntryKind::Directory) {
    int rc;
    do rc = ::unlinkat(dirfd, name.c_str(), 0);
    while (rc != 0 && errno == EINTR);
    if (rc == 0 || errno == ENOENT) return ok_status();
    int err = errno;
    if (!is_directory_errno(err, dirfd, name)) return sys_error(err, "unlink", shown);
  }
  return remove_dir(lister, root, dirfd, name, shown, &dev, depth + 1);
}

Status remove_dir(DirLister& lister, const Root& root, int parent, const std::string& name,
                  const std::string& shown, const dev_t* dev, int depth) {
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
    // The whole listing is taken before any entry is removed, so the lister's buffer is free for
    // the levels below.
    std::vector<DirEntry> entries;
    auto listed = lister.list(fd, shown, entries);
    if (!listed.ok()) return listed;
    for (const DirEntry& entry : entries) {
      auto removed = remove_entry(lister, root, fd, entry, join(shown, entry.name), st.st_dev, depth);
      if (!removed.ok()) return removed;
    }
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
  DirLister lister;
  return remove_dir(lister, root, parent, name, shown, nullptr, 0);
}

}  // namespace pinnedfs::ops
