#include "core/path_lex.h"
#include "harness.h"

using namespace pinnedfs;

TEST(lex_drops_dot_and_empty) {
  auto r = lex_path("a//./b/");
  CHECK(r.ok());
  CHECK(r.value().parts.size() == 2);
  CHECK(r.value().parts[0] == "a" && r.value().parts[1] == "b");
  CHECK(r.value().must_be_dir);
}

TEST(lex_root_forms) {
  for (const char* p : {"", ".", "./", "./."}) {
    auto r = lex_path(p);
    CHECK(r.ok());
    CHECK(r.value().is_root());
  }
}

TEST(lex_refuses_nul_absolute_and_long) {
  CHECK(!lex_path(std::string("a\0b", 3)).ok());
  CHECK(lex_path(std::string("a\0b", 3)).error().refusal == Refusal::BadArgument);
  CHECK(lex_path("/etc/passwd").error().refusal == Refusal::BadArgument);
  CHECK(lex_path(std::string(256, 'x')).error().err == ENAMETOOLONG);
  CHECK(lex_path(std::string(255, 'x')).ok());
  std::string deep;
  while (deep.size() < kPathMax) deep += "a/";
  CHECK(lex_path(deep).error().err == ENAMETOOLONG);
}

TEST(lex_keeps_dotdot_and_refuses_climbing_out) {
  auto r = lex_path("a/b/../c");
  CHECK(r.ok());
  CHECK(r.value().has_dotdot);
  CHECK(r.value().parts.size() == 4);
  CHECK(lex_path("..").error().refusal == Refusal::Escape);
  CHECK(lex_path("a/../../x").error().refusal == Refusal::Escape);
  CHECK(lex_path("a/./../..").error().refusal == Refusal::Escape);
  auto up = lex_path("a/..");
  CHECK(up.ok() && up.value().must_be_dir);
}
