#include "mkdirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "dir_cursor.h"

namespace pinnedfs::ops {

namespace {

enum class State : unsigned char { Unknown, Exists, Missing, Created };

// What the plan says of one directory of the tree (the tree itself is the cursor's TreeNode list).
struct Planned {
  mode_t mode = 0777;
  bool listed = false;  // named in the plan, not only implied by a descendant
  State state = State::Unknown;
  std::vector<std::size_t> children;
};

class PlanTree {
 public:
  std::vector<TreeNode> nodes;
  std::vector<Planned> info;

  // Adds `parts` with `mode`, implied ancestors included. Linear in the entry's components.
  Status insert(const std::vector<std::string>& parts, mode_t mode) {
    std::size_t at = kNoNode;
    for (std::size_t i = 0; i < parts.size(); ++i) {
      bool last = i + 1 == parts.size();
      std::string key = key_of(at, parts[i]);
      auto found = index_.find(key);
      if (found != index_.end()) {
        at = found->second;
        if (last) {
          Planned& p = info[at];
          if (p.listed && p.mode != mode) {
            std::string shown = path_of(nodes, at);
            return bad_argument("directory '" + shown + "' is planned twice with different modes",
                                shown);
          }
          p.listed = true;
          p.mode = mode;
        }
        continue;
      }
      if (nodes.size() >= kMaxDirectories) {
        return bad_argument("plan names more than " + std::to_string(kMaxDirectories) +
                            " directories (implied ancestors count)");
      }
      std::size_t made = add_node(nodes, at, parts[i]);
      Planned p;
      p.mode = mode;
      p.listed = last;
      info.push_back(std::move(p));
      (at == kNoNode ? top_ : info[at].children).push_back(made);
      index_.emplace(std::move(key), made);
      at = made;
    }
    return ok_status();
  }

  // Parent before child, siblings in byte order of their names.
  std::vector<std::size_t> preorder() {
    auto by_name = [this](std::size_t a, std::size_t b) { return nodes[a].name < nodes[b].name; };
    std::sort(top_.begin(), top_.end(), by_name);
    for (Planned& p : info) std::sort(p.children.begin(), p.children.end(), by_name);
    std::vector<std::size_t> order;
    order.reserve(nodes.size());
    std::vector<std::size_t> stack(top_.rbegin(), top_.rend());
    while (!stack.empty()) {
      std::size_t i = stack.back();
      stack.pop_back();
      order.push_back(i);
      const auto& kids = info[i].children;
      stack.insert(stack.end(), kids.rbegin(), kids.rend());
    }
    return order;
  }

 private:
  static std::string key_of(std::size_t parent, const std::string& name) {
    std::string key(sizeof parent, '\0');
    std::memcpy(&key[0], &parent, sizeof parent);
    return key + name;
  }
  std::unordered_map<std::string, std::size_t> index_;
  std::vector<std::size_t> top_;
};

#ifdef PINNEDFS_TEST_HOOKS
Status run_hook(const Root& root, const std::vector<HookStep>& steps) {
  for (const HookStep& step : steps) {
    auto from = prepare_path(root, step.path);
    if (!from.ok()) return from.take_error();
    auto parent = open_parent(root, from.value());
    if (!parent.ok()) return parent.take_error();
    // The test's attacker acts where the path leads, as an outside process would: no proof.
    int dir = parent.value().dir.look();
    const char* leaf = parent.value().leaf.c_str();
    int rc = 0;
    switch (step.kind) {
      case HookStep::Kind::Mkdir:
        rc = ::mkdirat(dir, leaf, 0755);
        break;
      case HookStep::Kind::File: {
        int fd = ::openat(dir, leaf, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        rc = fd < 0 ? -1 : 0;
        Fd closer(fd);
        break;
      }
      case HookStep::Kind::Rmdir:
        rc = ::unlinkat(dir, leaf, AT_REMOVEDIR);
        break;
      case HookStep::Kind::Rename: {
        auto to = prepare_path(root, step.to);
        if (!to.ok()) return to.take_error();
        auto to_parent = open_parent(root, to.value());
        if (!to_parent.ok()) return to_parent.take_error();
        rc = ::renameat(dir, leaf, to_parent.value().dir.look(), to_parent.value().leaf.c_str());
        break;
      }
    }
    if (rc != 0) return sys_error(errno, "testAfterPlan", step.path);
  }
  return ok_status();
}
#endif

Error symlink_in_the_way(const std::string& shown) {
  return refusal(Refusal::Symlink, "mkdir", shown,
                 "'" + shown + "' is a symbolic link where a directory is wanted", ELOOP);
}

// 1. Validate: nothing malformed, and nothing over the bounds, reaches a syscall. Each entry is
// lexed and put in the tree at once, so memory grows with the tree, not the plan. Entries with
// ".." are set aside in `dotdot`: they need the file system.
Status validate(const std::vector<MkdirsEntry>& plan, PlanTree& tree,
                std::vector<std::size_t>& dotdot) {
  std::size_t components = 0;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    const MkdirsEntry& entry = plan[i];
    if (entry.mode > 07777) {
      return bad_argument(
          "mode " + std::to_string(entry.mode) + " is not a permission mode (0..07777)",
          entry.path);
    }
    auto l = lex_path(entry.path);
    if (!l.ok()) return l.take_error();
    components += l.value().parts.size();
    if (components > kMaxPlanComponents) {
      return bad_argument("plan has more than " + std::to_string(kMaxPlanComponents) +
                          " path components in all");
    }
    if (l.value().has_dotdot) {
      dotdot.push_back(i);  // resolved on the file system below
      continue;
    }
    auto added = tree.insert(l.value().parts, static_cast<mode_t>(entry.mode));
    if (!added.ok()) return added.take_error();
  }
  return ok_status();
}

// 3. Probe: drop what exists, without following anything. A parent known missing answers for its
// children, so a fresh tree costs one probe.
Status probe(DirCursor& cursor, PlanTree& tree, const std::vector<std::size_t>& order) {
  std::vector<TreeNode>& nodes = tree.nodes;
  std::vector<Planned>& info = tree.info;
  for (std::size_t i : order) {
    TreeNode& n = nodes[i];
    Planned& p = info[i];
    if (n.parent != kNoNode && info[n.parent].state == State::Missing) {
      p.state = State::Missing;
      continue;
    }
    auto there = cursor.move_to(n.parent);
    if (!there.ok()) return there.take_error();
    struct stat st;
    int rc = retry_eintr(
        [&] { return ::fstatat(cursor.held().look(), n.name.c_str(), &st, AT_SYMLINK_NOFOLLOW); });
    if (rc != 0) {
      if (errno != ENOENT) return sys_error(errno, "fstatat", path_of(nodes, i));
      p.state = State::Missing;
    } else if (S_ISDIR(st.st_mode)) {
      p.state = State::Exists;
      n.identity = identity_of(st);
      n.known = true;
    } else if (S_ISLNK(st.st_mode)) {
      return symlink_in_the_way(path_of(nodes, i));
    } else {
      // As Node's mkdir -p: the named directory itself is taken (EEXIST), or a component on the
      // way to it is not a directory (ENOTDIR).
      std::string shown = path_of(nodes, i);
      Error e = sys_error(p.listed ? EEXIST : ENOTDIR, "mkdir", shown);
      e.description = "'" + shown + "' exists and is not a directory";
      return e;
    }
  }
  return ok_status();
}

// 4. Create one missing directory of the plan (node `i`) beneath the cursor's parent, recording
// it in `created` as soon as it is made.
Status create_one(const Root& root, DirCursor& cursor, PlanTree& tree, std::size_t i,
                  const ProgramOptions& options, std::vector<CreatedDir>& created) {
  TreeNode& n = tree.nodes[i];
  Planned& p = tree.info[i];
  std::string shown = path_of(tree.nodes, i);
  auto there = cursor.move_to(n.parent);
  if (!there.ok()) {
    Error e = there.take_error();
    if (e.description.empty()) {
      e.description = "the parent of '" + shown + "' no longer resolves to the directory planned";
    }
    return e;
  }
  Held& parent = cursor.held();
  auto still = parent.prove(root, "mkdir", shown);
  if (!still.ok()) return still.take_error();
  int rc =
      retry_eintr([&] { return ::mkdirat(still.value().fd(), n.name.c_str(), p.mode & 07777); });
  if (rc != 0) {
    int err = errno;
    if (err == EEXIST && options.tolerate_existing) {
      // A concurrent creator won the race: fine if, without following, it is a directory.
      struct stat st;
      if (::fstatat(parent.look(), n.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return sys_error(errno, "fstatat", shown);
      }
      if (S_ISDIR(st.st_mode)) {
        p.state = State::Exists;
        n.identity = identity_of(st);
        n.known = true;
        return ok_status();
      }
      if (S_ISLNK(st.st_mode)) return symlink_in_the_way(shown);
      return sys_error(p.listed ? EEXIST : ENOTDIR, "mkdir", shown);
    }
    Error e = sys_error(err, "mkdir", shown);
    if (err == EEXIST) {
      e.description = "'" + shown + "' appeared after planning: not ours, left untouched";
    }
    return e;
  }
  // Open what now stands at the name, without following, to learn the identity that becomes the
  // caller's ownership, (exact modes) to set the mode on that very handle, and to stand in it for
  // its children, which come next in pre-order.
  auto made = descend(root, parent, n.name, kDirHandleFlags, shown);
  if (!made.ok()) {
    Error e = made.take_error();
    if (e.refusal == Refusal::Escape && e.moved) {
      // The parent left the root right after mkdirat made the directory in it (under the kernel
      // strategy the confirming lookup from the root then fails). It is ours all the same, and the
      // caller is told what its program made: with the identity the name has in that very handle,
      // looked at (a departed directory is never changed or listed), never acted on.
      struct stat st;
      if (::fstatat(parent.look(), n.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISDIR(st.st_mode)) {
        p.state = State::Created;
        created.push_back(CreatedDir{shown, identity_of(st)});
      }
      return e;
    }
    e.description = "'" + shown + "' was created, then replaced before it could be confirmed" +
                    (e.description.empty() ? "" : ": " + e.description);
    return e;
  }
  Held dir = made.take();
  struct stat st;
  if (::fstat(dir.look(), &st) != 0) return sys_error(errno, "fstat", shown);
  p.state = State::Created;
  n.identity = identity_of(st);
  n.known = true;
  dir.know_identity(n.identity);
  created.push_back(CreatedDir{shown, n.identity});
  if (options.exact_modes) {
    auto moded = dir.act(root, "chmod", shown,
                         [&](int fd) { return attr::change_mode(fd, p.mode & 07777, shown); });
    if (!moded.ok()) return moded.take_error();
  }
  cursor.adopt(i, std::move(dir));
  return ok_status();
}

}  // namespace

Result<MkdirsOutcome> run_mkdirs_program(const Root& root, const std::vector<MkdirsEntry>& plan,
                                         const ProgramOptions& options) {
  PlanTree tree;
  std::vector<std::size_t> dotdot;
  auto valid = validate(plan, tree, dotdot);
  if (!valid.ok()) return valid.take_error();

  MkdirsOutcome out;
  auto stop = [&out](Error e) {
    out.failed = true;
    out.error = std::move(e);
    return Result<MkdirsOutcome>(std::move(out));
  };

  // 2. Plan: ".." is resolved physically, which needs the file system; then the order, parent
  // before child.
  for (std::size_t i : dotdot) {
    auto resolved = prepare_path(root, plan[i].path);
    if (!resolved.ok()) return stop(resolved.take_error());
    auto added = tree.insert(resolved.value().parts, static_cast<mode_t>(plan[i].mode));
    if (!added.ok()) return added.take_error();
  }
  const std::vector<std::size_t> order = tree.preorder();
  DirCursor cursor(root, tree.nodes);

  auto probed = probe(cursor, tree, order);
  if (!probed.ok()) return stop(probed.take_error());

  // Where the planning left the cursor, it stands for acts that come only later (after the hook,
  // after any delay): a kernel lookup's free proof does not stretch that far.
  cursor.held().spend();

#ifdef PINNEDFS_TEST_HOOKS
  if (options.after_plan && !options.after_plan->empty()) {
    auto hooked = run_hook(root, *options.after_plan);
    if (!hooked.ok()) return stop(hooked.take_error());
  }
#endif

  for (std::size_t i : order) {
    if (tree.info[i].state != State::Missing) continue;
    auto made = create_one(root, cursor, tree, i, options, out.created);
    if (!made.ok()) return stop(made.take_error());
  }
  return Result<MkdirsOutcome>(std::move(out));
}

}  // namespace pinnedfs::ops
