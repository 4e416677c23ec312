// The root identity (core/root.h, RootIdentity): the same text for the same directory however it is
// asked for, and another for a directory that got a deleted workspace's inode number.
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "core/execute.h"
#include "core/root.h"
#include "harness.h"

using namespace pinnedfs;

namespace {
// A fresh scratch directory, and the workspace `ws` made in it.
struct Workspace {
  std::string base, ws;
};
Workspace workspace() {
  Workspace w{test::scratch_dir(), {}};
  w.ws = w.base + "/ws";
  if (::mkdir(w.ws.c_str(), 0755) != 0) test::fail(__FILE__, __LINE__, "mkdir " + w.ws);
  return w;
}
}  // namespace

TEST(root_identity_is_the_same_for_the_same_directory_and_carries_what_reuse_does_not_repeat) {
  for (Strategy strategy : test::strategies()) {
    auto [base, ws] = workspace();
    auto pinned = Root::pin(ws, strategy);
    CHECK(pinned.ok());
    auto identified = identify_root(ws);
    CHECK(identified.ok());
    CHECK(identified.value() == pinned.value()->root_identity());
    CHECK(identified.value().str() == pinned.value()->root_identity().str());
    // The scratch directory's file system records birth times (ext4, tmpfs): the identity says so.
    CHECK(pinned.value()->root_identity().kind != RootIdentity::Kind::Plain);
    std::string text = pinned.value()->root_identity().str();
    CHECK(text.rfind(pinned.value()->identity().str() + ":", 0) == 0);

    // The workspace deleted, a directory outside it made until it gets the same inode number, and
    // the workspace's path a symlink to it: dev:ino repeats, the identity does not.
    struct stat was;
    CHECK(::stat(ws.c_str(), &was) == 0);
    pinned = Result<std::shared_ptr<Root>>(bad_argument("released"));
    CHECK(::rmdir(ws.c_str()) == 0);
    bool reused = false;
    std::string elsewhere;
    for (int i = 0; i < 20 && !reused; ++i) {
      elsewhere = base + "/outside" + std::to_string(i);
      CHECK(::mkdir(elsewhere.c_str(), 0755) == 0);
      struct stat now;
      CHECK(::stat(elsewhere.c_str(), &now) == 0);
      reused = now.st_ino == was.st_ino && now.st_dev == was.st_dev;
    }
    if (!reused) {
      std::fprintf(stderr,
                   "  (no inode number was reused here: the reuse half is not exercised)\n");
      continue;
    }
    CHECK(::symlink(elsewhere.c_str(), ws.c_str()) == 0);
    auto now = identify_root(ws);
    CHECK(now.ok());
    CHECK(now.value().id.ino == was.st_ino);
    CHECK(now.value().str() != text);
    auto repinned = Root::pin(ws, strategy);
    CHECK(repinned.ok());
    CHECK(repinned.value()->root_identity().str() != text);
  }
}

TEST(the_root_path_check_reads_the_identity_through_the_path_and_refuses_another_directory) {
  for (Strategy strategy : test::strategies()) {
    auto [base, ws] = workspace();
    auto pinned = Root::pin(ws, strategy);
    CHECK(pinned.ok());
    CHECK(pinned.value()->verify_path_identity().ok());
    // Renamed away and replaced: the path now names another directory. (The pinned handle keeps the
    // old inode alive, so its number cannot come back while pinned: the reuse attack meets a fresh
    // pin, which the test above covers.)
    CHECK(::rename(ws.c_str(), (base + "/away").c_str()) == 0);
    CHECK(::mkdir(ws.c_str(), 0755) == 0);
    auto changed = pinned.value()->verify_path_identity();
    CHECK(!changed.ok());
    CHECK(changed.error().refusal == Refusal::IdentityChanged);
    CHECK(changed.error().err == EBUSY);
  }
}
