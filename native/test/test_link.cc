#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <variant>

#include "core/execute.h"
#include "core/fd.h"
#include "harness.h"
#include "ops/link_text.h"

using namespace pinnedfs;

TEST(read_link_at_grows_until_the_text_fits) {
  std::string dir = test::scratch_dir();
  std::string text(3000, 'a');
  text += "/end";
  CHECK(::symlink(text.c_str(), (dir + "/ln").c_str()) == 0);
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  CHECK(fd.valid());
  for (std::size_t initial : {std::size_t{0}, std::size_t{1}, std::size_t{7}, text.size(),
                              text.size() + 1, std::size_t{4096}}) {
    auto r = ops::read_link_at(fd.get(), "ln", "ln", initial);
    CHECK(r.ok());
    CHECK(r.value() == text);
  }
}

TEST(read_link_at_reports_what_is_not_a_link) {
  std::string dir = test::scratch_dir();
  test::write_file(dir + "/file", "x");
  Fd fd(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  CHECK(fd.valid());
  auto file = ops::read_link_at(fd.get(), "file", "file");
  CHECK(!file.ok() && file.error().err == EINVAL);
  auto missing = ops::read_link_at(fd.get(), "missing", "missing");
  CHECK(!missing.ok() && missing.error().err == ENOENT);
  CHECK(missing.error().path == "missing");
}

#if defined(O_PATH)
TEST(read_link_at_reads_an_o_path_link_descriptor_by_empty_name) {
  std::string dir = test::scratch_dir();
  CHECK(::symlink("target text", (dir + "/ln").c_str()) == 0);
  test::write_file(dir + "/file", "x");
  Fd ln(::open((dir + "/ln").c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  CHECK(ln.valid());
  auto r = ops::read_link_at(ln.get(), "", "ln");
  CHECK(r.ok() && r.value() == "target text");
  // resolve's fast path relies on this: an empty name on anything but a link is ENOENT.
  Fd file(::open((dir + "/file").c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC));
  CHECK(file.valid());
  auto f = ops::read_link_at(file.get(), "", "file");
  CHECK(!f.ok() && (f.error().err == ENOENT || f.error().err == EINVAL));
}
#endif

namespace {
Result<Value> run(const Root& root, Op op, const std::string& path) {
  Request r;
  r.op = op;
  r.path = path;
  return execute(root, r, false);
}
}  // namespace

TEST(resolve_answers_the_first_link_or_the_whole_path_under_both_strategies) {
  std::string dir = test::scratch_dir();
  CHECK(::mkdir((dir + "/a").c_str(), 0700) == 0);
  CHECK(::mkdir((dir + "/a/b").c_str(), 0700) == 0);
  test::write_file(dir + "/a/b/f", "x");
  CHECK(::symlink("b", (dir + "/a/ln").c_str()) == 0);
  CHECK(::symlink("/etc/passwd", (dir + "/a/b/last").c_str()) == 0);
  for (Strategy s : test::strategies()) {
    auto pinned = Root::pin(dir, s);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();
    struct Case {
      const char* request;
      const char* path;
      bool has_target;
      const char* target;
    };
    for (const Case& c :
         {Case{"a/b/f", "a/b/f", false, ""}, Case{"a//b/./f", "a/b/f", false, ""},
          Case{"a/ln/f", "a/ln", true, "b"}, Case{"a/ln", "a/ln", true, "b"},
          Case{"a/ln/", "a/ln", true, "b"}, Case{"a/b/last", "a/b/last", true, "/etc/passwd"},
          Case{"a/nope/x", "a/nope/x", false, ""}, Case{"", "", false, ""}}) {
      auto v = run(root, Op::Resolve, c.request);
      CHECK(v.ok());
      const auto& r = std::get<Resolution>(v.value());
      CHECK(r.path == c.path);
      CHECK(r.has_target == c.has_target);
      CHECK(r.target == c.target);
    }
    auto file_on_way = run(root, Op::Resolve, "a/b/f/x");
    CHECK(!file_on_way.ok() && file_on_way.error().err == ENOTDIR);
    auto text = run(root, Op::ReadLink, "a/b/last");
    CHECK(text.ok() && std::get<Text>(text.value()).text == "/etc/passwd");
    auto root_link = run(root, Op::ReadLink, "");
    CHECK(!root_link.ok() && root_link.error().err == EINVAL);
    auto real = run(root, Op::RealPath, "a/./b/../b/f");
    CHECK(real.ok() && std::get<Text>(real.value()).text == "a/b/f");
    auto real_link = run(root, Op::RealPath, "a/ln");
    CHECK(!real_link.ok() && real_link.error().refusal == Refusal::Symlink);
  }
}
