#include "dir_cursor.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"

namespace pinnedfs::ops {

std::size_t add_node(std::vector<TreeNode>& nodes, std::size_t parent, std::string name) {
  TreeNode n;
  n.parent = parent;
  n.depth = parent == kNoNode ? 1 : nodes[parent].depth + 1;
  n.rel_len = (parent == kNoNode ? 0 : nodes[parent].rel_len + 1) + name.size();
  n.name = std::move(name);
  nodes.push_back(std::move(n));
  return nodes.size() - 1;
}

std::string path_of(const std::vector<TreeNode>& nodes, std::size_t node) {
  if (node == kNoNode) return std::string();
  std::string out(nodes[node].rel_len, '/');
  for (std::size_t i = node; i != kNoNode; i = nodes[i].parent) {
    const TreeNode& n = nodes[i];
    out.replace(n.rel_len - n.name.size(), n.name.size(), n.name);
  }
  return out;
}

DirCursor::DirCursor(const Root& root, std::vector<TreeNode>& nodes)
    : root_(root), nodes_(nodes), held_(Held::root(root)) {}

void DirCursor::home() {
  at_ = kNoNode;
  held_ = Held::root(root_);
  rel_.clear();
}

void DirCursor::adopt(std::size_t child, Held held) {
  at_ = child;
  held_ = std::move(held);
  rel_ = held_.rel();
}

Status DirCursor::arrive(std::size_t node, Held held) {
  struct stat st;
  if (::fstat(held.look(), &st) != 0) {
    int err = errno;
    home();
    return sys_error(err, "fstat", path_of(nodes_, node));
  }
  Identity now{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  TreeNode& n = nodes_[node];
  if (n.known && n.identity != now) {
    std::string shown = path_of(nodes_, node);
    home();
    return refusal(Refusal::IdentityChanged, "openat", shown,
                   "'" + shown + "' is no longer the directory recorded (" + n.identity.str() +
                       " is now " + now.str() + ")",
                   EBUSY);
  }
  n.identity = now;
  n.known = true;
  at_ = node;
  held_ = std::move(held);
  held_.know_identity(now);
  rel_ = held_.rel();
  return ok_status();
}

Status DirCursor::up() {
  std::size_t parent = nodes_[at_].parent;
  if (parent == kNoNode) {
    home();
    return ok_status();
  }
  // The directory above the one held, wherever that one is now: trusted for nothing but its
  // identity, which must be the parent's.
  int fd = retry_eintr([&] { return ::openat(held_.look(), "..", kDirHandleFlags); });
  if (fd < 0) {
    int err = errno;
    std::string shown = path_of(nodes_, parent);
    home();
    return sys_error(err, "openat", shown);
  }
  if (root_.strategy() != Strategy::Kernel) {
    auto same = same_mount(root_, fd, path_of(nodes_, parent));
    if (!same.ok()) {
      ::close(fd);
      home();
      return same;
    }
  }
  return arrive(parent, Held::unproven(Fd(fd), rel_.substr(0, nodes_[parent].rel_len)));
}

Status DirCursor::down(std::size_t child) {
  std::string shown = rel_.empty() ? nodes_[child].name : rel_ + "/" + nodes_[child].name;
  // descend(): within the lookup depth under the kernel strategy, looked up from the root and so
  // arriving proven; otherwise opened from the handle held here, on the root's mount.
  auto opened = descend(root_, held_, nodes_[child].name, kDirHandleFlags, shown);
  if (!opened.ok()) {
    home();
    return opened.take_error();
  }
  return arrive(child, opened.take());
}

Status DirCursor::move_to(std::size_t target) {
  // Up to the deepest common ancestor, then down along the target's own ancestors.
  std::vector<std::size_t> below;
  std::size_t b = target;
  while (depth_of(b) > depth_of(at_)) {
    below.push_back(b);
    b = nodes_[b].parent;
  }
  while (depth_of(at_) > depth_of(b)) {
    auto up_one = up();
    if (!up_one.ok()) return up_one;
  }
  while (at_ != b) {
    auto up_one = up();
    if (!up_one.ok()) return up_one;
    below.push_back(b);
    b = nodes_[b].parent;
  }
  for (auto it = below.rbegin(); it != below.rend(); ++it) {
    auto step = down(*it);
    if (!step.ok()) return step;
  }
  return ok_status();
}

}  // namespace pinnedfs::ops
