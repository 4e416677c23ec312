// One directory handle that travels a planned tree of directories (the mkdirs and rmdirs
// programs): down by opening a child from its parent's handle, up by opening "..", and every
// arrival checked against the identity recorded for that directory (or recorded, the first time).
//
// Why travel rather than resolve each directory from the root: a program over a deep tree would
// pay the depth again for every directory (a 2,000-level chain is two million lookups). Moving
// costs one open per edge travelled, and a program visits its tree in pre-order, so each edge is
// travelled at most twice. Why ".." is safe here, where resolution never uses it: the directory it
// reaches is never trusted for its place, only for its identity, and every act through the handle
// is preceded by the proof that it is still beneath the root (core/beneath.h).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "ops.h"

namespace pinnedfs::ops {

constexpr std::size_t kNoNode = static_cast<std::size_t>(-1);

// What one program (mkdirs, rmdirs) may hold a worker thread for, refused as BadArgument before any
// syscall: directories in its tree (implied ancestors count) and path components across all its
// entries as given. The worst program within both bounds is measured in the benchmark and stated
// in the README.
constexpr std::size_t kMaxDirectories = 4096;
constexpr std::size_t kMaxPlanComponents = 1 << 20;

struct TreeNode {
  std::string name;              // one component
  std::size_t parent = kNoNode;  // kNoNode: a child of the root
  std::size_t depth = 1;         // components from the root
  std::size_t rel_len = 0;       // length of its root-relative path
  Identity identity;             // the directory recorded there, once `known`
  bool known = false;
};

// Appends a child of `parent` named `name` to `nodes` and returns its index.
std::size_t add_node(std::vector<TreeNode>& nodes, std::size_t parent, std::string name);
// The root-relative path of `node` ("" for kNoNode).
std::string path_of(const std::vector<TreeNode>& nodes, std::size_t node);

class DirCursor {
 public:
  DirCursor(const Root& root, std::vector<TreeNode>& nodes);

  // Brings the handle to `target` (kNoNode: the root). A directory that cannot be reached, or is
  // not the one recorded, is the error; the cursor is then back at the root.
  Status move_to(std::size_t target);
  // Takes `held` as the handle of `child`, a child of where the cursor stands, just opened (its
  // identity recorded in the node).
  void adopt(std::size_t child, Held held);

  std::size_t at() const { return at_; }
  Held& held() { return held_; }
  const std::string& rel() const { return rel_; }

 private:
  Status up();
  Status down(std::size_t child);
  Status arrive(std::size_t node, Held held);
  void home();
  std::size_t depth_of(std::size_t node) const { return node == kNoNode ? 0 : nodes_[node].depth; }

  const Root& root_;
  std::vector<TreeNode>& nodes_;
  std::size_t at_ = kNoNode;
  Held held_;
  std::string rel_;
};

}  // namespace pinnedfs::ops
