// The worker's base64 decoder (core/base64.h): what it accepts must be exactly what the extension's
// JavaScript check accepted (length a multiple of 4, A-Za-z0-9+/, at most two '=' at the very end),
// and what it decodes must be what Node's Buffer.from(s, "base64") gives for those strings.
#include <sys/stat.h>

#include <string>
#include <utility>
#include <vector>

#include "core/base64.h"
#include "core/execute.h"
#include "harness.h"

using namespace pinnedfs;

namespace {

// Answers whether `text` decoded, and into what.
bool decode(std::string text, std::string* out) {
  bool ok = decode_base64_in_place(&text);
  *out = text;
  return ok;
}

bool decodes_to(const std::string& text, const std::string& bytes) {
  std::string out;
  return decode(text, &out) && out == bytes;
}

bool refused(const std::string& text) {
  std::string out;
  return !decode(text, &out);
}

// A reference encoder, written the plain way, for round trips.
std::string encode(const std::string& bytes) {
  static const char* a = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  std::size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8) |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int s : {18, 12, 6, 0}) out += a[(v >> s) & 63];
  }
  std::size_t left = bytes.size() - i;
  if (left == 1) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += "==";
  } else if (left == 2) {
    unsigned v = (static_cast<unsigned char>(bytes[i]) << 16) |
                 (static_cast<unsigned char>(bytes[i + 1]) << 8);
    out += a[(v >> 18) & 63];
    out += a[(v >> 12) & 63];
    out += a[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

Request base64_write(const std::string& path, std::string text, OpenFlag flag = OpenFlag::W) {
  Request r = test::request(Op::WriteFile, path);
  r.flag = flag;
  r.base64 = true;
  r.data = std::move(text);
  return r;
}

bool exists(const std::string& path) {
  struct stat st;
  return ::lstat(path.c_str(), &st) == 0;
}

bool is_invalid_base64(const Result<Value>& r) {
  return !r.ok() && r.error().refusal == Refusal::BadArgument &&
         r.error().description == "data is not valid base64";
}

}  // namespace

TEST(base64_rfc4648_vectors) {
  CHECK(decodes_to("", ""));
  CHECK(decodes_to("Zg==", "f"));
  CHECK(decodes_to("Zm8=", "fo"));
  CHECK(decodes_to("Zm9v", "foo"));
  CHECK(decodes_to("Zm9vYg==", "foob"));
  CHECK(decodes_to("Zm9vYmE=", "fooba"));
  CHECK(decodes_to("Zm9vYmFy", "foobar"));
}

TEST(base64_every_byte_value_in_every_position) {
  std::string all;
  for (int i = 0; i < 256; ++i) all += static_cast<char>(i);
  // Three shifts put each byte value in each of a group's three positions, and the lengths 256,
  // 257 and 258 end the text with two, one and no '='.
  for (std::size_t shift = 0; shift < 3; ++shift) {
    std::string bytes = std::string(shift, 'x') + all;
    std::string text = encode(bytes);
    CHECK(text.size() % 4 == 0);
    CHECK(decodes_to(text, bytes));
  }
  // Every symbol of the alphabet in every position of a group.
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  for (std::size_t i = 0; i < alphabet.size(); ++i) {
    std::string text = alphabet.substr(i) + alphabet.substr(0, i);
    std::string out;
    CHECK(decode(text, &out));
    CHECK(out.size() == 48);
    CHECK(encode(out) == text);
  }
}

TEST(base64_padding_and_size) {
  CHECK(decodes_to("AA==", std::string(1, '\0')));
  CHECK(decodes_to("AAA=", std::string(2, '\0')));
  CHECK(decodes_to("AAAA", std::string(3, '\0')));
  CHECK(decodes_to("////", "\xff\xff\xff"));
  // A large input, decoded in place across many groups.
  std::string big;
  for (int i = 0; i < 300000; ++i) big += static_cast<char>((i * 7919) & 0xff);
  CHECK(decodes_to(encode(big), big));
}

TEST(base64_ignores_the_unused_bits_of_a_padded_last_group_as_node_does) {
  // Buffer.from(s, "base64") in Node 20, 22 and 24 for each of these strings.
  CHECK(decodes_to("AB==", std::string(1, '\0')));
  CHECK(decodes_to("AP==", std::string(1, '\0')));
  CHECK(decodes_to("//==", "\xff"));
  CHECK(decodes_to("/w==", "\xff"));
  CHECK(decodes_to("AAB=", std::string(2, '\0')));
  CHECK(decodes_to("AAD=", std::string(2, '\0')));
  CHECK(decodes_to("Zm9=", "fo"));
  CHECK(decodes_to("Zh==", "f"));
  CHECK(decodes_to("Zm9vYmF=", "fooba"));
  CHECK(decodes_to("QUJD+/8=", "ABC\xfb\xff"));
}

TEST(base64_refuses_a_length_not_a_multiple_of_four) {
  for (const char* s : {"A", "AA", "AAA", "AAAAA", "Zm9vYg=", "Zm9vYg", "Zm8", "Zm9vYmFy="}) {
    CHECK(refused(s));
  }
}

TEST(base64_refuses_every_byte_outside_the_alphabet_in_every_position) {
  const std::string alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  int refusals = 0;
  for (int c = 0; c < 256; ++c) {
    if (alphabet.find(static_cast<char>(c)) != std::string::npos) continue;
    // Positions in a full group, in the last group, and (for '=' only valid at the end) in between.
    for (std::size_t at = 0; at < 12; ++at) {
      std::string text = "Zm9vYmFyZm9v";
      text[at] = static_cast<char>(c);
      if (c == '=' && (at == 11 || at == 10)) continue;  // padding where padding may be
      CHECK(refused(text));
      ++refusals;
    }
  }
  CHECK(refusals == (256 - 64) * 12 - 2);
}

TEST(base64_refuses_misplaced_or_excess_padding) {
  for (const char* s :
       {"=AAA", "A=AA", "AA=A", "A===", "====", "Zg==Zg==", "Zm8=Zm9v", "Zm9v===="}) {
    CHECK(refused(s));
  }
  CHECK(refused(std::string("Zm9v") + "A=A="));
  CHECK(refused(std::string("Zm9v") + "AAA=" + "AAAA"));
}

TEST(base64_refuses_nul_whitespace_url_safe_and_non_ascii) {
  CHECK(refused(std::string("Zm9v\0AAA", 8)));
  CHECK(refused(std::string("\0\0\0\0", 4)));
  CHECK(refused("Zm9v\nAAA"));
  CHECK(refused("Zm9v AAA"));
  CHECK(refused("Zm9v-_AA"));
  // U+0141 as UTF-8 (what the addon copies a JavaScript "\u0141" as): bytes >= 0x80.
  CHECK(refused("\xc5\x81\xc5\x81"));
  CHECK(
      refused("\xef\xbf\xbd"
              "A"));
  CHECK(refused("AAA\x80"));
  CHECK(refused("AA\xff="));
}

// The write path decodes before anything is opened: a valid payload is written as its bytes, an
// invalid one is BadArgument with no file created and an existing one not truncated ("w"), whether
// the request is handed over (the addon's execute), kept (tests) or a batch member.
TEST(base64_write_decodes_on_the_worker_before_anything_is_opened) {
  for (Strategy strategy : test::strategies()) {
    std::string dir = test::scratch_dir();
    test::write_file(dir + "/kept.txt", "keep me");
    auto pinned = Root::pin(dir, strategy);
    CHECK(pinned.ok());
    const Root& root = *pinned.value();

    CHECK(execute(root, base64_write("moved.bin", "Zm9vYmE="), false).ok());
    CHECK(test::read_file(dir + "/moved.bin") == "fooba");
    Request kept = base64_write("kept.bin", "AAD/");
    CHECK(execute(root, kept, false).ok());
    CHECK(test::read_file(dir + "/kept.bin") == std::string("\0\0\xff", 3));
    CHECK(kept.data == "AAD/" && kept.base64);  // the caller's request is not consumed
    CHECK(execute(root, base64_write("empty.bin", ""), false).ok());
    CHECK(exists(dir + "/empty.bin") && test::read_file(dir + "/empty.bin").empty());
    CHECK(execute(root, base64_write("kept.txt", "Kw==", OpenFlag::A), false).ok());
    CHECK(test::read_file(dir + "/kept.txt") == "keep me+");

    for (const char* bad : {"Zm9v\xc5\x81"
                            "AA",
                            "Zm9", "A===", "Zm=v", "Zm9v\nAAA"}) {
      CHECK(is_invalid_base64(execute(root, base64_write("kept.txt", bad), false)));
      CHECK(is_invalid_base64(execute(root, base64_write("fresh.bin", bad, OpenFlag::WX), false)));
      Request held = base64_write("kept.txt", bad);
      CHECK(is_invalid_base64(execute(root, held, true)));
    }
    CHECK(test::read_file(dir + "/kept.txt") == "keep me+");
    CHECK(!exists(dir + "/fresh.bin"));

    std::vector<Request> batch = {base64_write("b1.bin", "YQ=="), base64_write("kept.txt", "%%%%")};
    auto answers = execute_batch(root, batch, BatchLimits{}, false);
    CHECK(answers.size() == 2);
    CHECK(answers[0].ok() && test::read_file(dir + "/b1.bin") == "a");
    CHECK(is_invalid_base64(answers[1]));
    CHECK(test::read_file(dir + "/kept.txt") == "keep me+");

    // Without the flag the text is the bytes, as before.
    Request plain = base64_write("plain.txt", "Zm9v");
    plain.base64 = false;
    CHECK(execute(root, std::move(plain), false).ok());
    CHECK(test::read_file(dir + "/plain.txt") == "Zm9v");
  }
}
