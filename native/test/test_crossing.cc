// The search for the first mount a path crosses (core/crossing.h): the check macOS's kernel
// strategy relies on, since XNU cannot refuse a crossing in the lookup, and the one that names the
// mount point for Linux's openat2. Mounts are made in a child's private mount namespace, so the
// test binary's own view never changes; where none can be had the case is skipped, saying why.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>

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

// In the child: a private namespace with outside/ bound at mnt and d/inner, outside/m.txt bound
// over fmnt, and a tmpfs (its own device) at tmp. 77 when the system allows none of it.
void mount_in_child(const Tree& t) {
  if (::unshare(CLONE_NEWNS) != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) _exit(77);
  if (::mount("none", "/", "none", MS_REC | MS_PRIVATE, nullptr) != 0) _exit(77);
  const std::string outside = t.base + "/outside";
  if (::mount(outside.c_str(), (t.root + "/mnt").c_str(), "none", MS_BIND, nullptr) != 0 ||
      ::mount(outside.c_str(), (t.root + "/d/inner").c_str(), "none", MS_BIND, nullptr) != 0 ||
      ::mount((outside + "/m.txt").c_str(), (t.root + "/fmnt").c_str(), "none", MS_BIND, nullptr) !=
          0 ||
      ::mount("tmpfs", (t.root + "/tmp").c_str(), "tmpfs", 0, "size=64k") != 0) {
    _exit(77);
  }
  test::write_file(t.root + "/tmp/t.txt", "t");
}

int expect(int rootfd, const MountIdentity& base, const char* path, std::size_t want,
           const char* how) {
  std::size_t got = first_crossing(rootfd, base, path);
  if (got == want) return 0;
  std::fprintf(stderr, "    %s: first_crossing(\"%s\") = %zu, expected %zu\n", how, path, got,
               want);
  return 1;
}

// Runs `body` in a child with the mounts made; skips with the reason when they cannot be.
template <class Body>
void in_mounted_child(const Tree& t, Body body) {
  std::fflush(nullptr);
  pid_t child = ::fork();
  CHECK(child >= 0);
  if (child == 0) {
    mount_in_child(t);
    int rootfd = ::open(t.root.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (rootfd < 0) _exit(3);
    int wrong = body(rootfd);
    std::fflush(nullptr);
    _exit(wrong == 0 ? 0 : 1);
  }
  int status = 0;
  CHECK(::waitpid(child, &status, 0) == child);
  CHECK(WIFEXITED(status));
  if (WEXITSTATUS(status) == 77) {
    std::fprintf(stderr,
                 "    skipped: no private mount namespace here (unshare or mount refused), so no "
                 "mount could be made inside the root\n");
    return;
  }
  CHECK(WEXITSTATUS(status) == 0);
}

}  // namespace

TEST(first_crossing_names_the_mount_point_whatever_lies_behind_it) {
  Tree t = make_tree();
  in_mounted_child(t, [&](int rootfd) {
    auto base = platform::mount_of(rootfd);
    if (!base.ok()) return 1;
    const MountIdentity& b = base.value();
    int wrong = 0;
    wrong += expect(rootfd, b, "mnt/nope", 1, "a missing name behind a mount");
    wrong += expect(rootfd, b, "mnt/nope/deeper", 1, "a missing directory behind a mount");
    wrong += expect(rootfd, b, "mnt/m.txt", 1, "a file behind a mount");
    wrong += expect(rootfd, b, "mnt/m.txt/x", 1, "a file used as a directory behind a mount");
    wrong += expect(rootfd, b, "mnt/sub/x", 1, "a deeper file behind a mount");
    wrong += expect(rootfd, b, "mnt", 1, "the mount point as the last component");
    wrong += expect(rootfd, b, "d/inner/m.txt", 2, "a mount below a directory");
    wrong += expect(rootfd, b, "d/inner", 2, "a deeper mount point itself");
    wrong += expect(rootfd, b, "fmnt", 1, "a file mounted over a file");
    wrong += expect(rootfd, b, "tmp/t.txt", 1, "another file system");
    wrong += expect(rootfd, b, "tomnt/m.txt", 0, "a link to the mount point, not followed");
    wrong += expect(rootfd, b, "tomnt", 0, "a final link to the mount point, not followed");
    wrong += expect(rootfd, b, "dlink/inner/m.txt", 0, "a link on the way, not followed");
    wrong += expect(rootfd, b, "d/e/g", 0, "a path with no mount");
    wrong += expect(rootfd, b, "d/nope/mnt", 0, "a missing name before anything mounted");
    wrong += expect(rootfd, b, "d/e/g/mnt", 0, "a file used as a directory, no mount");
    wrong += expect(rootfd, b, ".", 0, "the directory itself");
    return wrong;
  });
}

// Where mounts have no ids (macOS, where every volume has its own st_dev), the device decides:
// a file system mounted inside is found, and a same-device bind mount cannot be told apart.
TEST(first_crossing_by_device_alone_finds_another_file_system) {
  Tree t = make_tree();
  in_mounted_child(t, [&](int rootfd) {
    struct stat st;
    if (::fstat(rootfd, &st) != 0) return 1;
    MountIdentity b;
    b.dev = static_cast<std::uint64_t>(st.st_dev);
    int wrong = 0;
    wrong += expect(rootfd, b, "tmp/t.txt", 1, "another device");
    wrong += expect(rootfd, b, "tmp/nope", 1, "a missing name on another device");
    wrong += expect(rootfd, b, "tmp", 1, "another device's mount point itself");
    wrong += expect(rootfd, b, "d/e/g", 0, "the root's own device");
    return wrong;
  });
}

TEST(leading_components_cuts_at_a_component_boundary) {
  CHECK(leading_components("a/b/c", 1) == "a");
  CHECK(leading_components("a/b/c", 2) == "a/b");
  CHECK(leading_components("a/b/c", 3) == "a/b/c");
  CHECK(leading_components("a/b/c", 9) == "a/b/c");
  CHECK(leading_components("a/b/c", 0).empty());
  CHECK(leading_components("abc", 1) == "abc");
}
