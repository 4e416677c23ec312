// The pieces the fileops operations share: the proven parent every name-acting op starts from, and
// the lexical check that link text stays beneath the root.
#include "fileops.h"

namespace pinnedfs::ops {

Result<Parent> held_parent(const Root& root, const LexedPath& path, const char* syscall,
                           const std::string& shown) {
  auto parent = open_parent(root, path);
  if (!parent.ok()) return parent.take_error();
  auto still = parent.value().dir.beneath(root, syscall, shown);
  if (!still.ok()) return still.take_error();
  return parent;
}

Status link_text_within(const std::vector<std::string>& dir, const std::string& text,
                        const char* syscall, const std::string& shown) {
  if (text.empty()) return bad_argument("a symbolic link's text cannot be empty", shown);
  if (text.find('\0') != std::string::npos) {
    return bad_argument("a symbolic link's text cannot contain a NUL byte", shown);
  }
  if (text.size() >= kPathMax) {
    Error e = sys_error(ENAMETOOLONG, syscall, shown);
    e.description = "link text longer than the platform's PATH_MAX";
    return e;
  }
  if (text[0] == '/') {
    return refusal(Refusal::Escape, syscall, shown,
                   "link text '" + text + "' is absolute: it would name something outside the root",
                   EPERM);
  }
  // Lexically, from the link's own directory: ".." pops a component, and popping past the root
  // is the escape. A link on the way inside the text is never followed by pinnedfs, so what this
  // check reads is what pinnedfs would ever make of the text.
  std::size_t depth = dir.size();
  std::size_t start = 0;
  while (start <= text.size()) {
    std::size_t end = text.find('/', start);
    if (end == std::string::npos) end = text.size();
    std::string_view part(text.data() + start, end - start);
    if (part == "..") {
      if (depth == 0) {
        return refusal(Refusal::Escape, syscall, shown,
                       "link text '" + text + "' climbs above the root from the link's directory",
                       EPERM);
      }
      --depth;
    } else if (!part.empty() && part != ".") {
      ++depth;
    }
    start = end + 1;
  }
  return ok_status();
}

}  // namespace pinnedfs::ops
