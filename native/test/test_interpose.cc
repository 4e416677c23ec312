// A directory moved out of the root at an exact system call, straight on the core: the interposer
// (interpose.c, compiled into this binary, where its definitions take the place of libc's for the
// core linked here) renames it out right after the call named. The same cases as
// test/race/mid-walk.test.ts, so a planted bug in either proof fails both suites:
//  - the walk's proof of the parent before it creates or writes the leaf (core/walk.cc);
//  - the replacement's proof before renameat, replacing an existing file (ops/write_atomic.cc).
//  - a copy's proof before renameat after it named its temporary (ops/temp.cc, for copy.cc);
//  - a recursive remove's proof before each unlink, a file's handle taken (ops/remove_tree.cc).
#include "interpose.c"

#include <sys/stat.h>

#include <cstdlib>
#include <string>

#include "core/execute.h"
#include "harness.h"
#include "ops/remove_tree.h"

using namespace pinnedfs;

namespace {

struct Departed {
  std::string base, root, a, outside_a;
};

Departed world() {
  Departed w;
  w.base = test::scratch_dir();
  w.root = w.base + "/root";
  w.a = w.root + "/a";
  w.outside_a = w.base + "/outside-a";
  ::mkdir(w.root.c_str(), 0755);
  ::mkdir(w.a.c_str(), 0755);
  test::write_file(w.a + "/f.txt", "old");
  return w;
}

// Arms the interposer for the next call only: after `at`, rename a out of the root.
struct Armed {
  Armed(const Departed& w, const char* at, bool no_tmpfile = false) {
    pfs_fired = 0;
    ::setenv("PINNEDFS_AT", at, 1);
    ::setenv("PINNEDFS_DO", "rename", 1);
    ::setenv("PINNEDFS_FROM", w.a.c_str(), 1);
    ::setenv("PINNEDFS_TO", w.outside_a.c_str(), 1);
    if (no_tmpfile) ::setenv("PINNEDFS_NO_TMPFILE", "1", 1);
  }
  ~Armed() {
    for (const char* name :
         {"PINNEDFS_AT", "PINNEDFS_DO", "PINNEDFS_FROM", "PINNEDFS_TO", "PINNEDFS_NO_TMPFILE"})
      ::unsetenv(name);
  }
  bool fired() const { return pfs_fired != 0; }
};

Request write_request(const std::string& path, OpenFlag flag, bool in_place) {
  Request r;
  r.op = Op::WriteFile;
  r.path = path;
  r.flag = flag;
  r.in_place = in_place;
  r.data = "PWNED";
  return r;
}

bool refused_as_moved_out(const Result<Value>& r) {
  return !r.ok() && r.error().refusal == Refusal::Escape &&
         r.error().description.find("moved out of the root") != std::string::npos;
}

bool exists(const std::string& p) {
  struct stat st;
  return ::lstat(p.c_str(), &st) == 0;
}

}  // namespace

TEST(the_walk_proves_the_parent_it_holds_before_writing_or_creating_the_leaf) {
  struct Case {
    const char* path;
    OpenFlag flag;
    bool in_place;
  };
  for (Case c : {Case{"a/f.txt", OpenFlag::A, false}, Case{"a/f.txt", OpenFlag::RPlus, false},
                 Case{"a/f.txt", OpenFlag::W, true}, Case{"a/new.txt", OpenFlag::W, true}}) {
    Departed w = world();
    auto root = Root::pin(w.root, Strategy::Walk);
    CHECK(root.ok());
    Armed armed(w, "after:openat:a");
    auto r = execute(*root.value(), write_request(c.path, c.flag, c.in_place), false);
    CHECK(armed.fired());
    CHECK(refused_as_moved_out(r));
    CHECK(test::read_file(w.outside_a + "/f.txt") == "old");
    CHECK(!exists(w.outside_a + "/new.txt"));
  }
}

TEST(replacing_an_existing_file_proves_the_directory_before_renameat_on_both_paths) {
  for (Strategy strategy : test::strategies()) {
    for (bool named : {false, true}) {
      Departed w = world();
      auto root = Root::pin(w.root, strategy);
      CHECK(root.ok());
      // The temporary gets its name in a (linkat of the anonymous file, or the named create), a
      // leaves the root with the target in it, and only the proof before the rename stands between
      // the write and the target outside.
      Armed armed(w, named ? "after:openat:.pinnedfs-*" : "after:linkat:.pinnedfs-*", named);
      auto r = execute(*root.value(), write_request("a/f.txt", OpenFlag::W, false), false);
      CHECK(armed.fired());
      CHECK(refused_as_moved_out(r));
      CHECK(test::read_file(w.outside_a + "/f.txt") == "old");
    }
  }
}

// copyFile over an existing file: the anonymous copy gets a random name in a, and a leaves the root
// with the target in it right then; the proof before the rename refuses, so the target outside
// keeps its content. (The named path proves before its rename as the replacement does.)
TEST(a_copy_over_an_existing_file_proves_the_directory_again_after_naming_its_temporary) {
  for (Strategy strategy : test::strategies()) {
    Departed w = world();
    test::write_file(w.root + "/src.txt", "PWNED");
    auto root = Root::pin(w.root, strategy);
    CHECK(root.ok());
    Request r;
    r.op = Op::CopyFile;
    r.path = "src.txt";
    r.to = "a/f.txt";
    Armed armed(w, "after:linkat:.pinnedfs-*");
    auto done = execute(*root.value(), r, false);
    CHECK(armed.fired());
    CHECK(refused_as_moved_out(done));
    CHECK(test::read_file(w.outside_a + "/f.txt") == "old");
  }
}

// A recursive remove whose directory leaves the root at the instant after a file's handle was
// taken (the remover holds files where freeing is slow, ops/free_watch.h; here from the first) or
// after a file's unlink: the proof that comes next, right before the next unlink, refuses, and the
// files left in the departed directory stay there.
TEST(a_recursive_remove_proves_the_directory_after_holding_a_file_and_before_each_unlink) {
  struct Case {
    const char* at;
    bool hold;
    int outside;  // files left in the departed directory
  };
  for (Strategy strategy : test::strategies()) {
    for (Case c : {Case{"after:openat:f*", true, 20}, Case{"after:unlinkat:f*", true, 19},
                   Case{"after:unlinkat:f*", false, 19}}) {
      Departed w = world();
      ::unlink((w.a + "/f.txt").c_str());
      for (int i = 0; i < 20; ++i) test::write_file(w.a + "/f" + std::to_string(i), "x");
      auto root = Root::pin(w.root, strategy);
      CHECK(root.ok());
      ops::hold_every_file(c.hold);
      Request r = test::request(Op::Remove, "a");
      r.recursive = true;
      Armed armed(w, c.at);
      auto done = execute(*root.value(), r, false);
      ops::hold_every_file(false);
      CHECK(armed.fired());
      CHECK(refused_as_moved_out(done));
      int left = 0;
      for (int i = 0; i < 20; ++i) left += exists(w.outside_a + "/f" + std::to_string(i)) ? 1 : 0;
      CHECK(left == c.outside);
    }
  }
}
