// Pattern compilation and segment stepping for glob (see glob_match.h for the semantics).
#include "glob_match.h"

#include <algorithm>

namespace pinnedfs::glob {

namespace {

using Chars = std::u32string;

// ---------------------------------------------------------------------------------------------
// UTF-8

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

// One code point from `in` at `*i`, advancing it; 0xFFFFFFFF for an invalid sequence (one byte).
char32_t next_code_point(std::string_view in, std::size_t* i) {
  const auto* s = reinterpret_cast<const unsigned char*>(in.data());
  std::size_t n = in.size(), at = *i;
  unsigned char b0 = s[at];
  if (b0 < 0x80) {
    *i = at + 1;
    return b0;
  }
  int len;
  char32_t cp, min;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2, cp = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3, cp = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4, cp = b0 & 0x07, min = 0x10000;
  } else {
    *i = at + 1;
    return 0xFFFFFFFF;
  }
  if (at + len > n) {
    *i = at + 1;
    return 0xFFFFFFFF;
  }
  for (int k = 1; k < len; ++k) {
    unsigned char b = s[at + k];
    if ((b & 0xC0) != 0x80) {
      *i = at + 1;
      return 0xFFFFFFFF;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) {
    *i = at + 1;
    return 0xFFFFFFFF;
  }
  *i = at + len;
  return cp;
}

Chars to_chars(std::string_view in) {
  std::vector<char32_t> v;
  decode_utf8(in, v);
  return Chars(v.begin(), v.end());
}

std::string to_utf8(const char32_t* begin, const char32_t* end) {
  std::string out;
  out.reserve(static_cast<std::size_t>(end - begin));
  for (const char32_t* p = begin; p != end; ++p) append_utf8(out, *p);
  return out;
}

std::size_t utf16_length(const Chars& s) {
  std::size_t n = 0;
  for (char32_t c : s) n += c >= 0x10000 ? 2 : 1;
  return n;
}

// ---------------------------------------------------------------------------------------------
// Character classes

struct Range {
  char32_t from, to;
};

// POSIX classes, as inclusive ASCII ranges.
bool posix_class(const Chars& name, std::vector<Range>* out) {
  struct Entry {
    const char* name;
    std::initializer_list<Range> ranges;
  };
  static const Entry table[] = {
      {"alnum", {{'0', '9'}, {'A', 'Z'}, {'a', 'z'}}},
      {"alpha", {{'A', 'Z'}, {'a', 'z'}}},
      {"blank", {{0x09, 0x09}, {0x20, 0x20}}},
      {"cntrl", {{0x00, 0x1F}, {0x7F, 0x7F}}},
      {"digit", {{'0', '9'}}},
      {"graph", {{0x21, 0x7E}}},
      {"lower", {{'a', 'z'}}},
      {"print", {{0x20, 0x7E}}},
      {"punct", {{0x21, 0x2F}, {0x3A, 0x40}, {0x5B, 0x60}, {0x7B, 0x7E}}},
      {"space", {{0x09, 0x0D}, {0x20, 0x20}}},
      {"upper", {{'A', 'Z'}}},
      {"word", {{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}}},
      {"xdigit", {{'0', '9'}, {'A', 'F'}, {'a', 'f'}}},
  };
  for (const Entry& e : table) {
    std::size_t len = std::char_traits<char>::length(e.name);
    if (name.size() != len) continue;
    bool same = true;
    for (std::size_t i = 0; i < len && same; ++i)
      same = name[i] == static_cast<char32_t>(e.name[i]);
    if (!same) continue;
    out->insert(out->end(), e.ranges.begin(), e.ranges.end());
    return true;
  }
  return false;
}

// A "[:name:]" at `open` (which holds '['). The name is at most six characters, so the closing
// ":]" is looked for within reach; the first one found decides, known name or not.
bool parse_posix(const Chars& s, std::size_t open, std::vector<Range>* ranges, std::size_t* end) {
  for (std::size_t i = open + 2; i < s.size() && i <= open + 8; ++i) {
    if (s[i] == ':' && i + 1 < s.size() && s[i + 1] == ']') {
      if (!posix_class(s.substr(open + 2, i - open - 2), ranges)) return false;
      *end = i + 1;
      return true;
    }
  }
  return false;
}

struct Class {
  std::vector<Range> ranges;
  bool negated = false;
  std::size_t end = 0;  // index of the closing ']'
};

// A bracket class opening at `open`; false when it never closes within the segment (an
// unescaped '/' ends the search), in which case the '[' is an ordinary character.
bool parse_class(const Chars& s, std::size_t open, Class* out) {
  out->ranges.clear();
  std::size_t i = open + 1;
  out->negated = i < s.size() && (s[i] == '!' || s[i] == '^');
  if (out->negated) ++i;
  for (bool first = true; i < s.size(); ++i, first = false) {
    char32_t c = s[i];
    if (c == '/') return false;
    if (c == ']' && !first) {
      out->end = i;
      return true;
    }
    if (c == '[' && i + 1 < s.size() && s[i + 1] == ':') {
      std::size_t end = 0;
      if (parse_posix(s, i, &out->ranges, &end)) {
        i = end;
        continue;
      }
    }
    if (c == '\\' && i + 1 < s.size()) c = s[++i];
    if (i + 2 < s.size() && s[i + 1] == '-' && s[i + 2] != ']') {
      std::size_t last = i + 2;
      if (s[last] == '/') return false;
      if (s[last] == '\\' && last + 1 < s.size()) ++last;
      out->ranges.push_back({c, s[last]});
      i = last;
      continue;
    }
    out->ranges.push_back({c, c});
  }
  return false;
}

// ---------------------------------------------------------------------------------------------
// Brace expansion

struct Group {
  std::vector<std::size_t> commas;
  std::size_t close = 0;
};

// Brace groups that expand (at least one comma), indexed by their opening position. Escaped
// characters and bracket classes are skipped so their braces and commas stay literal.
std::vector<int> find_groups(const Chars& s, std::vector<Group>* groups) {
  std::vector<int> at(s.size(), -1);
  struct Open {
    std::size_t pos;
    std::vector<std::size_t> commas;
  };
  std::vector<Open> stack;
  bool classes = true;
  Class scratch;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t c = s[i];
    if (c == '\\') {
      ++i;
    } else if (c == '/') {
      classes = true;
    } else if (c == '[' && classes) {
      if (parse_class(s, i, &scratch)) {
        i = scratch.end;
      } else {
        classes = false;  // one unclosed class makes every later '[' in the segment literal
      }
    } else if (c == '{') {
      stack.push_back({i, {}});
    } else if (c == ',') {
      if (!stack.empty()) stack.back().commas.push_back(i);
    } else if (c == '}') {
      if (stack.empty()) continue;
      Open g = std::move(stack.back());
      stack.pop_back();
      if (g.commas.empty()) continue;
      at[g.pos] = static_cast<int>(groups->size());
      groups->push_back({std::move(g.commas), i});
    }
  }
  return at;
}

struct Sequence;
struct Part {
  Chars text;  // when alternatives is empty
  std::vector<Sequence> alternatives;
};
struct Sequence {
  std::vector<Part> parts;
};

bool parse_sequence(const Chars& s, std::size_t begin, std::size_t end, const std::vector<int>& at,
                    const std::vector<Group>& groups, int depth, Sequence* out) {
  if (depth > kMaxBraceDepth) return false;
  Chars text;
  for (std::size_t i = begin; i < end; ++i) {
    if (at[i] < 0) {
      if (s[i] == '\\' && i + 1 < end) text.push_back(s[i++]);
      text.push_back(s[i]);
      continue;
    }
    const Group& g = groups[static_cast<std::size_t>(at[i])];
    Part part;
    std::size_t from = i + 1;
    for (std::size_t k = 0; k <= g.commas.size(); ++k) {
      std::size_t to = k < g.commas.size() ? g.commas[k] : g.close;
      Sequence alt;
      if (!parse_sequence(s, from, to, at, groups, depth + 1, &alt)) return false;
      part.alternatives.push_back(std::move(alt));
      from = to + 1;
    }
    if (!text.empty()) out->parts.push_back(Part{std::move(text), {}});
    text.clear();
    out->parts.push_back(std::move(part));
    i = g.close;
  }
  if (!text.empty()) out->parts.push_back(Part{std::move(text), {}});
  return true;
}

// Number of expansions, saturating just above the limit.
std::size_t count_expansions(const Sequence& seq) {
  std::size_t count = 1;
  for (const Part& p : seq.parts) {
    if (p.alternatives.empty()) continue;
    std::size_t sum = 0;
    for (const Sequence& alt : p.alternatives) {
      sum += count_expansions(alt);
      if (sum > kMaxExpansions) sum = kMaxExpansions + 1;
    }
    count *= sum;
    if (count > kMaxExpansions) return kMaxExpansions + 1;
  }
  return count;
}

std::vector<Chars> expand_sequence(const Sequence& seq) {
  std::vector<Chars> out{Chars()};
  for (const Part& p : seq.parts) {
    if (p.alternatives.empty()) {
      for (Chars& prefix : out) prefix += p.text;
      continue;
    }
    std::vector<Chars> alts;
    for (const Sequence& a : p.alternatives) {
      std::vector<Chars> e = expand_sequence(a);
      alts.insert(alts.end(), std::make_move_iterator(e.begin()), std::make_move_iterator(e.end()));
    }
    std::vector<Chars> next;
    next.reserve(out.size() * alts.size());
    for (const Chars& prefix : out) {
      for (const Chars& alt : alts) next.push_back(prefix + alt);
    }
    out = std::move(next);
  }
  return out;
}

std::vector<Chars> expand_braces(const Chars& pattern) {
  std::vector<Group> groups;
  std::vector<int> at = find_groups(pattern, &groups);
  if (groups.empty()) return {pattern};
  Sequence seq;
  if (!parse_sequence(pattern, 0, pattern.size(), at, groups, 0, &seq)) return {pattern};
  std::size_t count = count_expansions(seq);
  if (count > kMaxExpansions || count * utf16_length(pattern) > kMaxExpandedLength)
    return {pattern};
  return expand_sequence(seq);
}

// ---------------------------------------------------------------------------------------------
// Segments

bool is_drive(const Chars& seg) {
  return seg.size() == 2 && seg[1] == ':' &&
         ((seg[0] >= 'A' && seg[0] <= 'Z') || (seg[0] >= 'a' && seg[0] <= 'z'));
}

bool is_unc(const Chars& s) {
  return s.size() > 2 && s[0] == '/' && s[1] == '/' && s[2] != '/';
}

std::vector<Chars> split_segments(const Chars& s) {
  std::vector<Chars> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '/') {
      out.push_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  out.push_back(start <= s.size() ? s.substr(start) : Chars());
  return out;
}

const Chars kDot = U".";
const Chars kDotDot = U"..";
const Chars kGlobstar = U"**";

// Drops empty and "." segments (a lone "." pattern stays "."), keeps an absolute root as its
// first segment ("" or "C:/"), and reports whether a trailing '/' or '/.' asked for a directory.
template <class Seg, class RootOf>
std::vector<Seg> normalize(const std::vector<Seg>& raw, bool* directory, bool* absolute,
                           bool (*drive)(const Seg&), RootOf root_of, const Seg& dot_seg) {
  std::vector<Seg> out;
  std::size_t i = 0;
  *absolute = false;
  if (raw.size() > 1 && (raw[0].empty() || drive(raw[0]))) {
    out.push_back(root_of(raw[0]));
    *absolute = true;
    i = 1;
  }
  *directory = false;
  bool saw_dot = false;
  for (; i < raw.size(); ++i) {
    const Seg& seg = raw[i];
    bool dot = seg.size() == 1 && seg[0] == '.';
    saw_dot = saw_dot || dot;
    if (seg.empty() || dot) {
      *directory = i + 1 == raw.size() && !out.empty();
    } else {
      out.push_back(seg);
      *directory = false;
    }
  }
  if (out.empty() && saw_dot) out.push_back(dot_seg);
  return out;
}

Node compile_segment(const Chars& s, Compiled& c) {
  Node node;
  std::size_t first_token = c.tokens.size();
  Chars literal;
  bool magic = false;
  bool classes = true;
  Class cls;
  for (std::size_t i = 0; i < s.size(); ++i) {
    char32_t ch = s[i];
    if (ch == '\\' && i + 1 < s.size()) {
      ch = s[++i];
      literal.push_back(ch);
      c.tokens.push_back(Token{TokenKind::Char, false, ch, 0, 0});
    } else if (ch == '*') {
      magic = true;
      if (c.tokens.size() == first_token || c.tokens.back().kind != TokenKind::Star) {
        c.tokens.push_back(Token{TokenKind::Star, false, 0, 0, 0});
      }
    } else if (ch == '?') {
      magic = true;
      c.tokens.push_back(Token{TokenKind::Any, false, 0, 0, 0});
    } else if (ch == '[' && classes && parse_class(s, i, &cls)) {
      magic = true;
      Token t{TokenKind::Class, cls.negated, 0, static_cast<std::uint32_t>(c.ranges.size()), 0};
      for (const Range& r : cls.ranges) {
        c.ranges.push_back(r.from);
        c.ranges.push_back(r.to);
      }
      t.end = static_cast<std::uint32_t>(c.ranges.size());
      c.tokens.push_back(t);
      i = cls.end;
    } else {
      if (ch == '[') classes = false;
      literal.push_back(ch);
      c.tokens.push_back(Token{TokenKind::Char, false, ch, 0, 0});
    }
  }
  if (!magic) {
    c.tokens.resize(first_token);
    node.kind = NodeKind::Literal;
    node.begin = static_cast<std::uint32_t>(c.text.size());
    c.text += to_utf8(literal.data(), literal.data() + literal.size());
    node.end = static_cast<std::uint32_t>(c.text.size());
    return node;
  }
  node.kind = NodeKind::Wildcard;
  node.begin = static_cast<std::uint32_t>(first_token);
  node.end = static_cast<std::uint32_t>(c.tokens.size());
  const Token& t0 = c.tokens[first_token];
  node.leading_dot = t0.kind == TokenKind::Char && t0.value == '.';
  return node;
}

// Appends one expanded pattern; returns its first node, or -1 when it can match no path.
long compile_pattern(const Chars& p, Compiled& c) {
  if (p.empty() || is_unc(p)) return -1;
  std::vector<Chars> raw = split_segments(p);
  auto star = std::find(raw.begin(), raw.end(), kGlobstar);
  if (star != raw.end() &&
      std::any_of(star + 1, raw.end(), [](const Chars& s) { return s == kDot || s == kDotDot; })) {
    return -1;
  }
  bool directory = false, absolute = false;
  std::vector<Chars> segs = normalize<Chars>(
      raw, &directory, &absolute, &is_drive,
      [](const Chars& r) { return r.empty() ? Chars() : r + U"/"; }, kDot);
  if (segs.empty()) return -1;
  long start = static_cast<long>(c.nodes.size());
  int depth = 0;
  for (std::size_t i = 0; i < segs.size(); ++i) {
    if (segs[i] == kGlobstar) {
      if (c.nodes.size() == static_cast<std::size_t>(start) ||
          c.nodes.back().kind != NodeKind::Globstar) {
        Node g;
        g.kind = NodeKind::Globstar;
        c.nodes.push_back(g);
      }
      continue;
    }
    if (absolute && i == 0) {
      // The root of an absolute pattern: a literal only a root segment ("" or "C:/") matches.
      Node root;
      root.kind = NodeKind::Literal;
      root.begin = static_cast<std::uint32_t>(c.text.size());
      c.text += to_utf8(segs[0].data(), segs[0].data() + segs[0].size());
      root.end = static_cast<std::uint32_t>(c.text.size());
      c.nodes.push_back(root);
      continue;
    }
    Node n = compile_segment(segs[i], c);
    c.nodes.push_back(n);
    if (n.kind == NodeKind::Literal) {
      std::string_view lit = c.literal(n);
      depth += lit == "." ? 0 : lit == ".." ? -1 : 1;
    } else {
      depth += 1;
    }
    c.min_depth = std::min(c.min_depth, depth);
  }
  Node end;
  end.kind = NodeKind::End;
  end.directory_only = directory;
  c.nodes.push_back(end);
  if (absolute) c.absolute = true;
  return start;
}

void close_over_globstar(const Compiled& c, std::vector<State>& states) {
  // `**` may match zero segments, so the node after it is reachable too. Patterns never hold
  // two `**` nodes in a row, so one pass over the growing list suffices.
  for (std::size_t i = 0; i < states.size(); ++i) {
    State s = states[i];
    if (c.nodes[s].kind == NodeKind::Globstar &&
        std::find(states.begin(), states.end(), s + 1) == states.end()) {
      states.push_back(s + 1);
    }
  }
}

bool is_root_name(std::string_view name) {
  if (name.empty()) return true;
  return name.size() == 3 && name[1] == ':' && name[2] == '/' &&
         ((name[0] >= 'A' && name[0] <= 'Z') || (name[0] >= 'a' && name[0] <= 'z'));
}

bool token_matches(const Compiled& c, const Token& t, char32_t ch) {
  switch (t.kind) {
    case TokenKind::Char:
      return t.value == ch;
    case TokenKind::Any:
      return true;
    case TokenKind::Star:
      return false;
    case TokenKind::Class: {
      bool found = false;
      for (std::uint32_t i = t.begin; i < t.end && !found; i += 2) {
        found = ch >= c.ranges[i] && ch <= c.ranges[i + 1];
      }
      return found != t.negated;
    }
  }
  return false;
}

bool is_sv_drive(const std::string_view& s) {
  return s.size() == 2 && s[1] == ':' &&
         ((s[0] >= 'A' && s[0] <= 'Z') || (s[0] >= 'a' && s[0] <= 'z'));
}

}  // namespace

// -----------------------------------------------------------------------------------------------

void decode_utf8(std::string_view in, std::vector<char32_t>& out) {
  out.clear();
  std::size_t i = 0;
  while (i < in.size()) {
    char32_t cp = next_code_point(in, &i);
    out.push_back(cp == 0xFFFFFFFF ? 0xFFFD : cp);
  }
}

bool valid_utf8(std::string_view in) {
  std::size_t i = 0;
  while (i < in.size()) {
    if (static_cast<unsigned char>(in[i]) < 0x80) {
      ++i;
      continue;
    }
    if (next_code_point(in, &i) == 0xFFFFFFFF) return false;
  }
  return true;
}

bool utf16_less(std::string_view a, std::string_view b) {
  // UTF-8 byte order is code point order. UTF-16 differs only where a code point in U+E000..U+FFFF
  // (lead byte 0xEE or 0xEF) meets a supplementary one (lead 0xF0..0xF4, a surrogate pair in
  // UTF-16, which sorts below U+E000). Those lead bytes are where the strings first differ.
  std::size_t n = std::min(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    auto x = static_cast<unsigned char>(a[i]);
    auto y = static_cast<unsigned char>(b[i]);
    if (x == y) continue;
    bool x_high = x == 0xEE || x == 0xEF, y_high = y == 0xEE || y == 0xEF;
    if (x_high && y >= 0xF0) return false;
    if (y_high && x >= 0xF0) return true;
    return x < y;
  }
  return a.size() < b.size();
}

Compiled compile(const std::vector<std::string>& patterns, bool dot) {
  Compiled c;
  c.dot = dot;
  for (const std::string& pattern : patterns) {
    for (const Chars& expanded : expand_braces(to_chars(pattern))) {
      long start = compile_pattern(expanded, c);
      if (start >= 0 && std::find(c.initial.begin(), c.initial.end(), static_cast<State>(start)) ==
                            c.initial.end()) {
        c.initial.push_back(static_cast<State>(start));
      }
    }
  }
  close_over_globstar(c, c.initial);
  return c;
}

Stepper::Stepper(const Compiled& compiled) : c_(compiled), mark_(compiled.nodes.size(), 0) {}

void Stepper::add(std::vector<State>& out, State s) {
  if (mark_[s] == gen_) return;
  mark_[s] = gen_;
  out.push_back(s);
}

bool Stepper::match_wildcard(const Node& node, std::string_view name) {
  if (name == "." || name == "..") return false;
  if (name[0] == '.' && !c_.dot && !node.leading_dot) return false;
  if (!decoded_) {
    decode_utf8(name, chars_);
    decoded_ = true;
  }
  // Classic single-backtrack wildcard matching: only the most recent '*' is retried, which is
  // exact when '*' is the only variable-length token, and bounded by tokens x characters.
  const Token* tokens = c_.tokens.data() + node.begin;
  std::size_t nt = node.end - node.begin, t = 0, i = 0, resume = 0;
  std::size_t star = static_cast<std::size_t>(-1);
  while (i < chars_.size()) {
    if (t < nt && tokens[t].kind == TokenKind::Star) {
      star = t++;
      resume = i;
    } else if (t < nt && token_matches(c_, tokens[t], chars_[i])) {
      ++t;
      ++i;
    } else if (star != static_cast<std::size_t>(-1)) {
      t = star + 1;
      i = ++resume;
    } else {
      return false;
    }
  }
  while (t < nt && tokens[t].kind == TokenKind::Star) ++t;
  return t == nt;
}

void Stepper::step(const State* states, std::size_t count, std::string_view name,
                   std::vector<State>& next) {
  next.clear();
  if (++gen_ == 0) {  // stamps wrapped: start again from a clean slate
    std::fill(mark_.begin(), mark_.end(), 0);
    gen_ = 1;
  }
  decoded_ = false;
  bool root = is_root_name(name);
  for (std::size_t k = 0; k < count; ++k) {
    State s = states[k];
    const Node& node = c_.nodes[s];
    switch (node.kind) {
      case NodeKind::Globstar:
        if (!root && name != "." && name != ".." && (c_.dot || name[0] != '.')) add(next, s);
        break;
      case NodeKind::Literal:
        if (c_.literal(node) == name) add(next, s + 1);
        break;
      case NodeKind::Wildcard:
        if (!root && match_wildcard(node, name)) add(next, s + 1);
        break;
      case NodeKind::End:
        break;
    }
  }
  for (std::size_t i = 0; i < next.size(); ++i) {
    State s = next[i];
    if (c_.nodes[s].kind == NodeKind::Globstar) add(next, s + 1);
  }
}

bool accepts(const Compiled& c, const State* states, std::size_t count, bool is_directory) {
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = c.nodes[states[i]];
    if (n.kind == NodeKind::End && (is_directory || !n.directory_only)) return true;
  }
  return false;
}

bool can_descend(const Compiled& c, const State* states, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    if (c.nodes[states[i]].kind != NodeKind::End) return true;
  }
  return false;
}

bool needs_directory(const Compiled& c, const State* states, std::size_t count) {
  for (std::size_t i = 0; i < count; ++i) {
    const Node& n = c.nodes[states[i]];
    if (n.kind == NodeKind::End && n.directory_only) return true;
  }
  return false;
}

bool any_directory_only(const Compiled& c) {
  for (const Node& n : c.nodes) {
    if (n.kind == NodeKind::End && n.directory_only) return true;
  }
  return false;
}

bool match(const Compiled& compiled, std::string_view path) {
  if (path.empty()) return false;
  if (path.size() > 2 && path[0] == '/' && path[1] == '/' && path[2] != '/') return false;
  std::vector<std::string_view> raw;
  std::size_t start = 0;
  for (;;) {
    std::size_t slash = path.find('/', start);
    if (slash == std::string_view::npos) {
      raw.push_back(path.substr(start));
      break;
    }
    raw.push_back(path.substr(start, slash - start));
    start = slash + 1;
  }
  bool directory = false, absolute = false;
  // A drive root "C:" keeps the '/' after it, which the path itself holds: "C:/".
  std::vector<std::string_view> segs = normalize<std::string_view>(
      raw, &directory, &absolute, &is_sv_drive,
      [&](const std::string_view& r) { return r.empty() ? r : path.substr(0, 3); },
      std::string_view("."));
  std::vector<State> states = compiled.initial, next;
  Stepper stepper(compiled);
  for (std::string_view seg : segs) {
    stepper.step(states.data(), states.size(), seg, next);
    if (next.empty()) return false;
    states.swap(next);
  }
  return accepts(compiled, states.data(), states.size(), directory);
}

}  // namespace pinnedfs::glob
