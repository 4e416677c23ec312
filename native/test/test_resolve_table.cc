// The resolver as one table of cases, run against both strategies through the entry the operations
// use (prepare_path, then open_beneath): each case names a path, how it is opened, and, for a root
// that refuses every link and for one that follows links within it (Links::Within), either the
// object it must reach or the refusal it must get. The same table answering the same way under
// openat2 and under the walk is the point; a case that one strategy answers differently fails
// with the strategy and the link policy named.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "core/resolve.h"
#include "harness.h"

using namespace pinnedfs;

namespace {

// How a case opens what it resolves: as the operations do for stat/readLink (an object handle, a
// trailing link opened as itself), for a read (a trailing link refused), or as a directory.
enum class Open { Object, Read, Dir };

int flags_of(Open how) {
  switch (how) {
    case Open::Object:
      return kObjectHandleFlags;
    case Open::Read:
      return O_RDONLY | O_NONBLOCK;
    case Open::Dir:
      return kDirHandleFlags;
  }
  return 0;
}

// What a root answers for a row: the entry (relative to the root, "" for the root itself, nullptr
// for the deep chain) the descriptor must be, or the refusal kind and errno.
struct Answer {
  bool ok;
  const char* reaches;
  Refusal refusal;
  int err;
};

Answer reaches(const char* entry) {
  return Answer{true, entry, Refusal::None, 0};
}
Answer refused(Refusal kind, int err) {
  return Answer{false, "", kind, err};
}

struct Row {
  const char* name;
  std::string path;
  Open how;
  Answer refusing;  // a root that refuses every link (Links::Refuse)
  Answer within;    // a root that follows links while they stay beneath it (Links::Within)
};

// A row the two link policies answer alike: no link on its way, or one both refuse the same way.
Row alike(const char* name, std::string path, Open how, Answer both) {
  return Row{name, std::move(path), how, both, both};
}
Row row(const char* name, std::string path, Open how, Answer refusing, Answer within) {
  return Row{name, std::move(path), how, refusing, within};
}

struct World {
  std::string base, root;
};

// root/  f  d/e/g  deep chain c/c/...  and links: rel -> f, abs -> <root>/f, dir -> d,
// absdir -> <root>/d, out -> ../outside, proc -> /proc/self/root, procfd -> /proc/self/fd/0,
// dir2 -> dir, loop -> loop, dangle -> nope, d/up -> ../f, d/twist -> e/../../d/e,
// d/e/upup -> ../../../outside/secret. outside/secret lies next to the root.
constexpr int kDeep = 40;

World build() {
  World w;
  w.base = test::scratch_dir();
  w.root = w.base + "/root";
  ::mkdir(w.root.c_str(), 0755);
  ::mkdir((w.base + "/outside").c_str(), 0755);
  test::write_file(w.base + "/outside/secret", "outside");
  test::write_file(w.root + "/f", "f");
  ::mkdir((w.root + "/d").c_str(), 0755);
  ::mkdir((w.root + "/d/e").c_str(), 0755);
  test::write_file(w.root + "/d/e/g", "g");
  std::string chain = w.root;
  for (int i = 0; i < kDeep; ++i) {
    chain += "/c";
    ::mkdir(chain.c_str(), 0755);
  }
  ::symlink("f", (w.root + "/rel").c_str());
  ::symlink((w.root + "/f").c_str(), (w.root + "/abs").c_str());
  ::symlink("d", (w.root + "/dir").c_str());
  ::symlink((w.root + "/d").c_str(), (w.root + "/absdir").c_str());
  ::symlink("../outside", (w.root + "/out").c_str());
  ::symlink("/proc/self/root", (w.root + "/proc").c_str());
  ::symlink("/proc/self/fd/0", (w.root + "/procfd").c_str());
  ::symlink("dir", (w.root + "/dir2").c_str());
  ::symlink("loop", (w.root + "/loop").c_str());
  ::symlink("nope", (w.root + "/dangle").c_str());
  ::symlink("../f", (w.root + "/d/up").c_str());
  ::symlink("e/../../d/e", (w.root + "/d/twist").c_str());
  ::symlink("../../../outside/secret", (w.root + "/d/e/upup").c_str());
  return w;
}

std::string deep_path() {
  std::string p;
  for (int i = 0; i < kDeep; ++i) p += i ? "/c" : "c";
  return p;
}

std::vector<Row> table() {
  std::string long_name(256, 'x');  // NAME_MAX + 1
  std::string long_path;
  while (long_path.size() < 4096) long_path += "a/";     // PATH_MAX reached, every name short
  const Answer loop = refused(Refusal::Symlink, ELOOP);  // a link refused, or one that loops
  const Answer escape = refused(Refusal::Escape, EXDEV);
  return {
      alike("plain file", "f", Open::Read, reaches("f")),
      alike("nested file", "d/e/g", Open::Read, reaches("d/e/g")),
      alike("dot segments", "./d/./e/./g", Open::Read, reaches("d/e/g")),
      alike("dotdot inside the root", "d/e/../../f", Open::Read, reaches("f")),
      alike("dotdot ending on a directory", "d/e/..", Open::Dir, reaches("d")),
      alike("empty path is the root", "", Open::Dir, reaches("")),
      alike("dot is the root", ".", Open::Dir, reaches("")),
      alike("trailing slash on a directory", "d/e/", Open::Dir, reaches("d/e")),
      alike("deep chain", deep_path(), Open::Dir, reaches(nullptr)),
      alike("final link opened as itself", "rel", Open::Object, reaches("rel")),
      alike("final proc link opened as itself", "procfd", Open::Object, reaches("procfd")),
      alike("dotdot above the root", "..", Open::Dir, escape),
      alike("dotdot escaping after a descent", "d/../../outside/secret", Open::Read, escape),
      row("final relative link read", "rel", Open::Read, loop, reaches("f")),
      row("final absolute link read", "abs", Open::Read, loop, escape),
      row("intermediate relative link", "dir/e/g", Open::Read, loop, reaches("d/e/g")),
      row("intermediate link, object handle", "dir/e/g", Open::Object, loop, reaches("d/e/g")),
      row("intermediate link, directory handle", "dir/e", Open::Dir, loop, reaches("d/e")),
      row("intermediate absolute link", "absdir/e", Open::Dir, loop, escape),
      row("intermediate link leaving the root", "out/secret", Open::Read, loop, escape),
      row("a link to a link", "dir2/e/g", Open::Read, loop, reaches("d/e/g")),
      // Within, ".." after a followed link is physical: the parent of where the link led.
      row("link before a dotdot", "dir/../f", Open::Read, loop, reaches("f")),
      row("dotdot after a followed link and back", "dir/e/../e/g", Open::Read, loop,
          reaches("d/e/g")),
      row("dotdot in the link text, inside", "d/up", Open::Read, loop, reaches("f")),
      row("dotdot chain in the link text, inside", "d/twist/g", Open::Read, loop, reaches("d/e/g")),
      row("dotdot chain in the link text leaving", "d/e/upup", Open::Read, loop, escape),
      alike("final link not followed for a directory handle", "dir", Open::Dir, loop),
      row("link to a proc magic link as a directory", "proc/etc", Open::Dir, loop, escape),
      row("final link to a proc magic link read", "procfd", Open::Read, loop, escape),
      alike("a link loop", "loop/x", Open::Read, loop),
      alike("a final link loop read", "loop", Open::Read, loop),
      row("missing behind a link", "dir/nope", Open::Read, loop, refused(Refusal::None, ENOENT)),
      row("dangling final link read", "dangle", Open::Read, loop, refused(Refusal::None, ENOENT)),
      row("file used as a directory behind a link", "dir/e/g/x", Open::Read, loop,
          refused(Refusal::None, ENOTDIR)),
      row("trailing slash on a link", "rel/", Open::Read, loop, refused(Refusal::None, ENOTDIR)),
      alike("trailing slash on a file", "f/", Open::Read, refused(Refusal::None, ENOTDIR)),
      alike("missing leaf", "nope", Open::Read, refused(Refusal::None, ENOENT)),
      alike("missing directory on the way", "nope/f", Open::Read, refused(Refusal::None, ENOENT)),
      alike("file used as a directory", "f/x", Open::Read, refused(Refusal::None, ENOTDIR)),
      alike("NUL byte", std::string("f\0x", 3), Open::Read, refused(Refusal::BadArgument, EINVAL)),
      alike("absolute input", "/etc/passwd", Open::Read, refused(Refusal::BadArgument, EINVAL)),
      alike("component over NAME_MAX", long_name, Open::Read,
            refused(Refusal::BadArgument, ENAMETOOLONG)),
      alike("path over PATH_MAX", long_path, Open::Dir,
            refused(Refusal::BadArgument, ENAMETOOLONG)),
  };
}

std::string strategy_label(Strategy s) {
  return s == Strategy::Kernel ? "openat2" : "walk";
}

// prepare_path then open_beneath, the way every operation resolves a path.
Result<Fd> resolve(const Root& root, const std::string& path, Open how) {
  auto prepared = prepare_path(root, path);
  if (!prepared.ok()) return prepared.take_error();
  return open_beneath(root, prepared.value(), flags_of(how));
}

bool same_object(int fd, const std::string& absolute) {
  struct stat got, want;
  return ::fstat(fd, &got) == 0 && ::lstat(absolute.c_str(), &want) == 0 &&
         got.st_dev == want.st_dev && got.st_ino == want.st_ino;
}

// One row under one strategy, answered as `want` says: an empty answer when it held, else what
// went wrong.
std::string check_row(const World& w, const Root& root, const Row& row, const Answer& want) {
  auto got = resolve(root, row.path, row.how);
  if (want.ok) {
    if (!got.ok()) {
      return "expected success, got errno " + std::to_string(got.error().err) + " (" +
             got.error().description + ")";
    }
    std::string where = want.reaches ? std::string(want.reaches) : deep_path();
    std::string absolute = where.empty() ? w.root : w.root + "/" + where;
    if (!same_object(got.value().get(), absolute)) return "opened something other than " + where;
    return "";
  }
  if (got.ok()) return "expected a refusal, got a descriptor";
  const Error& e = got.error();
  if (e.refusal != want.refusal || e.err != want.err) {
    return "expected refusal " + std::to_string(static_cast<int>(want.refusal)) + " errno " +
           std::to_string(want.err) + ", got refusal " +
           std::to_string(static_cast<int>(e.refusal)) + " errno " + std::to_string(e.err) + " (" +
           e.description + ")";
  }
  return "";
}

void report(Strategy s, Links links, const Row& row, const std::string& problem) {
  std::fprintf(stderr, "    [%s, %s] %s ('%.60s'): %s\n", strategy_label(s).c_str(),
               links == Links::Within ? "links within" : "links refused", row.name,
               row.path.c_str(), problem.c_str());
}

// Every row against the world's root pinned with `links` under each strategy; each wrong answer
// reported and counted in `*wrong`.
void check_rows(const World& w, const std::vector<Row>& rows, Links links, int* wrong) {
  for (Strategy s : test::strategies()) {
    auto root = Root::pin(w.root, s, links);
    CHECK(root.ok());
    CHECK(root.value()->strategy() == s);
    CHECK(root.value()->links() == links);
    for (const Row& row : rows) {
      std::string problem =
          check_row(w, *root.value(), row, links == Links::Within ? row.within : row.refusing);
      if (!problem.empty()) {
        report(s, links, row, problem);
        ++*wrong;
      }
    }
  }
}

}  // namespace

// Under each link policy: a root that refuses every link, and one pinned with Links::Within, which
// follows links while their resolution stays beneath the root (on the way always; as the final
// component of a read only) and refuses what leaves the root (an absolute text, a ".." climbing
// out), loops, or names a /proc magic link, alike by openat2 (RESOLVE_BENEATH without
// RESOLVE_NO_SYMLINKS) and by the walk's own in-root resolution.
TEST(resolver_table_answers_every_case_alike_under_both_strategies) {
  World w = build();
  const std::vector<Row> rows = table();
  int wrong = 0;
  check_rows(w, rows, Links::Refuse, &wrong);
  check_rows(w, rows, Links::Within, &wrong);
  CHECK(wrong == 0);
}

// A mount inside the root is a way out (a bind mount of a directory elsewhere): resolution must
// refuse to cross it under both strategies. Mounting needs a private mount namespace, made in a
// child process so the test binary's own view of the system never changes; where the system gives
// none (no privilege, no user namespaces), the case is skipped with the reason printed.
TEST(resolver_table_refuses_a_mount_point_under_both_strategies) {
  World w = build();
  ::mkdir((w.root + "/mnt").c_str(), 0755);
  int verdict = test::in_mount_namespace([&]() -> int {
    if (::mount((w.base + "/outside").c_str(), (w.root + "/mnt").c_str(), "none", MS_BIND,
                nullptr) != 0) {
      return test::kNoMountNamespace;
    }
    const Answer escape = refused(Refusal::Escape, EXDEV);
    const std::vector<Row> rows = {
        alike("through a bind mount", "mnt/secret", Open::Read, escape),
        alike("the bind mount itself", "mnt", Open::Dir, escape),
        alike("beside the mount", "d/e/g", Open::Read, reaches("d/e/g")),
    };
    int wrong = 0;
    for (Strategy s : test::strategies()) {
      auto root = Root::pin(w.root, s);
      if (!root.ok()) return 3;
      for (const Row& row : rows) {
        std::string problem = check_row(w, *root.value(), row, row.refusing);
        if (problem.empty() && !row.refusing.ok) {
          auto got = resolve(*root.value(), row.path, row.how);
          if (!got.error().mount) problem = "refused, but not as a mount point";
        }
        if (!problem.empty()) {
          report(s, Links::Refuse, row, problem);
          ++wrong;
        }
      }
    }
    // A root that follows links within: a link to the mount point is no way through it.
    ::symlink("mnt", (w.root + "/tomnt").c_str());
    const Row through = alike("a link to the bind mount", "tomnt/secret", Open::Read, escape);
    for (Strategy s : test::strategies()) {
      auto root = Root::pin(w.root, s, Links::Within);
      if (!root.ok()) return 3;
      std::string problem = check_row(w, *root.value(), through, through.within);
      if (problem.empty() && !resolve(*root.value(), through.path, through.how).error().mount)
        problem = "refused, but not as a mount point";
      if (!problem.empty()) {
        report(s, Links::Within, through, problem);
        ++wrong;
      }
    }
    return wrong == 0 ? 0 : 1;
  });
  CHECK(verdict == 0 || verdict == test::kNoMountNamespace);
}
