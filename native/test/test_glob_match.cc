// The pure glob matcher against Effect 4.1's own compile/match (a vector table), plus the limits
// and helpers the walk relies on.
#include <string>
#include <vector>

#include "harness.h"
#include "ops/glob_match.h"

using namespace pinnedfs;

namespace {

// Generated once from Effect 4.1 internal/glob.ts `compile` + `match` (see the report of the glob
// branch); a row is a pattern, its `dot`, and one digit per path of kPaths: 1 = matches.
const char* const kPaths[] = {
    "x",
    "a",
    "b",
    "c",
    ".hidden",
    "a/b",
    "a/x",
    "b/y.js",
    "a/y.js",
    "c/q.js",
    "src",
    "src/a.ts",
    "src/x/y.ts",
    "x.ts",
    ".x.ts",
    "a/.hidden",
    "a/b/",
    "a/b/c/b",
    "*",
    "[x]",
    "x[",
    "]",
    "-",
    "\303\251",
    "\303\2741",
    "\303\244",
    "\303\266",
    "\346\234\254",
    "x\346\234\254",
    "a\360\237\230\200",
    "p\356\200\200",
    "p\360\237\230\200",
    "/abs/y",
    "/",
    "C:/x/y",
    ".",
    "..",
    "a/..",
    "x/",
    "a/c",
    "abc",
    "aXbYc",
    "a/b/",
    "1Z",
    "a,b}",
    "{a,b",
    "{a}",
    "a,b",
    "[{]a",
    "{a",
    "[",
    "b}",
    ".x",
    "x\\",
    "a\\/b",
    "a/b/c/x",
    "x/y/",
};
struct Vector {
  const char* pattern;
  bool dot;
  const char* expected;
};
const Vector kVectors[] = {
    {"*", false, "111100000010010000111111111111110000001011011111111101000"},
    {"*", true, "111110000010011000111111111111110000001011011111111111000"},
    {"**", false, "111101111111110011111111111111110000001111111111111101111"},
    {"**", true, "111111111111111111111111111111110000001111111111111111111"},
    {"**/*.ts", false, "000000000001110000000000000000000000000000000000000000000"},
    {"src/**", false, "000000000011100000000000000000000000000000000000000000000"},
    {"{a,b}/*.js", false, "000000011000000000000000000000000000000000000000000000000"},
    {"{a,{b,c}}/**", false, "011101111100000011000000000000000000000100100000000000010"},
    {"[a-c]*", false, "011100000000000000000000000001000000000011001001000100000"},
    {"[!x]*", false, "011100000010000000110111111101110000000011011111111100000"},
    {"[^x]*", false, "011100000010000000110111111101110000000011011111111100000"},
    {"[[:alpha:]]*", false, "111100000010010000001000000011110000001011001001000101000"},
    {"[[:digit:][:upper:]]\?", false, "000000000000000000000000000000000000000000010000000000000"},
    {"[[:bogus:]]*", false, "000000000000000000000000000000000000000000000000000000000"},
    {".*", false, "000010000000001000000000000000000000000000000000000010000"},
    {"**/.hidden", false, "000010000000000100000000000000000000000000000000000000000"},
    {"*/", false, "000000000000000000000000000000000000001000000000000000000"},
    {"**/", false, "000000000000000010000000000000000000001000100000000000001"},
    {"a/**/b", false, "000001000000000011000000000000000000000000100000000000000"},
    {"a/**", false, "010001101000000011000000000000000000000100100000000000010"},
    {"\\*", false, "000000000000000000100000000000000000000000000000000000000"},
    {"\\[x]", false, "000000000000000000010000000000000000000000000000000000000"},
    {"[*", false, "000000000000000000010000000000000000000000000000101000000"},
    {"x[", false, "000000000000000000001000000000000000000000000000000000000"},
    {"[]]", false, "000000000000000000000100000000000000000000000000000000000"},
    {"[!]]", false, "111100000000000000100011011100000000001000000000001000000"},
    {"[a-]", false, "010000000000000000000010000000000000000000000000000000000"},
    {"[z-a]", false, "000000000000000000000000000000000000000000000000000000000"},
    {"\?", false, "111100000000000000100111011100000000001000000000001000000"},
    {"\?\?", false, "000000000000000000001000100011110000000000010000010101000"},
    {"*.{ts,js}", false, "000000000000010000000000000000000000000000000000000000000"},
    {"{,a/}x", false, "100000100000000000000000000000000000001000000000000000000"},
    {"{a,b", false, "000000000000000000000000000000000000000000000100000000000"},
    {"a,b}", false, "000000000000000000000000000000000000000000001000000000000"},
    {"{a}", false, "000000000000000000000000000000000000000000000010000000000"},
    {"{a\\,b,c}", false, "000100000000000000000000000000000000000000000001000000000"},
    {"[{]a,b}", false, "000000000000000000000000000000000000000000000000000000000"},
    {"\303\274*", false, "000000000000000000000000100000000000000000000000000000000"},
    {"\?\346\234\254", false, "000000000000000000000000000010000000000000000000000000000"},
    {"[\303\244-\303\266]", false, "000000000000000000000001011000000000000000000000000000000"},
    {"*\360\237\230\200", false, "000000000000000000000000000001010000000000000000000000000"},
    {"p\?", false, "000000000000000000000000000000110000000000000000000000000"},
    {"/abs/*", false, "000000000000000000000000000000001000000000000000000000000"},
    {"/**", false, "000000000000000000000000000000001100000000000000000000000"},
    {"C:/x/*", false, "000000000000000000000000000000000010000000000000000000000"},
    {"//unc/x", false, "000000000000000000000000000000000000000000000000000000000"},
    {".", false, "000000000000000000000000000000000001000000000000000000000"},
    {"./a", false, "010000000000000000000000000000000000000000000000000000000"},
    {"a/./b", false, "000001000000000010000000000000000000000000100000000000000"},
    {"a/../b", false, "000000000000000000000000000000000000000000000000000000000"},
    {"**/../x", false, "000000000000000000000000000000000000000000000000000000000"},
    {"a/b/", false, "000000000000000010000000000000000000000000100000000000000"},
    {"a/b/.", false, "000000000000000010000000000000000000000000100000000000000"},
    {"", false, "000000000000000000000000000000000000000000000000000000000"},
    {"a//b", false, "000001000000000010000000000000000000000000100000000000000"},
    {"**/**/x", false, "100000100000000000000000000000000000001000000000000000010"},
    {"*a*b*c", false, "000000000000000000000000000000000000000011000000000000000"},
    {"a*", false, "010000000000000000000000000001000000000011001001000000000"},
    {"[.]*", false, "000000000000000000000000000000000000000000000000000000000"},
    {"\\.x", false, "000000000000000000000000000000000000000000000000000010000"},
    {"*\\", false, "000000000000000000000000000000000000000000000000000001000"},
    {"a\\/b", false, "000000000000000000000000000000000000000000000000000000000"},
    {"**/*", false, "111101111111110011111111111111110000001111111111111101111"},
    {"x/**/", false, "000000000000000000000000000000000000001000000000000000001"},
};

bool matches(const std::vector<std::string>& patterns, const std::string& path, bool dot = false) {
  return glob::match(glob::compile(patterns, dot), path);
}

std::string repeat(const std::string& s, std::size_t n) {
  std::string out;
  for (std::size_t i = 0; i < n; ++i) out += s;
  return out;
}

}  // namespace

TEST(glob_match_agrees_with_effect_vectors) {
  constexpr std::size_t kPathCount = sizeof(kPaths) / sizeof(kPaths[0]);
  int failures = 0;
  for (const Vector& v : kVectors) {
    std::string expected(v.expected);
    CHECK(expected.size() == kPathCount);
    glob::Compiled c = glob::compile({v.pattern}, v.dot);
    for (std::size_t i = 0; i < kPathCount; ++i) {
      bool got = glob::match(c, kPaths[i]);
      if (got != (expected[i] == '1')) {
        std::fprintf(stderr, "  pattern '%s' dot=%d path '%s': got %d\n", v.pattern, v.dot,
                     kPaths[i], got);
        ++failures;
      }
    }
  }
  CHECK(failures == 0);
}

TEST(glob_match_brace_expansion_count_limit) {
  // 2^13 = 8192 expansions stay under the limit of 10000; 2^14 do not, and the pattern is then
  // kept whole, braces and all, as a literal.
  std::string under = repeat("{a,b}", 13), over = repeat("{a,b}", 14);
  CHECK(matches({under}, repeat("a", 13)));
  CHECK(matches({under}, "ab" + repeat("a", 11)));
  CHECK(!matches({over}, repeat("a", 14)));
  CHECK(matches({over}, over));
}

TEST(glob_match_brace_expansion_depth_limit) {
  std::string deep64 = repeat("{x,", 64) + "y" + repeat("}", 64);
  std::string deep65 = repeat("{x,", 65) + "y" + repeat("}", 65);
  CHECK(matches({deep64}, "y"));
  CHECK(matches({deep64}, "x"));
  CHECK(!matches({deep65}, "y"));
  CHECK(matches({deep65}, deep65));
}

TEST(glob_match_brace_expansion_length_counts_utf16_units) {
  // 2 expansions x (5 + 2^20 + 1 code points) fits 2^22 counted in code points, but not in UTF-16
  // units (each emoji is two), which is how Effect counts: the pattern stays unexpanded.
  std::string emoji = "\xF0\x9F\x98\x80";
  std::string tail = repeat(emoji, (std::size_t{1} << 20) + 1);
  CHECK(!matches({"{a,b}" + tail}, "a" + tail));
  std::string short_tail = repeat(emoji, 1000);
  CHECK(matches({"{a,b}" + short_tail}, "a" + short_tail));
}

TEST(glob_match_nested_and_escaped_braces) {
  CHECK(matches({"{a,{b,c}}/x"}, "c/x"));
  CHECK(matches({"{a\\,b,c}"}, "a,b"));  // the escape survives expansion, then unescapes
  CHECK(!matches({"{a\\,b,c}"}, "a"));
  CHECK(matches({"[{]a,b}"}, "{a,b}"));  // a class hides its brace from expansion
  CHECK(matches({"{,x}y"}, "y"));
}

TEST(glob_match_wildcards_decode_code_points) {
  CHECK(matches({"?"}, "\xC3\xA9"));                    // é is one character, two bytes
  CHECK(matches({"[\xC3\xA4-\xC3\xB6]"}, "\xC3\xB6"));  // ä-ö
  CHECK(!matches({"[a-z]"}, "\xC3\xA9"));
  CHECK(matches({"??"}, "x\xE6\x9C\xAC"));
  CHECK(matches({"*\xF0\x9F\x98\x80"}, "a\xF0\x9F\x98\x80"));
  CHECK(!matches({"??"}, "\xF0\x9F\x98\x80"));  // one code point, though two UTF-16 units
}

TEST(glob_match_pathological_star_is_bounded) {
  std::string name = repeat("a", 4000);
  CHECK(!matches({repeat("*a", 40) + "*b"}, name));
  CHECK(matches({repeat("*a", 40) + "*"}, name));
}

TEST(glob_match_depth_and_absolute_flags) {
  CHECK(glob::compile({"a/*/b"}, false).min_depth == 0);
  CHECK(glob::compile({"../x"}, false).min_depth == -1);
  CHECK(glob::compile({"*/../../x"}, false).min_depth == -1);
  CHECK(glob::compile({"a/{../..,b}/c"}, false).min_depth == -1);
  CHECK(glob::compile({"\\.\\./x"}, false).min_depth == -1);  // an escaped ".." is still ".."
  CHECK(glob::compile({"**/\\.\\."}, false).min_depth == -1);
  CHECK(glob::compile({"**/../x"}, false).matches_nothing());
  CHECK(glob::compile({"/etc/*"}, false).absolute);
  CHECK(glob::compile({"{x,/etc}"}, false).absolute);
  CHECK(!glob::compile({"etc/*"}, false).absolute);
  CHECK(glob::compile({"", "//host/share"}, false).matches_nothing());
}

TEST(glob_match_stepper_and_predicates) {
  glob::Compiled c = glob::compile({"src/**/*.ts", "docs/"}, false);
  glob::Stepper step(c);
  std::vector<glob::State> a, b;
  step.step(c.initial.data(), c.initial.size(), "src", a);
  CHECK(!a.empty());
  CHECK(glob::can_descend(c, a.data(), a.size()));
  CHECK(!glob::accepts(c, a.data(), a.size(), true));
  step.step(a.data(), a.size(), "x.ts", b);
  CHECK(glob::accepts(c, b.data(), b.size(), false));
  step.step(a.data(), a.size(), ".x.ts", b);  // ** and * skip dot names
  CHECK(b.empty());
  step.step(c.initial.data(), c.initial.size(), "docs", a);
  CHECK(glob::needs_directory(c, a.data(), a.size()));
  CHECK(!glob::accepts(c, a.data(), a.size(), false));
  CHECK(glob::accepts(c, a.data(), a.size(), true));
  CHECK(!glob::can_descend(c, a.data(), a.size()));
  CHECK(glob::any_directory_only(c));
}

TEST(glob_match_utf16_order) {
  CHECK(glob::utf16_less("a", "b"));
  CHECK(glob::utf16_less("a", "ab"));
  CHECK(!glob::utf16_less("ab", "ab"));
  CHECK(glob::utf16_less("Z", "a"));
  // U+E000 sorts after U+1F600 in UTF-16 (surrogates are below U+E000), before it in code points.
  CHECK(glob::utf16_less("p\xF0\x9F\x98\x80", "p\xEE\x80\x80"));
  CHECK(!glob::utf16_less("p\xEE\x80\x80", "p\xF0\x9F\x98\x80"));
  CHECK(glob::utf16_less("\xE6\x9C\xAC", "\xF0\x9F\x98\x80"));  // U+672C below the surrogates
}

TEST(glob_match_utf8_validation) {
  CHECK(glob::valid_utf8("plain"));
  CHECK(glob::valid_utf8("\xC3\xA9\xF0\x9F\x98\x80"));
  CHECK(!glob::valid_utf8("\xFF"));
  CHECK(!glob::valid_utf8("\xC3"));
  CHECK(!glob::valid_utf8("\xC0\xAF"));          // overlong '/'
  CHECK(!glob::valid_utf8("\xED\xA0\x80"));      // a surrogate
  CHECK(!glob::valid_utf8("\xF4\x90\x80\x80"));  // above U+10FFFF
}

TEST(glob_match_survives_arbitrary_input) {
  // A bounded smoke run of what the fuzzer will do at length: any bytes, no crash, no hang.
  const char alphabet[] = "ab.*?[]!^-:{},\\/\xC3\xA9\xF0\x9F\x98\x80\xFF\x00";
  std::uint32_t seed = 12345;
  auto next = [&seed]() {
    seed = seed * 1103515245u + 12345u;
    return (seed >> 16) & 0x7FFF;
  };
  for (int round = 0; round < 3000; ++round) {
    std::string pattern, path;
    std::size_t plen = next() % 24, qlen = next() % 16;
    for (std::size_t i = 0; i < plen; ++i)
      pattern.push_back(alphabet[next() % (sizeof(alphabet) - 1)]);
    for (std::size_t i = 0; i < qlen; ++i)
      path.push_back(alphabet[next() % (sizeof(alphabet) - 1)]);
    glob::Compiled c = glob::compile({pattern, path}, (next() & 1) != 0);
    (void)glob::match(c, path);
    (void)glob::match(c, pattern);
    CHECK(c.min_depth <= 0);
  }
}

// The walk itself, here so the sanitizer build sees it: frames grow (and move) with depth, ".."
// reuses handles, excluded and denied paths are skipped.
#include <sys/stat.h>

#include <algorithm>

#include "core/root.h"
#include "ops/ops.h"

namespace {
std::vector<std::string> walk_glob(const Root& root, const std::string& pattern,
                                   const std::string& to = "",
                                   std::vector<std::string> exclude = {}, bool unnamed = false) {
  Request r = test::request(Op::Glob, "");
  r.unnamed = unnamed;
  r.to = to;
  r.pattern = pattern;
  r.exclude = std::move(exclude);
  auto v = ops::glob(root, r);
  if (!v.ok()) return {"error:" + std::string(errno_name(v.error().err))};
  return std::get<Names>(v.value()).names;
}
}  // namespace

TEST(glob_walk_deep_tree_and_dotdot) {
  std::string dir = test::scratch_dir();
  std::string p = dir;
  for (int i = 0; i < 40; ++i) {
    p += "/d";
    CHECK(::mkdir(p.c_str(), 0755) == 0);
    test::write_file(p + "/f" + std::to_string(i % 3) + ".ts", "");
  }
  CHECK(::mkdir((dir + "/e").c_str(), 0755) == 0);
  test::write_file(dir + "/e/x.js", "");
  for (Strategy s : test::strategies()) {
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    const Root& r = *root.value();
    std::vector<std::string> all = walk_glob(r, "**/*.ts");
    CHECK(all.size() == 40);
    CHECK(all.back() == "d/f0.ts");  // "d" sorts before "f0.ts": the subtree comes first
    CHECK(walk_glob(r, "**/*.ts", "", {"d/d/d"}).size() == 2);
    std::vector<std::string> up = walk_glob(r, "../../e/*.js", "d/d");
    CHECK(up.size() == 1 && up[0] == "../../e/x.js");
    CHECK(walk_glob(r, "../../../x", "d/d")[0] == "error:EXDEV");
    CHECK(walk_glob(r, "d/../e/*")[0] == "d/../e/x.js");
    CHECK(walk_glob(r, "*", "missing").empty());
  }
}

// Names that are not UTF-8 are skipped; with `unnamed` each one the pattern would report or enter
// is answered as a NUL, 'd' (a directory, not entered) or 'e', and its path's bytes in hex.
TEST(glob_walk_unnamed_entries) {
  std::string dir = test::scratch_dir();
  CHECK(::mkdir((dir + "/src").c_str(), 0755) == 0);
  test::write_file(dir + "/src/a.ts", "");
  test::write_file(dir + "/src/\xff\xfe.ts", "");
  test::write_file(dir + "/src/\xff.md", "");
  CHECK(::mkdir((dir + "/src/d\xff").c_str(), 0755) == 0);
  test::write_file(dir + "/src/d\xff/c.ts", "");
  for (Strategy s : test::strategies()) {
    auto root = Root::pin(dir, s);
    CHECK(root.ok());
    const Root& r = *root.value();
    CHECK(walk_glob(r, "src/**/*.ts") == std::vector<std::string>{"src/a.ts"});
    std::vector<std::string> all = walk_glob(r, "src/**/*.ts", "", {}, true);
    std::sort(all.begin(), all.end());
    std::vector<std::string> want = {std::string("\0d", 2) + "7372632f64ff",
                                     std::string("\0e", 2) + "7372632ffffe2e7473", "src/a.ts"};
    CHECK(all == want);
    // Excluded: neither answered nor entered.
    CHECK(walk_glob(r, "src/**/*.ts", "", {"src/d*"}, true).size() == 2);
  }
}
