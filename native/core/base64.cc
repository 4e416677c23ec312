#include "base64.h"

#include <array>
#include <cstdint>

namespace pinnedfs {

namespace {

constexpr std::uint8_t kInvalid = 0x80;

// Each byte's 6-bit value, or kInvalid (a bit no valid value has, so one OR over a group tells).
constexpr std::array<std::uint8_t, 256> make_table() {
  std::array<std::uint8_t, 256> t{};
  for (auto& v : t) v = kInvalid;
  const char* alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::uint8_t i = 0; i < 64; ++i) t[static_cast<unsigned char>(alphabet[i])] = i;
  return t;
}

constexpr std::array<std::uint8_t, 256> kTable = make_table();

inline std::uint8_t value_of(char c) {
  return kTable[static_cast<unsigned char>(c)];
}

}  // namespace

bool decode_base64_in_place(std::string* text) {
  std::string& s = *text;
  const std::size_t n = s.size();
  if (n % 4 != 0) return false;
  if (n == 0) return true;
  std::size_t padding = 0;
  if (s[n - 1] == '=') padding = s[n - 2] == '=' ? 2 : 1;
  char* p = &s[0];
  // Every group but the last: four symbols, three bytes. Output position 3k never passes input
  // position 4k, and a group's four symbols are read before its three bytes are stored.
  const std::size_t full = n / 4 - 1;
  std::size_t out = 0;
  for (std::size_t g = 0; g < full; ++g) {
    const char* in = p + 4 * g;
    std::uint8_t a = value_of(in[0]), b = value_of(in[1]), c = value_of(in[2]), d = value_of(in[3]);
    if ((a | b | c | d) & kInvalid) return false;
    std::uint32_t v =
        (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) | (std::uint32_t{c} << 6) | d;
    p[out] = static_cast<char>(v >> 16);
    p[out + 1] = static_cast<char>(v >> 8);
    p[out + 2] = static_cast<char>(v);
    out += 3;
  }
  // The last group: its '=' (a third one, or one anywhere before, is a symbol the table refuses).
  const char* in = p + 4 * full;
  std::uint8_t a = value_of(in[0]), b = value_of(in[1]);
  std::uint8_t c = padding == 2 ? 0 : value_of(in[2]);
  std::uint8_t d = padding >= 1 ? 0 : value_of(in[3]);
  if ((a | b | c | d) & kInvalid) return false;
  std::uint32_t v =
      (std::uint32_t{a} << 18) | (std::uint32_t{b} << 12) | (std::uint32_t{c} << 6) | d;
  p[out++] = static_cast<char>(v >> 16);
  if (padding < 2) p[out++] = static_cast<char>(v >> 8);
  if (padding < 1) p[out++] = static_cast<char>(v);
  s.resize(out);
  return true;
}

}  // namespace pinnedfs
