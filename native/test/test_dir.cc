#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <set>

#include "core/execute.h"
#include "core/fd.h"
#include "harness.h"
#include "ops/dir_list.h"
#include "platform/platform.h"

using namespace pinnedfs;

#if defined(__linux__)
namespace {
// One linux_dirent64 record as the kernel lays it out: d_ino, d_off, d_reclen, d_type, name, NUL,
// padded to 8 bytes. `reclen_override` lets a test forge a broken length.
void put_record(std::string& buf, const std::string& name, unsigned char type,
                int reclen_override = -1) {
  std::size_t len = 19 + name.size() + 1;
  len = (len + 7) & ~std::size_t{7};
  std::string rec(len, '\0');
  std::uint16_t reclen =
      static_cast<std::uint16_t>(reclen_override >= 0 ? reclen_override : static_cast<int>(len));
  std::memcpy(&rec[16], &reclen, sizeof reclen);
  rec[18] = static_cast<char>(type);
  std::memcpy(&rec[19], name.data(), name.size());
  buf += rec;
}
}  // namespace

TEST(dirents_parse_names_and_kinds_skipping_dots) {
  std::string buf;
  put_record(buf, ".", DT_DIR);
  put_record(buf, "..", DT_DIR);
  put_record(buf, "dir", DT_DIR);
  put_record(buf, "link", DT_LNK);
  put_record(buf, "fifo", DT_FIFO);
  put_record(buf, "what", DT_UNKNOWN);
  put_record(buf, "...", DT_REG);  // only "." and ".." are special
  put_record(buf, std::string(255, 'n'), DT_REG);
  std::vector<DirEntry> out;
  CHECK(parse_dirents64(buf.data(), buf.size(), out));
  CHECK(out.size() == 6);
  CHECK(out[0].name == "dir" && out[0].kind == EntryKind::Directory);
  CHECK(out[1].name == "link" && out[1].kind == EntryKind::Link);
  CHECK(out[2].name == "fifo" && out[2].kind == EntryKind::Other);
  CHECK(out[3].name == "what" && out[3].kind == EntryKind::Unknown);
  CHECK(out[4].name == "...");
  CHECK(out[5].name.size() == 255);
}

TEST(dirents_keep_bytes_that_are_not_utf8) {
  std::string buf;
  put_record(buf, std::string("f\xff\xfeo"), DT_REG);
  std::vector<DirEntry> out;
  CHECK(parse_dirents64(buf.data(), buf.size(), out));
  CHECK(out.size() == 1 && out[0].name == std::string("f\xff\xfeo"));
}

TEST(dirents_refuse_malformed_records_instead_of_looping) {
  std::vector<DirEntry> out;
  std::string zero;
  put_record(zero, "a", DT_REG, 0);
  CHECK(!parse_dirents64(zero.data(), zero.size(), out));
  std::string overrun;
  put_record(overrun, "a", DT_REG, 4096);
  CHECK(!parse_dirents64(overrun.data(), overrun.size(), out));
  std::string truncated;
  put_record(truncated, "abc", DT_REG);
  CHECK(!parse_dirents64(truncated.data(), 10, out));
  std::string no_nul(24, 'x');
  std::uint16_t reclen = 24;
  std::memcpy(&no_nul[16], &reclen, sizeof reclen);
  CHECK(!parse_dirents64(no_nul.data(), no_nul.size(), out));
  CHECK(parse_dirents64(nullptr, 0, out));
  CHECK(out.empty());
}
#endif

TEST(dir_lister_reads_every_entry_and_leaves_the_descriptor_open) {
  std::string dir = test::scratch_dir();
  std::set<std::string> want;
  for (int i = 0; i < 700; ++i) {
    std::string name = "entry-" + std::to_string(i) + std::string(60, 'z');
    test::write_file(dir + "/" + name, "");
    want.insert(name);
  }
  CHECK(::mkdir((dir + "/sub").c_str(), 0700) == 0);
  CHECK(::symlink("sub", (dir + "/ln").c_str()) == 0);
  want.insert("sub");
  want.insert("ln");
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  CHECK(fd.valid());
  DirLister lister;
  std::vector<DirEntry> out;
  CHECK(lister.list(fd.get(), "", out).ok());
  std::set<std::string> got;
  for (const DirEntry& e : out) got.insert(e.name);
  CHECK(got == want);
  CHECK(out.size() == want.size());
  for (const DirEntry& e : out) {
    if (e.name == "sub") CHECK(e.kind == EntryKind::Directory || e.kind == EntryKind::Unknown);
    if (e.name == "ln") CHECK(e.kind == EntryKind::Link || e.kind == EntryKind::Unknown);
  }
  struct stat st;
  CHECK(::fstatat(fd.get(), "sub", &st, AT_SYMLINK_NOFOLLOW) == 0);
}

TEST(dir_lister_reports_a_descriptor_it_cannot_list) {
  std::string dir = test::scratch_dir();
#if defined(O_PATH)
  Fd fd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  CHECK(fd.valid());
  DirLister lister;
  std::vector<DirEntry> out;
  auto r = lister.list(fd.get(), "x", out);
  CHECK(!r.ok());
  CHECK(r.error().err == EBADF);
#endif
}

namespace {
std::set<std::string> listing(const Root& root, const std::string& path, bool recursive, int* err) {
  Request r;
  r.op = Op::ReadDirectory;
  r.path = path;
  r.recursive = recursive;
  auto v = execute(root, r, false);
  *err = v.ok() ? 0 : v.error().err;
  std::set<std::string> out;
  if (v.ok()) {
    for (auto& n : std::get<Names>(v.value()).names) out.insert(n);
  }
  return out;
}
}  // namespace

TEST(read_directory_recursive_descends_by_handle_and_never_into_links) {
  std::string dir = test::scratch_dir();
  std::string outside = test::scratch_dir();
  test::write_file(outside + "/secret", "s");
  CHECK(::mkdir((dir + "/a").c_str(), 0700) == 0);
  CHECK(::mkdir((dir + "/a/b").c_str(), 0700) == 0);
  test::write_file(dir + "/a/b/f", "x");
  CHECK(::symlink(outside.c_str(), (dir + "/a/out").c_str()) == 0);
  for (Strategy s : test::strategies()) {
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    int err = 0;
    CHECK((listing(root, "", true, &err) == std::set<std::string>{"a", "a/b", "a/b/f", "a/out"}));
    CHECK(err == 0);
    CHECK((listing(root, "a", false, &err) == std::set<std::string>{"b", "out"}));
    listing(root, "a/out", true, &err);
    CHECK(err == ELOOP);
    listing(root, "a/b/f", false, &err);
    CHECK(err == ENOTDIR);
  }
}

TEST(read_directory_depth_limit_is_an_error_not_a_crash) {
  std::string dir = test::scratch_dir();
  std::string p = dir;
  for (int i = 0; i < 300; ++i) {
    p += "/d";
    CHECK(::mkdir(p.c_str(), 0700) == 0);
  }
  for (Strategy s : test::strategies()) {
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    Request r;
    r.op = Op::ReadDirectory;
    r.recursive = true;
    auto v = execute(*pinned.value(), r, false);
    CHECK(!v.ok());
    CHECK(v.error().refusal == Refusal::TooLarge);
    CHECK(v.error().description.find("256") != std::string::npos);
  }
}
