// Strict base64 (RFC 4648 standard alphabet, padded): writeFile's wire encoding, decoded on the
// worker so a large payload costs the JavaScript thread only its copy out of the string.
#pragma once
#include <string>

namespace pinnedfs {

// Replaces `text` with the bytes it encodes and answers true, or answers false when it is not
// strict base64: a length that is a multiple of 4, only `A-Za-z0-9+/`, and at most two '=' at the
// very end. Any other byte (NUL, whitespace, '-', '_', anything >= 0x80) is refused, never skipped.
// The unused low bits of a padded last group are ignored, as Node's Buffer.from(s, "base64")
// ignores them, so every payload the extension accepted before means the same bytes now.
//
// Decodes in place (the output is never longer than the input): no second buffer. On false the
// content of `text` is unspecified.
bool decode_base64_in_place(std::string* text);

}  // namespace pinnedfs
