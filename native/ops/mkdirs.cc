#include "mkdirs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>

#include "attr_fd.h"

namespace pinnedfs::ops {

namespace {

// Plans are written by programs, not people; a bound keeps one request from holding a worker
// thread (and memory) for an unbounded time. Implied ancestors count.
constexpr std::size_t kMaxDirectories = 65536;
constexpr std::size_t kNone = static_cast<std::size_t>(-1);

enum class State : unsigned char { Unknown, Exists, Missing, Created };

struct Node {
  LexedPath path;              // ".."-free
  std::string shown;           // path.joined(), the name errors and the outcome use
  mode_t mode = 0777;
  bool listed = false;         // named in the plan, not only implied by a descendant
  State state = State::Unknown;
  Identity identity;           // Exists / Created: the directory that stood there
  std::size_t parent = kNone;  // index of the parent node; kNone when the parent is the root
};

Identity identity_of(const struct stat& st) {
  return Identity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
}

LexedPath prefix_of(const LexedPath& p, std::size_t count) {
  LexedPath out;
  out.parts.assign(p.parts.begin(), p.parts.begin() + static_cast<std::ptrdiff_t>(count));
  return out;
}

// The parent of `n`: the pinned root itself at depth 1 (borrowed, nothing to check), else opened
// beneath the root afresh and, when `expected` is given, required to be that directory still.
Result<DirRef> parent_handle(const Root& root, const Node& n, const Identity* expected) {
  std::size_t depth = n.path.parts.size();
  if (depth == 1) return DirRef::borrow(root.fd());
  auto dir = open_dirs(root, n.path, depth - 1);
  if (!dir.ok()) {
    Error e = dir.take_error();
    if (e.description.empty()) {
      e.description = "the parent of '" + n.shown + "' no longer resolves to a directory";
    }
    return e;
  }
  if (expected) {
    struct stat st;
    if (::fstat(dir.value().get(), &st) != 0) return sys_error(errno, "fstat", n.path.joined(depth - 1));
    if (identity_of(st) != *expected) {
      return refusal(Refusal::IdentityChanged, "mkdir", n.shown,
                     "the parent '" + n.path.joined(depth - 1) + "' was replaced after planning (" +
                         expected->str() + " is now " + identity_of(st).str() + ")",
                     EBUSY);
    }
  }
  return dir;
}

Status run_hook(const Root& root, const std::vector<HookStep>& steps) {
  for (const HookStep& step : steps) {
    auto from = prepare_path(root, step.path);
    if (!from.ok()) return from.take_error();
    auto parent = open_parent(root, from.value());
    if (!parent.ok()) return parent.take_error();
    int dir = parent.value().dir.get();
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
        rc = ::renameat(dir, leaf, to_parent.value().dir.get(), to_parent.value().leaf.c_str());
        break;
      }
    }
    if (rc != 0) return sys_error(errno, "testAfterPlan", step.path);
  }
  return ok_status();
}

}  // namespace

Result<MkdirsOutcome> run_mkdirs_program(const Root& root, const std::vector<MkdirsEntry>& plan,
                                         const ProgramOptions& options) {
  // Validation first: nothing malformed reaches a syscall.
  std::vector<LexedPath> lexed;
  lexed.reserve(plan.size());
  for (const MkdirsEntry& entry : plan) {
    if (entry.mode > 07777) {
      return bad_argument("mode " + std::to_string(entry.mode) + " is not a permission mode (0..07777)",
                          entry.path);
    }
    auto l = lex_path(entry.path);
    if (!l.ok()) return l.take_error();
    lexed.push_back(l.take());
  }

  MkdirsOutcome out;
  auto stop = [&out](Error e) {
    out.failed = true;
    out.error = std::move(e);
    return Result<MkdirsOutcome>(std::move(out));
  };

  // Plan: physical ".." resolution, implied ancestors, parent-before-child order. std::map orders
  // component vectors lexicographically, and a parent is a prefix of its child, so iteration order
  // is a pre-order walk of the tree: every parent before its children.
  std::vector<Node> nodes;
  std::map<std::vector<std::string>, std::size_t> index;
  for (std::size_t i = 0; i < plan.size(); ++i) {
    LexedPath path = std::move(lexed[i]);
    if (path.has_dotdot) {
      auto resolved = prepare_path(root, plan[i].path);
      if (!resolved.ok()) return stop(resolved.take_error());
      path = resolved.take();
    }
    if (path.is_root()) continue;  // the root exists by definition
    mode_t mode = static_cast<mode_t>(plan[i].mode);
    auto found = index.find(path.parts);
    if (found != index.end()) {
      Node& n = nodes[found->second];
      if (n.listed && n.mode != mode) {
        return bad_argument("directory '" + n.shown + "' is planned twice with different modes", n.shown);
      }
      n.listed = true;
      n.mode = mode;
      continue;
    }
    for (std::size_t depth = 1; depth <= path.parts.size(); ++depth) {
      LexedPath p = prefix_of(path, depth);
      if (index.count(p.parts)) continue;
      if (nodes.size() >= kMaxDirectories) {
        return bad_argument("plan names more than " + std::to_string(kMaxDirectories) + " directories");
      }
      Node n;
      n.shown = p.joined();
      n.mode = mode;
      n.listed = depth == path.parts.size();
      n.path = std::move(p);
      index.emplace(n.path.parts, nodes.size());
      nodes.push_back(std::move(n));
    }
  }
  std::vector<std::size_t> order;
  order.reserve(nodes.size());
  for (auto& [parts, i] : index) {
    order.push_back(i);
    if (parts.size() > 1) {
      std::vector<std::string> up(parts.begin(), parts.end() - 1);
      nodes[i].parent = index.at(up);
    }
  }

  // Drop what exists, without following anything. A parent known missing answers for its
  // children, so a fresh tree costs one probe.
  for (std::size_t i : order) {
    Node& n = nodes[i];
    if (n.parent != kNone && nodes[n.parent].state == State::Missing) {
      n.state = State::Missing;
      continue;
    }
    auto dir = parent_handle(root, n, nullptr);
    if (!dir.ok()) return stop(dir.take_error());
    struct stat st;
    int rc;
    do rc = ::fstatat(dir.value().get(), n.path.leaf().c_str(), &st, AT_SYMLINK_NOFOLLOW);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      if (errno != ENOENT) return stop(sys_error(errno, "fstatat", n.shown));
      n.state = State::Missing;
    } else if (S_ISDIR(st.st_mode)) {
      n.state = State::Exists;
      n.identity = identity_of(st);
    } else if (S_ISLNK(st.st_mode)) {
      return stop(refusal(Refusal::Symlink, "mkdir", n.shown,
                          "'" + n.shown + "' is a symbolic link where a directory is wanted", ELOOP));
    } else {
      // As Node's mkdir -p: the named directory itself is taken (EEXIST), or a component on the
      // way to it is not a directory (ENOTDIR).
      Error e = sys_error(n.listed ? EEXIST : ENOTDIR, "mkdir", n.shown);
      e.description = "'" + n.shown + "' exists and is not a directory";
      return stop(std::move(e));
    }
  }

  if (options.after_plan && !options.after_plan->empty()) {
    auto hooked = run_hook(root, *options.after_plan);
    if (!hooked.ok()) return stop(hooked.take_error());
  }

  // Run.
  for (std::size_t i : order) {
    Node& n = nodes[i];
    if (n.state != State::Missing) continue;
    const Identity* expected = n.parent == kNone ? nullptr : &nodes[n.parent].identity;
    auto dir = parent_handle(root, n, expected);
    if (!dir.ok()) return stop(dir.take_error());
    int parent = dir.value().get();
    const std::string& leaf = n.path.leaf();
    int rc;
    do rc = ::mkdirat(parent, leaf.c_str(), n.mode & 07777);
    while (rc != 0 && errno == EINTR);
    if (rc != 0) {
      int err = errno;
      if (err == EEXIST && options.tolerate_existing) {
        // A concurrent creator won the race: fine if, without following, it is a directory.
        struct stat st;
        if (::fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
          return stop(sys_error(errno, "fstatat", n.shown));
        }
        if (S_ISDIR(st.st_mode)) {
          n.state = State::Exists;
          n.identity = identity_of(st);
          continue;
        }
        if (S_ISLNK(st.st_mode)) {
          return stop(refusal(Refusal::Symlink, "mkdir", n.shown,
                              "'" + n.shown + "' is a symbolic link where a directory is wanted", ELOOP));
        }
        return stop(sys_error(n.listed ? EEXIST : ENOTDIR, "mkdir", n.shown));
      }
      Error e = sys_error(err, "mkdir", n.shown);
      if (err == EEXIST) {
        e.description = "'" + n.shown + "' appeared after planning: not ours, left untouched";
      }
      return stop(std::move(e));
    }
    if (options.exact_modes) {
      // Open what now stands at the name, without following, to learn the identity that becomes
      // the caller's ownership and to set the mode on that very handle.
      auto made = open_child(root, parent, leaf, kDirHandleFlags, 0, n.shown);
      if (!made.ok()) {
        Error e = made.take_error();
        e.description = "'" + n.shown + "' was created, then replaced before it could be confirmed" +
                        (e.description.empty() ? "" : ": " + e.description);
        return stop(std::move(e));
      }
      struct stat st;
      if (::fstat(made.value().get(), &st) != 0) return stop(sys_error(errno, "fstat", n.shown));
      n.state = State::Created;
      n.identity = identity_of(st);
      out.created.push_back(CreatedDir{n.shown, n.identity});
      auto moded = attr::change_mode(made.value().get(), n.mode & 07777, n.shown);
      if (!moded.ok()) return stop(moded.take_error());
    } else {
      struct stat st;
      if (::fstatat(parent, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
        return stop(sys_error(errno, "fstatat", n.shown));
      }
      if (!S_ISDIR(st.st_mode)) {
        Error e = sys_error(EEXIST, "mkdir", n.shown);
        e.description = "'" + n.shown + "' was created, then replaced by something that is not a directory";
        return stop(std::move(e));
      }
      n.state = State::Created;
      n.identity = identity_of(st);
      out.created.push_back(CreatedDir{n.shown, n.identity});
    }
  }
  return Result<MkdirsOutcome>(std::move(out));
}

}  // namespace pinnedfs::ops
