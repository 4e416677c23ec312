// readDirectory, flat and recursive (Node's fs.readdir(p, { recursive: true }) shape: '/'-separated
// paths relative to the listed directory).
//
// The listing descends only as core/resolve.h descend() does: each subdirectory is opened
// O_DIRECTORY|O_NOFOLLOW as a child of the directory being listed, confined beneath the root and to
// its mount, and every directory is proven beneath the root before it is listed (and again before
// each later batch of a large one), so a directory moved out mid-listing is refused, never listed.
// A link entry is listed and never descended, whatever it points at; so is a mount point. The walk
// is depth first so at most one descriptor per level is open (a breadth-first queue of handles
// would hold one per pending directory, unbounded), and the depth is bounded.
//
// Order: sorted by name, byte by byte, as Node's readdir answers (libuv sorts each listing with
// strcmp) and so Effect's readDirectory. A recursive listing is sorted whole, by its '/'-separated
// paths: Node's recursive order is that of its traversal stack, which no caller can rely on; the
// sort runs here on the worker, over names already bounded by kMaxListingBytes.
//
// Names are bytes. One that is not valid UTF-8 is passed on as is and becomes a JavaScript string
// with U+FFFD where the bytes do not decode, exactly as Node's readdir does with its default
// encoding: the listing never fails or crashes on it, and such a name, like Node's, does not round
// trip (opening it by the decoded spelling finds nothing, or a different, validly spelled entry
// inside the same root).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>

#include "../core/alloc.h"
#include "../core/limits.h"
#include "../platform/platform.h"
#include "dir_list.h"
#include "ops.h"

namespace pinnedfs::ops {

namespace {

// Deepest level a recursive listing descends to (the listed directory is level 0). Each level holds
// one descriptor while its subtrees are listed, so this also bounds descriptors per call.
constexpr std::size_t kMaxDepth = kMaxTreeDepth;

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

  // Lists `dir`, which is `prefix` below the listed directory ("" for the listed one itself). A
  // directory below the listed one that is no longer at its path (moved out of the root, or within
  // it, or replaced) is treated as a concurrent change: listed as it was seen in its parent, its
  // own entries not listed. The listed directory itself failing its proof is the refusal.
  Status run(Held& dir, const std::string& prefix, std::size_t depth) {
    std::string here = shown(prefix);
    auto listable = dir.prove(root_, "getdents64", here);
    if (!listable.ok()) return listable.take_error();
    std::vector<DirEntry> entries;
    auto listed = lister_.list(listable.value().fd(), here, entries,
                               [&]() { return dir.beneath(root_, "getdents64", here); });
    if (!listed.ok()) return listed;
    int dirfd = dir.look();
    for (const DirEntry& e : entries) {
      if (!room_for_one(names_)) {
        return out_of_memory(names_.capacity() * 2 * sizeof(std::string), "readdir", here);
      }
      names_.push_back(join(prefix, e.name));
      bytes_ += names_.back().size() + kNameOverhead;
      if (bytes_ > kMaxListingBytes) return too_many_names(here);
    }
    if (!recursive_) return ok_status();
    for (const DirEntry& e : entries) {
      std::string rel = join(prefix, e.name);
      auto is_dir = is_directory(dirfd, e, rel);
      if (!is_dir.ok()) return is_dir.take_error();
      if (!is_dir.value()) continue;
      if (depth + 1 > kMaxDepth) {
        return refusal(Refusal::TooLarge, "readdir", shown(rel),
                       "directory tree is deeper than the recursive listing limit of " +
                           std::to_string(kMaxDepth) + " levels",
                       ENAMETOOLONG);
      }
      auto child = descend(root_, dir, e.name, kListFlags, shown(rel));
      if (!child.ok()) {
        // This directory itself has left its path (descend proved it): the caller decides.
        if (child.error().moved) return child.take_error();
        // A mount point is listed (its name is an entry here) and never entered.
        if (child.error().mount || changed_under_us(child.error())) continue;
        return child.take_error();
      }
      // The child's descriptor closes when this iteration ends, before the next sibling's subtree.
      auto sub = run(child.value(), rel, depth + 1);
      if (!sub.ok()) {
        if (!sub.error().moved) return sub;
        auto listed_still = departed(sub.take_error());
        if (!listed_still.ok()) return listed_still;
      }
    }
    return ok_status();
  }

  std::vector<std::string> take() { return std::move(names_); }

 private:
  // A directory below the listed one failed its proof. Moved or replaced within the root: a
  // concurrent change, its subtree is not listed. Out of the root: the refusal.
  static Status departed(Error e) {
    if (e.refusal == Refusal::Escape) return e;
    return ok_status();
  }

  std::string shown(const std::string& rel) const { return join(base_, rel); }

  // d_type decides only whether to try; the O_DIRECTORY|O_NOFOLLOW open is the enforcement.
  Result<bool> is_directory(int dirfd, const DirEntry& e, const std::string& rel) const {
    switch (e.kind) {
      case EntryKind::Directory:
        return true;
      case EntryKind::File:
      case EntryKind::Link:
      case EntryKind::Other:
        return false;
      case EntryKind::Unknown:
        break;
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
    if (e.refusal == Refusal::Escape)
      return true;  // left mid-lookup (mounts and proofs are caught before)
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
  auto dir = hold_beneath(root, path.value(), kListFlags);
  if (!dir.ok()) return dir.take_error();
  Lister lister(root, path.value().joined(), request.recursive);
  auto listed = lister.run(dir.value(), "", 0);
  if (!listed.ok()) return listed.take_error();
  std::vector<std::string> names = lister.take();
  // std::string compares as memcmp does: the byte order of strcmp, before any decoding.
  std::sort(names.begin(), names.end());
  return Value(Names{std::move(names)});
}

}  // namespace pinnedfs::ops
