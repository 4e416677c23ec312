// The glob matcher, pure: patterns compiled into one array of segment nodes, and a step function
// that advances a set of states over one path segment. No system call is made here, so this file is
// unit-tested and fuzzed on its own; ops/glob.cc drives it over a directory tree.
//
// Semantics are Effect 4.1's `FileSystem.glob` patterns:
//  - '/'-separated segments; `**` alone in a segment matches zero or more segments; `*` any run of
//    characters, `?` one, `[...]` a class (ranges, `!`/`^` negation, POSIX `[:alpha:]` names),
//    `\` escapes the next character. Characters are Unicode code points (the UTF-8 is decoded).
//  - Braces `{a,b}` expand before anything else, nested; a pattern whose expansion would be too
//    large (kMaxExpansions, kMaxExpandedLength) or too deep (kMaxBraceDepth) is kept unexpanded.
//  - Wildcards and `**` skip names starting with '.' unless the segment itself starts with a
//    literal '.' or `dot` is set; they never match "." or "..".
//  - A trailing '/' (or '/.') makes the pattern match directories only; `dir/**` matches `dir`.
//  - `**` followed later by a "." or ".." segment makes the pattern match nothing.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pinnedfs::glob {

constexpr std::size_t kMaxExpansions = 10000;
// Effect measures the expanded size in UTF-16 code units (JavaScript string length); so do we.
constexpr std::size_t kMaxExpandedLength = std::size_t{1} << 22;
constexpr int kMaxBraceDepth = 64;

enum class NodeKind : std::uint8_t { Globstar, Literal, Wildcard, End };

struct Node {
  NodeKind kind = NodeKind::End;
  bool leading_dot =
      false;  // Wildcard: its first token is a literal '.', so it may match dot names
  bool directory_only = false;  // End: the pattern ended in '/'
  std::uint32_t begin = 0;      // Literal: byte range in Compiled::text; Wildcard: range in tokens
  std::uint32_t end = 0;
};

enum class TokenKind : std::uint8_t { Char, Any, Star, Class };

struct Token {
  TokenKind kind = TokenKind::Char;
  bool negated = false;     // Class
  std::uint32_t value = 0;  // Char: the code point
  std::uint32_t begin = 0;  // Class: range in Compiled::ranges, inclusive [from, to] pairs
  std::uint32_t end = 0;
};

using State = std::uint32_t;

// Every expanded pattern's nodes laid end to end: a state is an index into `nodes`.
struct Compiled {
  std::vector<Node> nodes;
  std::vector<Token> tokens;
  std::vector<std::uint32_t> ranges;
  std::string text;            // literal segments, UTF-8
  std::vector<State> initial;  // the first node of each pattern, closed over `**`
  bool dot = false;
  // Some pattern starts at a file-system root ("/x" or "C:/x"): the walker refuses those, the
  // TypeScript layer rewrites absolute patterns that lie inside the root.
  bool absolute = false;
  // The lowest level, relative to where matching starts, that ".." segments can climb to (<= 0),
  // counting `**` as zero segments. The walker uses it to refuse an escape before any system call.
  int min_depth = 0;

  bool matches_nothing() const { return initial.empty(); }
  std::string_view literal(const Node& n) const {
    return std::string_view(text).substr(n.begin, n.end - n.begin);
  }
};

// Compiles every pattern (with its brace expansions) into one matcher.
Compiled compile(const std::vector<std::string>& patterns, bool dot);

// Whether `path` ('/'-separated, a trailing '/' meaning "is a directory") matches.
bool match(const Compiled& compiled, std::string_view path);

// Advances state sets one segment at a time. Holds scratch space so a walk allocates nothing per
// entry once warmed up; one Stepper per thread and per Compiled.
class Stepper {
 public:
  explicit Stepper(const Compiled& compiled);
  // Replaces `next` with the states reached from `states` by the segment `name`, closed over `**`.
  void step(const State* states, std::size_t count, std::string_view name,
            std::vector<State>& next);

 private:
  bool match_wildcard(const Node& node, std::string_view name);
  void add(std::vector<State>& out, State s);

  const Compiled& c_;
  std::vector<std::uint32_t> mark_;  // generation stamps: mark_[s] == gen_ means s already added
  std::uint32_t gen_ = 0;
  std::vector<char32_t> chars_;  // the decoded name, for wildcard matching
  bool decoded_ = false;
};

bool accepts(const Compiled& c, const State* states, std::size_t count, bool is_directory);
// Some state still wants another segment: a directory here is worth reading.
bool can_descend(const Compiled& c, const State* states, std::size_t count);
// Some accepting state wants a directory: the entry's type decides.
bool needs_directory(const Compiled& c, const State* states, std::size_t count);
// Some pattern ends directory-only anywhere in `c`.
bool any_directory_only(const Compiled& c);

// Decodes UTF-8 to code points; each byte of an invalid sequence becomes U+FFFD.
void decode_utf8(std::string_view in, std::vector<char32_t>& out);
bool valid_utf8(std::string_view in);
// JavaScript's string order (UTF-16 code units) on UTF-8 strings, as Effect sorts directory
// entries.
bool utf16_less(std::string_view a, std::string_view b);

}  // namespace pinnedfs::glob
