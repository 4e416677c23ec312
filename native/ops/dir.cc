// readDirectory, flat and recursive (Node's fs.readdir(p, { recursive: true }) shape: '/'-separated
// paths relative to the listed directory).
//
// The listing descends by handle only: each subdirectory is opened by its bare name in the
// descriptor being listed, with O_DIRECTORY|O_NOFOLLOW, never by a joined path (platform-notes
// pitfall 3). A link entry is listed and never descended, whatever it points at. The walk is depth
// first so at most one descriptor per level is open (a breadth-first queue of handles would hold
// one per pending directory, unbounded), and the depth is bounded.
//
// Order: each directory's entries in the order the file system gives them, then its subtrees, one
// after the other. Node's own order (breadth first) is not a promise either; callers sort.
//
// Names are bytes. One that is not valid UTF-8 is passed on as is and becomes a JavaScript string
// with U+FFFD where the bytes do not decode, exactly as Node's readdir does with its default
// encoding: the listing never fails or crashes on it, and such a name, like Node's, does not round
// trip (opening it by the decoded spelling finds nothing, or a different, validly spelled entry
// inside the same root).
#include <fcntl.h>
#include <sys/stat.h>

#include "../core/limits.h"
#include "dir_list.h"
#include "ops.h"

namespace pinnedfs::ops {

namespace {

// Deepest level a recursive listing descends to (the listed directory is level 0). Each level holds
// one descriptor while its subtrees are listed, so this also bounds descriptors per call.
constexpr std::size_t kMaxDepth = 256;

// O_NONBLOCK: harmless on a directory, and should anything but a directory ever reach the open,
// nothing blocks (O_DIRECTORY already refuses it before any driver or FIFO open runs).
constexpr int kListFlags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;

std::string join(const std::string& a, const std::string& b) {
  return a.empty() ? b : a + "/" + b;
}

class Lister {
 public:
  Lister(const Root& root, std::string base, bool recursive)
      : root_(root), base_(std::move(base)), recursive_(recursive) {}

  // Lists `dirfd`, which is `prefix` below the listed directory ("" for the listed one itself).
  Status run(int dirfd, const std::string& prefix, std::size_t depth) {
    std::vector<DirEntry> entries;
    auto listed = lister_.list(dirfd, shown(prefix), entries);
    if (!listed.ok()) return listed;
    for (const DirEntry& e : entries) {
      names_.push_back(join(prefix, e.name));
      bytes_ += names_.back().size() + kNameOverhead;
      if (bytes_ > kMaxListingBytes) return too_many_names(shown(prefix));
    }
    if (!recursive_) return ok_status();
    for (const DirEntry& e : entries) {
      std::string rel = join(prefix, e.name);
      auto dir = is_directory(dirfd, e, rel);
      if (!dir.ok()) return dir.take_error();
      if (!dir.value()) continue;
      if (depth + 1 > kMaxDepth) {
        return refusal(Refusal::TooLarge, "readdir", shown(rel),
                       "directory tree is deeper than the recursive listing limit of " +
                           std::to_string(kMaxDepth) + " levels",
                       ENAMETOOLONG);
      }
      auto child = open_child(root_, dirfd, e.name, kListFlags, 0, shown(rel));
      if (!child.ok()) {
        if (changed_under_us(child.error())) continue;
        return child.take_error();
      }
      // The child's descriptor closes when this iteration ends, before the next sibling's subtree.
      auto sub = run(child.value().get(), rel, depth + 1);
      if (!sub.ok()) return sub;
    }
    return ok_status();
  }

  std::vector<std::string> take() { return std::move(names_); }

 private:
  std::string shown(const std::string& rel) const { return join(base_, rel); }

  // d_type decides only whether to try; the O_DIRECTORY|O_NOFOLLOW open is the enforcement.
  Result<bool> is_directory(int dirfd, const DirEntry& e, const std::string& rel) const {
    switch (e.kind) {
      case EntryKind::Directory: return true;
      case EntryKind::Link:
      case EntryKind::Other: return false;
      case EntryKind::Unknown: break;
    }
    struct stat st;
    if (::fstatat(dirfd, e.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      if (errno == ENOENT) return false;  // removed since it was listed
      return sys_error(errno, "fstatat", shown(rel));
    }
    return S_ISDIR(st.st_mode);
  }

  // An entry listed as a directory that is gone, or is now a link or a file, by the time we open
  // it: a concurrent change. It stays listed (as it was seen) and is not descended; a link in
  // particular is never followed.
  static bool changed_under_us(const Error& e) {
    if (e.refusal == Refusal::Symlink) return true;
    return e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR);
  }

  const Root& root_;
  std::string base_;
  bool recursive_;
  DirLister lister_;
  std::vector<std::string> names_;
  std::size_t bytes_ = 0;  // of names_, counted as kMaxListingBytes counts them
};

}  // namespace

Result<Value> read_directory(const Root& root, const Request& request) {
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  // The listed directory itself may not be a link: O_NOFOLLOW (trailing) plus the strategy's
  // no-follow resolution (on the way) refuse it.
  auto fd = open_beneath(root, path.value(), kListFlags);
  if (!fd.ok()) return fd.take_error();
  Lister lister(root, path.value().joined(), request.recursive);
  auto listed = lister.run(fd.value().get(), "", 0);
  if (!listed.ok()) return listed.take_error();
  return Value(Names{lister.take()});
}

}  // namespace pinnedfs::ops
