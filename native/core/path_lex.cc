#include "path_lex.h"

namespace pinnedfs {

std::string LexedPath::joined(std::size_t count) const {
  std::string out;
  for (std::size_t i = 0; i < count && i < parts.size(); ++i) {
    if (i) out.push_back('/');
    out += parts[i];
  }
  return out;
}

Result<LexedPath> lex_path(std::string_view relative) {
  std::string shown(relative.substr(0, 256));
  if (relative.find('\0') != std::string_view::npos) {
    return bad_argument("path contains a NUL byte", shown);
  }
  if (!relative.empty() && relative.front() == '/') {
    return bad_argument("path must be relative to the root, not absolute", shown);
  }
  if (relative.size() >= kPathMax) {
    Error e = bad_argument("path is longer than PATH_MAX", shown);
    e.err = ENAMETOOLONG;
    return e;
  }
  LexedPath out;
  std::size_t depth = 0;
  std::size_t start = 0;
  while (start <= relative.size()) {
    std::size_t end = relative.find('/', start);
    if (end == std::string_view::npos) end = relative.size();
    std::string_view part = relative.substr(start, end - start);
    if (part.size() > kNameMax) {
      Error e = bad_argument("path component is longer than NAME_MAX", shown);
      e.err = ENAMETOOLONG;
      return e;
    }
    if (part == "..") {
      if (depth == 0) {
        return refusal(Refusal::Escape, "lex", std::string(relative),
                       "path escapes the root: '..' climbs above it", EXDEV);
      }
      --depth;
      out.has_dotdot = true;
      out.parts.emplace_back(part);
    } else if (!part.empty() && part != ".") {
      ++depth;
      out.parts.emplace_back(part);
    }
    start = end + 1;
  }
  // "a/" and "a/." both ask for a directory; "a/.." ends on a directory by construction.
  if (!relative.empty()) {
    std::string_view tail = relative;
    while (tail.size() >= 2 && tail.substr(tail.size() - 2) == "/.") tail.remove_suffix(2);
    if (tail.size() && tail.back() == '/') out.must_be_dir = true;
    if (tail == ".") out.must_be_dir = true;
  }
  if (!out.parts.empty() && out.parts.back() == "..") out.must_be_dir = true;
  return out;
}

}  // namespace pinnedfs
