// The proof that a held handle is still beneath the root (core/beneath.h), the descent that
// arrives proven, the mount identity, and the cursor the directory programs travel with, straight
// on the core, both strategies. Directories are moved out of (and within) the root by the test
// itself between the open and the proof, so every answer is deterministic.
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <initializer_list>
#include <string>

#include "core/beneath.h"
#include "core/execute.h"
#include "core/resolve.h"
#include "harness.h"
#include "ops/dir_cursor.h"
#include "platform/platform.h"

using namespace pinnedfs;

namespace {

const std::vector<Strategy>& kStrategies = test::strategies();

struct World {
  std::string base, root, outside;
};

World world() {
  World w;
  w.base = test::scratch_dir();
  w.root = w.base + "/root";
  w.outside = w.base + "/outside";
  ::mkdir(w.root.c_str(), 0755);
  ::mkdir(w.outside.c_str(), 0755);
  return w;
}

void mkdirs(const std::string& path) {
  std::string at;
  std::size_t pos = 0;
  while (pos != std::string::npos) {
    pos = path.find('/', pos + 1);
    at = path.substr(0, pos);
    ::mkdir(at.c_str(), 0755);
  }
}

// world(), with the directories `inside` made beneath its root and `outside` beside it.
World world_with(std::initializer_list<const char*> inside,
                 std::initializer_list<const char*> outside = {}) {
  World w = world();
  for (const char* rel : inside) mkdirs(w.root + "/" + rel);
  for (const char* rel : outside) mkdirs(w.outside + "/" + rel);
  return w;
}

using test::hold;

std::string chain(std::size_t depth) {
  std::string rel;
  for (std::size_t i = 0; i < depth; ++i) rel += i ? "/d" : "d";
  return rel;
}

}  // namespace

TEST(a_held_directory_in_place_proves_beneath_at_any_depth) {
  for (Strategy s : kStrategies) {
    World w = world();
    // Shallow: the lookup proof; deep (past kLookupDepth): /proc's account under both strategies.
    for (std::size_t depth : {std::size_t{1}, std::size_t{3}, kLookupDepth + 8}) {
      std::string rel = "p" + std::to_string(depth) + "/" + chain(depth);
      mkdirs(w.root + "/" + rel);
      auto root = Root::pin(w.root, s);
      CHECK(root.ok());
      Held h = hold(*root.value(), rel);
      CHECK(h.valid());
      CHECK(h.beneath(*root.value(), "test", rel).ok());
      CHECK(h.beneath(*root.value(), "test", rel).ok());  // and again: proofs are not spent
    }
  }
}

TEST(a_directory_moved_out_of_the_root_is_refused_as_an_escape) {
  for (Strategy s : kStrategies) {
    for (std::size_t depth : {std::size_t{2}, kLookupDepth + 8}) {
      World w = world();
      std::string rel = "a/" + chain(depth - 1);
      mkdirs(w.root + "/" + rel);
      auto root = Root::pin(w.root, s);
      CHECK(root.ok());
      Held h = hold(*root.value(), rel);
      CHECK(h.valid());
      CHECK(::rename((w.root + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
      auto proof = h.beneath(*root.value(), "mkdir", rel);
      CHECK(!proof.ok());
      CHECK(proof.error().refusal == Refusal::Escape);
      CHECK(proof.error().moved);
      CHECK(!proof.error().mount);
      CHECK(proof.error().description.find("moved out of the root") != std::string::npos);
      // Even with a decoy at the old path: the held directory is outside, and says so.
      mkdirs(w.root + "/" + rel);
      auto decoyed = h.beneath(*root.value(), "mkdir", rel);
      CHECK(!decoyed.ok());
      CHECK(decoyed.error().refusal == Refusal::Escape);
    }
  }
}

TEST(a_directory_moved_or_replaced_within_the_root_answers_as_its_path_does_now) {
  for (Strategy s : kStrategies) {
    World w = world_with({"a/b"});
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    // Moved within the root, nothing at its path: a concurrent change, not an escape.
    Held moved = hold(*root.value(), "a/b");
    CHECK(::rename((w.root + "/a/b").c_str(), (w.root + "/a/c").c_str()) == 0);
    auto gone = moved.beneath(*root.value(), "test", "a/b");
    CHECK(!gone.ok() && gone.error().moved);
    CHECK(gone.error().refusal == Refusal::IdentityChanged);
    // Another directory at its path.
    mkdirs(w.root + "/a/b");
    auto other = moved.beneath(*root.value(), "test", "a/b");
    CHECK(!other.ok() && other.error().refusal == Refusal::IdentityChanged);
    // A link at its path.
    Held replaced = hold(*root.value(), "a/b");
    CHECK(::rmdir((w.root + "/a/b").c_str()) == 0);
    CHECK(::symlink(w.outside.c_str(), (w.root + "/a/b").c_str()) == 0);
    auto link = replaced.beneath(*root.value(), "test", "a/b");
    CHECK(!link.ok() && link.error().refusal == Refusal::Symlink && link.error().moved);
    // A file at its path.
    Held filed = hold(*root.value(), "a/c");
    CHECK(::rmdir((w.root + "/a/c").c_str()) == 0);
    test::write_file(w.root + "/a/c", "x");
    auto file = filed.beneath(*root.value(), "test", "a/c");
    CHECK(!file.ok() && file.error().err == ENOTDIR && file.error().moved);
  }
}

TEST(the_root_moving_carries_what_it_holds_with_it) {
  for (Strategy s : kStrategies) {
    World w = world();
    mkdirs(w.root + "/a/" + chain(kLookupDepth + 2));
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    Held shallow = hold(*root.value(), "a");
    Held deep = hold(*root.value(), "a/" + chain(kLookupDepth + 2));
    // The pinned root renamed: what it holds is still beneath it.
    CHECK(::rename(w.root.c_str(), (w.base + "/elsewhere").c_str()) == 0);
    CHECK(shallow.beneath(*root.value(), "test", "a").ok());
    CHECK(deep.beneath(*root.value(), "test", "deep").ok());
  }
}

TEST(a_lookup_proof_is_spent_by_one_act) {
  for (Strategy s : kStrategies) {
    World w = world_with({"a/b"});
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    auto lexed = lex_path("a/b");
    auto held = hold_beneath(*root.value(), lexed.value(), kDirHandleFlags);
    CHECK(held.ok());
    Held h = held.take();
    CHECK(::rename((w.root + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
    // Under the kernel strategy the lookup an instant ago was the proof, good for the one act that
    // follows it at once (here, by construction, after the move: that is the residual window).
    // The walk's lookup proves nothing: it is refused at once.
    auto first = h.beneath(*root.value(), "test", "a/b");
    CHECK(first.ok() == (root.value()->strategy() == Strategy::Kernel));
    auto second = h.beneath(*root.value(), "test", "a/b");
    CHECK(!second.ok() && second.error().refusal == Refusal::Escape);
  }
}

TEST(descend_arrives_proven_from_the_root_and_refuses_a_departed_parent) {
  for (Strategy s : kStrategies) {
    World w = world_with({"a/b/c"}, {"x"});
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    Held a = hold(*root.value(), "a");
    auto b = descend(*root.value(), a, "b", kDirHandleFlags, "a/b");
    CHECK(b.ok());
    CHECK(b.value().rel() == "a/b");
    // The parent leaves: the child cannot be had from it any more, and the refusal says why.
    CHECK(::rename((w.root + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
    auto c = descend(*root.value(), b.value(), "c", kDirHandleFlags, "a/b/c");
    if (root.value()->strategy() == Strategy::Kernel) {
      CHECK(!c.ok());
      CHECK(c.error().refusal == Refusal::Escape && c.error().moved);
    } else {
      // The walk opens the child from the parent's handle; the proof before any use refuses it.
      CHECK(c.ok());
      auto use = c.value().beneath(*root.value(), "getdents64", "a/b/c");
      CHECK(!use.ok() && use.error().refusal == Refusal::Escape);
    }
  }
}

TEST(descend_past_the_lookup_depth_opens_from_the_parent_and_proves_later) {
  for (Strategy s : kStrategies) {
    World w = world();
    std::string rel = chain(kLookupDepth + 1);
    mkdirs(w.root + "/" + rel + "/leaf");
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    Held parent = hold(*root.value(), rel);
    auto leaf = descend(*root.value(), parent, "leaf", kDirHandleFlags, rel + "/leaf");
    CHECK(leaf.ok());
    CHECK(leaf.value().beneath(*root.value(), "test", "leaf").ok());
  }
}

TEST(the_mount_of_a_descriptor_is_the_roots_for_anything_not_crossed) {
  World w = world_with({"a"});
  auto root = Root::pin(w.root, Strategy::Walk);
  CHECK(root.ok());
  int fd = ::open((w.root + "/a").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);
  Fd closer(fd);
  CHECK(same_mount(*root.value(), fd, "a").ok());
#if defined(__linux__)
  CHECK(root.value()->mount().has_id);
  // /proc itself is another mount.
  int proc = ::open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK(proc >= 0);
  Fd proc_closer(proc);
  auto other = same_mount(*root.value(), proc, "proc");
  CHECK(!other.ok() && other.error().mount && other.error().refusal == Refusal::Escape);
#endif
}

TEST(one_look_tells_what_lstat_tells_and_the_mount_a_handle_tells) {
  World w = world_with({"d"});
  test::write_file(w.root + "/d/f.txt", "twelve bytes");
  ::symlink("f.txt", (w.root + "/d/link").c_str());
  int dir = ::open((w.root + "/d").c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(dir >= 0);
  Fd closer(dir);
  for (const char* name : {"f.txt", "link", ""}) {
    struct stat told, plain;
    MountIdentity mount;
    CHECK(platform::lstat_with_mount(dir, name, &told, &mount) == 0);
    CHECK((*name ? ::fstatat(dir, name, &plain, AT_SYMLINK_NOFOLLOW) : ::fstat(dir, &plain)) == 0);
    CHECK(told.st_dev == plain.st_dev && told.st_ino == plain.st_ino);
    CHECK(told.st_mode == plain.st_mode && told.st_nlink == plain.st_nlink);
    CHECK(told.st_size == plain.st_size && told.st_uid == plain.st_uid);
    CHECK(told.st_mtim.tv_sec == plain.st_mtim.tv_sec);
    CHECK(told.st_mtim.tv_nsec == plain.st_mtim.tv_nsec);
    auto by_handle = platform::mount_of(dir);
    CHECK(by_handle.ok() && mount.same_as(by_handle.value()));
    CHECK(mount.dev == static_cast<std::uint64_t>(plain.st_dev));
  }
  struct stat st;
  MountIdentity mount;
  CHECK(platform::lstat_with_mount(dir, "missing", &st, &mount) == ENOENT);
#if defined(__linux__)
  // /proc is another mount, and the look says so without a handle of its own.
  auto root = Root::pin(w.root, Strategy::Walk);
  CHECK(root.ok());
  CHECK(platform::lstat_with_mount(AT_FDCWD, "/proc", &st, &mount) == 0);
  CHECK(mount.has_id && mount_told(*root.value(), mount) == MountTold::Other);
  CHECK(platform::lstat_with_mount(dir, "f.txt", &st, &mount) == 0);
  CHECK(mount_told(*root.value(), mount) == MountTold::Root);
#endif
}

#if defined(__linux__)
TEST(fdinfo_mount_ids_are_read_from_their_line) {
  std::uint64_t id = 0;
  CHECK(platform::parse_fdinfo_mount_id("pos:\t0\nflags:\t02000000\nmnt_id:\t42\nino:\t7\n", &id));
  CHECK(id == 42);
  CHECK(platform::parse_fdinfo_mount_id("mnt_id: 7", &id) && id == 7);
  CHECK(!platform::parse_fdinfo_mount_id("pos:\t0\nflags:\t0\n", &id));
  CHECK(!platform::parse_fdinfo_mount_id("", &id));
}

TEST(fd_path_tells_where_a_descriptor_is_now) {
  World w = world_with({"a"});
  int fd = ::open((w.root + "/a").c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  CHECK(fd >= 0);
  Fd closer(fd);
  std::string where;
  CHECK(platform::fd_path(fd, &where) == 0);
  CHECK(where == w.root + "/a");
  CHECK(::rename((w.root + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
  CHECK(platform::fd_path(fd, &where) == 0);
  CHECK(where == w.outside + "/a");
}
#endif

TEST(the_cursor_travels_a_tree_and_refuses_a_directory_that_changed) {
  for (Strategy s : kStrategies) {
    World w = world_with({"a/b/c", "a/x/y"});
    auto root = Root::pin(w.root, s);
    CHECK(root.ok());
    std::vector<ops::TreeNode> nodes;
    std::size_t a = ops::add_node(nodes, ops::kNoNode, "a");
    std::size_t b = ops::add_node(nodes, a, "b");
    std::size_t c = ops::add_node(nodes, b, "c");
    std::size_t x = ops::add_node(nodes, a, "x");
    std::size_t y = ops::add_node(nodes, x, "y");
    CHECK(ops::path_of(nodes, c) == "a/b/c");
    ops::DirCursor cursor(*root.value(), nodes);
    CHECK(cursor.move_to(c).ok());
    CHECK(cursor.rel() == "a/b/c");
    CHECK(cursor.held().beneath(*root.value(), "test", "a/b/c").ok());
    CHECK(cursor.move_to(y).ok());  // up two, down two
    CHECK(cursor.rel() == "a/x/y");
    CHECK(cursor.move_to(ops::kNoNode).ok());
    CHECK(cursor.rel().empty());
    // `b` replaced by another directory: arriving there again is refused.
    CHECK(::rename((w.root + "/a/b").c_str(), (w.root + "/a/b.old").c_str()) == 0);
    mkdirs(w.root + "/a/b");
    auto again = cursor.move_to(b);
    CHECK(!again.ok() && again.error().refusal == Refusal::IdentityChanged);
    CHECK(cursor.at() == ops::kNoNode);  // back home after a failure
    // Standing in y while `a` leaves the root: the proof refuses the handle itself.
    CHECK(cursor.move_to(y).ok());
    CHECK(::rename((w.root + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
    cursor.held()
        .spend();  // a kernel lookup's proof would cover one act at once, not this later one
    auto proof = cursor.held().beneath(*root.value(), "test", "a/x/y");
    CHECK(!proof.ok() && proof.error().refusal == Refusal::Escape);
  }
}

TEST(a_path_longer_than_proc_prints_is_proven_by_climbing_to_an_ancestor_it_prints) {
  for (Strategy s : kStrategies) {
    World w = world();
    // The workspace deep enough that its chain's absolute paths pass 4,095 bytes.
    std::string pad(200, 'x');
    std::string root_path = w.root + "/" + pad + "/" + pad;
    mkdirs(root_path);
    std::string rel = "a/" + chain(1900);
    CHECK(root_path.size() + 1 + rel.size() > 4095);
    // Made through the pinned root itself: the plain path is too long for mkdir(2) from here.
    auto root = Root::pin(root_path, s);
    CHECK(root.ok());
    Request r;
    r.op = Op::Mkdirs;
    r.plan.push_back(MkdirsEntry{rel, 0755});
    auto made = execute(*root.value(), r, false);
    CHECK(made.ok() && !std::get<MkdirsOutcome>(made.value()).failed);
    Held h = hold(*root.value(), rel);
    CHECK(h.valid());
    CHECK(h.beneath(*root.value(), "test", rel).ok());
    // The top of the chain leaves: the deep handle goes with it and is refused.
    CHECK(::rename((root_path + "/a").c_str(), (w.outside + "/a").c_str()) == 0);
    auto gone = h.beneath(*root.value(), "test", rel);
    CHECK(!gone.ok() && gone.error().refusal == Refusal::Escape);
  }
}
