// libFuzzer target: the worker's base64 decoder (core/base64.h) against a reference written the
// plain way: the rule the extension's JavaScript check had (length a multiple of 4, A-Za-z0-9+/,
// at most two '=' and only at the very end) and a bit-by-bit decode that drops the leftover bits
// as Node's Buffer.from does. They must agree on every input, on acceptance and on the bytes.
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/base64.h"
#include "scratch.h"

using pinnedfs::fuzz::must;

namespace {

int symbol(char c) {
  if (c >= 'A' && c <= 'Z') return c - 'A';
  if (c >= 'a' && c <= 'z') return c - 'a' + 26;
  if (c >= '0' && c <= '9') return c - '0' + 52;
  if (c == '+') return 62;
  if (c == '/') return 63;
  return -1;
}

bool reference(const std::string& s, std::string* out) {
  if (s.size() % 4 != 0) return false;
  std::size_t end = s.size();
  while (end > 0 && s.size() - end < 2 && s[end - 1] == '=') --end;
  unsigned bits = 0;
  int count = 0;
  for (std::size_t i = 0; i < end; ++i) {
    int v = symbol(s[i]);
    if (v < 0) return false;
    bits = (bits << 6) | static_cast<unsigned>(v);
    count += 6;
    if (count >= 8) {
      count -= 8;
      out->push_back(static_cast<char>((bits >> count) & 0xff));
    }
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  std::string expected;
  bool accepts = reference(input, &expected);
  std::string decoded = input;
  bool decodes = pinnedfs::decode_base64_in_place(&decoded);
  must(decodes == accepts,
       decodes ? "decoder accepted what the rule refuses" : "decoder refused what the rule accepts",
       input);
  if (accepts) must(decoded == expected, "decoded bytes differ from the reference", input);
  return 0;
}
