#include "remove_tree.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <vector>

#include "../core/eintr.h"
#include "dir_list.h"

namespace pinnedfs::ops {

namespace {

// A directory that keeps gaining entries while we empty it is someone racing us; give up visibly
// rather than loop for ever.
constexpr int kMaxPasses = 64;

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

class Remover {
 public:
  explicit Remover(const Root& root) : root_(root) {}
  Status remove_dir(Held& parent, const std::string& name, const std::string& shown, int depth);

 private:
  Status unlink_entry(Held& dir, const std::string& name, const std::string& shown, bool* is_dir);
  const Root& root_;
  DirLister lister_;
};

// Unlinks `name` in `dir` as an entry (never what it names), once `dir` is proven beneath the root.
// A directory there is not unlinked: *is_dir says so and the caller descends.
Status Remover::unlink_entry(Held& dir, const std::string& name, const std::string& shown,
                             bool* is_dir) {
  *is_dir = false;
  auto still = dir.beneath(root_, "unlink", shown);
  if (!still.ok()) return still;
  int rc = retry_eintr([&] { return ::unlinkat(dir.fd(), name.c_str(), 0); });
  if (rc == 0 || errno == ENOENT) return ok_status();
  int err = errno;
  if (platform::unlink_met_directory(err, dir.fd(), name)) {
    *is_dir = true;
    return ok_status();
  }
  // A file bind-mounted over the entry: the kernel will not unlink a mount point.
  if (err == EBUSY) return mount_point("unlink", shown, shown);
  return sys_error(err, "unlink", shown);
}

Status Remover::remove_dir(Held& parent, const std::string& name, const std::string& shown,
                           int depth) {
  if (depth > kMaxRemoveDepth) {
    // The same refusal as the recursive listing's depth limit: toolarge (BadArgument),
    // ENAMETOOLONG.
    return refusal(Refusal::TooLarge, "rm", shown,
                   "directory tree is deeper than the recursive remove limit of " +
                       std::to_string(kMaxRemoveDepth) + " levels",
                   ENAMETOOLONG);
  }
  for (int attempt = 0;; ++attempt) {
    if (attempt >= kMaxPasses) {
      Error e = sys_error(ENOTEMPTY, "rmdir", shown);
      e.description = "directory kept changing while it was being emptied";
      return e;
    }
    auto opened = descend(root_, parent, name, O_RDONLY | O_DIRECTORY | O_NONBLOCK, shown);
    if (!opened.ok()) {
      const Error& e = opened.error();
      if (e.refusal == Refusal::None && e.err == ENOENT) return ok_status();  // already gone
      if (e.refusal == Refusal::Symlink || (e.refusal == Refusal::None && e.err == ENOTDIR)) {
        // No longer a directory (d_type was stale, or something was swapped in): the entry itself
        // is what we remove; what a link names is never touched.
        bool is_dir = false;
        auto gone = unlink_entry(parent, name, shown, &is_dir);
        if (!gone.ok() || !is_dir) return gone;
        continue;  // a directory again: go round
      }
      // A mount point (nothing beneath it is touched), a departed parent, anything else: stop.
      return opened.take_error();
    }
    Held dir = opened.take();
    // One listing pass, then rmdir: the kernel's ENOTEMPTY is the authoritative "a fresh listing
    // is not empty" (entries skipped by deleting while iterating, or added meanwhile), and sends
    // us round again, boundedly. The whole listing is taken before any entry is removed, so the
    // lister's buffer is free for the levels below.
    auto listable = dir.beneath(root_, "getdents64", shown);
    if (!listable.ok()) return listable;
    std::vector<DirEntry> entries;
    auto listed = lister_.list(dir.fd(), shown, entries);
    if (!listed.ok()) return listed;
    for (const DirEntry& entry : entries) {
      std::string below = join(shown, entry.name);
      // d_type is a hint: a "directory" that is a link by now fails the no-follow open in
      // remove_dir and is unlinked as an entry there.
      bool is_dir = entry.kind == EntryKind::Directory;
      if (!is_dir) {
        auto gone = unlink_entry(dir, entry.name, below, &is_dir);
        if (!gone.ok()) return gone;
      }
      if (is_dir) {
        auto sub = remove_dir(dir, entry.name, below, depth + 1);
        if (!sub.ok()) return sub;
      }
    }
    dir.reset();
    auto still = parent.beneath(root_, "rmdir", shown);
    if (!still.ok()) return still;
    int rc = retry_eintr([&] { return ::unlinkat(parent.fd(), name.c_str(), AT_REMOVEDIR); });
    if (rc == 0 || errno == ENOENT) return ok_status();
    int err = errno;
    if (err != ENOTEMPTY && err != EEXIST) return sys_error(err, "rmdir", shown);
  }
}

}  // namespace

Status remove_tree(const Root& root, Held& parent, const std::string& name,
                   const std::string& shown) {
  Remover remover(root);
  return remover.remove_dir(parent, name, shown, 0);
}

}  // namespace pinnedfs::ops
