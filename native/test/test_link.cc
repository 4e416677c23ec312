#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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
