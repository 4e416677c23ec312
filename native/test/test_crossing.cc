// The search for the first mount a path crosses (core/crossing.h): the check macOS's kernel
// strategy relies on, since XNU cannot refuse a crossing in the lookup, and the one that names the
// mount point for Linux's openat2. Mounts are made in a child's private mount namespace, so the
// test binary's own view never changes; where none can be had the case is skipped, saying why.
#include <fcntl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/crossing.h"
#include "harness.h"
#include "platform/platform.h"

using namespace pinnedfs;

namespace {

struct Tree {
  std::string base;  // holds the root and what is mounted into it
  std::string root;
};

// root/{d/e/g, mnt/, fmnt, tmp/, d/inner/, tomnt -> mnt, dlink -> d}; outside/{m.txt, sub/x}.
Tree make_tree() {
  Tree t;
  t.base = test::scratch_dir();
  t.root = t.base + "/root";
  for (const char* d : {"/root", "/root/d", "/root/d/e", "/root/d/inner", "/root/mnt", "/root/tmp",
                        "/outside", "/outside/sub"}) {
    ::mkdir((t.base + d).c_str(), 0755);
  }
  test::write_file(t.root + "/d/e/g", "g");
  test::write_file(t.root + "/fmnt", "mine");
  test::write_file(t.base + "/outside/m.txt", "theirs");
  test::write_file(t.base + "/outside/sub/x", "x");
  ::symlink("mnt", (t.root + "/tomnt").c_str());
  ::symlink("d", (t.root + "/dlink").c_str());
  return t;
}

// In the child's own mount namespace: outside/ bound at mnt and d/inner, outside/m.txt bound over
// fmnt, and a tmpfs (its own device) at tmp. False when the system allows none of it.
bool mount_all(const Tree& t) {
  const std::string outside = t.base + "/outside";
  auto bind = [](const std::string& from, const std::string& to) {
    return ::mount(from.c_str(), to.c_str(), "none", MS_BIND, nullptr) == 0;
  };
  if (!bind(outside, t.root + "/mnt") || !bind(outside, t.root + "/d/inner") ||
      !bind(outside + "/m.txt", t.root + "/fmnt") ||
      ::mount("tmpfs", (t.root + "/tmp").c_str(), "tmpfs", 0, "size=64k") != 0) {
    return false;
  }
  test::write_file(t.root + "/tmp/t.txt", "t");
  return true;
}

struct Row {
  const char* how;
  const char* path;
  std::size_t want;  // components in the first prefix on another mount; 0: none
};

// Makes the mounts in a child's own namespace, pins the root there and checks every row against
// `base` (the root's mount, or a device-only identity made from it).
void check_rows(const std::vector<Row>& rows, bool device_only) {
  Tree t = make_tree();
  int verdict = test::in_mount_namespace([&]() -> int {
    if (!mount_all(t)) return test::kNoMountNamespace;
    Fd root(::open(t.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    auto mount = platform::mount_of(root.get());
    if (!root.valid() || !mount.ok()) return 3;
    MountIdentity base = mount.value();
    if (device_only) base.has_id = false;
    int wrong = 0;
    for (const Row& row : rows) {
      std::size_t got = first_crossing(root.get(), base, row.path);
      if (got == row.want) continue;
      std::fprintf(stderr, "    %s: first_crossing(\"%s\") = %zu, expected %zu\n", row.how,
                   row.path, got, row.want);
      ++wrong;
    }
    return wrong == 0 ? 0 : 1;
  });
  CHECK(verdict == 0 || verdict == test::kNoMountNamespace);
}

}  // namespace

TEST(first_crossing_names_the_mount_point_whatever_lies_behind_it) {
  check_rows(
      {
          {"a missing name behind a mount", "mnt/nope", 1},
          {"a missing directory behind a mount", "mnt/nope/deeper", 1},
          {"a file behind a mount", "mnt/m.txt", 1},
          {"a file used as a directory behind a mount", "mnt/m.txt/x", 1},
          {"a deeper file behind a mount", "mnt/sub/x", 1},
          {"the mount point as the last component", "mnt", 1},
          {"a mount below a directory", "d/inner/m.txt", 2},
          {"a deeper mount point itself", "d/inner", 2},
          {"a file mounted over a file", "fmnt", 1},
          {"another file system", "tmp/t.txt", 1},
          {"a link to the mount point, not followed", "tomnt/m.txt", 0},
          {"a final link to the mount point, not followed", "tomnt", 0},
          {"a link on the way, not followed", "dlink/inner/m.txt", 0},
          {"a path with no mount", "d/e/g", 0},
          {"a missing name before anything mounted", "d/nope/mnt", 0},
          {"a file used as a directory, no mount", "d/e/g/mnt", 0},
          {"the directory itself", ".", 0},
      },
      false);
}

// Where mounts have no ids (macOS, where every volume has its own st_dev), the device decides:
// a file system mounted inside is found, and a same-device bind mount cannot be told apart.
TEST(first_crossing_by_device_alone_finds_another_file_system) {
  check_rows(
      {
          {"another device", "tmp/t.txt", 1},
          {"a missing name on another device", "tmp/nope", 1},
          {"another device's mount point itself", "tmp", 1},
          {"the root's own device", "d/e/g", 0},
      },
      true);
}

TEST(leading_components_cuts_at_a_component_boundary) {
  CHECK(leading_components("a/b/c", 1) == "a");
  CHECK(leading_components("a/b/c", 2) == "a/b");
  CHECK(leading_components("a/b/c", 3) == "a/b/c");
  CHECK(leading_components("a/b/c", 9) == "a/b/c");
  CHECK(leading_components("a/b/c", 0).empty());
  CHECK(leading_components("abc", 1) == "abc");
}
