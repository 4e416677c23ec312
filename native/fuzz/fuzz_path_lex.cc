// libFuzzer target: the path lexer on arbitrary bytes. Besides "no crash, no UB" it checks what the
// rest of the core relies on: an accepted path has no NUL, no empty, "." or slash-bearing part, no
// part over NAME_MAX, never climbs above the root, and joined() spells it back.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/path_lex.h"
#include "scratch.h"

using pinnedfs::fuzz::must;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string_view input(reinterpret_cast<const char*>(data), size);
  auto lexed = pinnedfs::lex_path(input);
  if (!lexed.ok()) {
    const auto& e = lexed.error();
    must(e.refusal == pinnedfs::Refusal::BadArgument || e.refusal == pinnedfs::Refusal::Escape,
         "lexer refused with an unexpected kind");
    must(e.path.size() <= input.size(), "lexer error path longer than its input");
    return 0;
  }
  const auto& p = lexed.value();
  must(input.find('\0') == std::string_view::npos, "accepted a NUL byte");
  must(input.empty() || input.front() != '/', "accepted an absolute path");
  must(input.size() < pinnedfs::kPathMax, "accepted a path over PATH_MAX");
  long depth = 0;
  bool dotdot = false;
  for (const auto& part : p.parts) {
    must(!part.empty() && part != "." && part.find('/') == std::string::npos, "bad component");
    must(part.size() <= pinnedfs::kNameMax, "component over NAME_MAX");
    if (part == "..") {
      dotdot = true;
      must(--depth >= 0, "'..' climbs above the root", std::string(input));
    } else {
      ++depth;
    }
  }
  must(dotdot == p.has_dotdot, "has_dotdot disagrees with the parts");
  // A path ending in '/' (or "/." or "..") must be a directory.
  if (!input.empty() && input.back() == '/' && !p.parts.empty())
    must(p.must_be_dir, "lost a trailing '/'");
  // joined() re-lexes to the same parts (the openat2 path is built from it).
  auto again = pinnedfs::lex_path(p.joined());
  must(again.ok() && again.value().parts == p.parts, "joined() does not round-trip");
  return 0;
}
