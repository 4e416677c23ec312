// The lexer every request path passes through before any syscall (docs/platform.md, "The lexer").
//
// Input is a path relative to the pinned root, in bytes. The lexer refuses what can never be valid
// (NUL, a leading '/', a component over NAME_MAX, a whole over PATH_MAX), drops "." and empty
// components, and remembers a trailing '/' as "must be a directory" instead of passing the slash to
// a syscall (a trailing slash makes O_NOFOLLOW follow: Go CVE-2026-39822).
//
// ".." is kept, not folded: the contract resolves it physically, by returning to the handle the
// walk came from, so "link/../x" still meets "link" and is refused. The lexer only refuses a ".."
// that would climb above the root, since no handle exists there to return to.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "error.h"

namespace pinnedfs {

constexpr std::size_t kNameMax = 255;
#if defined(__APPLE__)
constexpr std::size_t kPathMax = 1024;
#else
constexpr std::size_t kPathMax = 4096;
#endif

struct LexedPath {
  std::vector<std::string> parts;  // components, ".." kept where it does not climb above the root
  bool must_be_dir = false;        // the request ended in '/'
  bool has_dotdot = false;         // any ".." in parts: resolution must go component by component

  bool is_root() const { return parts.empty(); }
  const std::string& leaf() const { return parts.back(); }
  // The components joined with '/' (meaningful for openat2 when !has_dotdot).
  std::string joined(std::size_t count) const;
  std::string joined() const { return joined(parts.size()); }
};

Result<LexedPath> lex_path(std::string_view relative);

}  // namespace pinnedfs
