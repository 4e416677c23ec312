// Turning fuzzer bytes into core Requests, two ways:
//  raw:     every field straight from the bytes (out-of-range ops, flags, modes, ids, arbitrary
//           path bytes): what validate() and the lexer must refuse without a crash;
//  grammar: paths and glob patterns built from the names in the scratch tree (links, "..", a
//           hard link, a FIFO), so sequences reach the interesting states quickly.
// And the checks every answer must pass.
#pragma once
#include <fuzzer/FuzzedDataProvider.h>

#include <memory>

#include <set>
#include <string>
#include <vector>

#include "core/execute.h"
#include "scratch.h"

namespace pinnedfs::fuzz {

inline std::string grammar_path(FuzzedDataProvider& in) {
  static const char* const kNames[] = {"a",  "b", "f", "ln",  "inln", "hl",     "fifo", "dir",
                                       "..", ".", "",  "new", "x",    "secret", "sub"};
  constexpr std::size_t kCount = sizeof kNames / sizeof kNames[0];
  if (in.ConsumeIntegralInRange<int>(0, 15) == 0) return in.ConsumeRandomLengthString(64);
  std::string out;
  int parts = in.ConsumeIntegralInRange<int>(0, 4);
  for (int i = 0; i < parts; ++i) {
    if (i) out.push_back('/');
    out += kNames[in.ConsumeIntegralInRange<std::size_t>(0, kCount - 1)];
  }
  if (in.ConsumeBool() && in.ConsumeBool()) out.push_back('/');
  return out;
}

inline std::string grammar_pattern(FuzzedDataProvider& in) {
  static const char* const kTokens[] = {"*",     "**",   "?", "a",  "b", "f",  "ln", "[ab]", "[!a]",
                                        "{a,b}", "{,x}", "/", "..", ".", "\\", "[",  "{",    "}"};
  constexpr std::size_t kCount = sizeof kTokens / sizeof kTokens[0];
  std::string out;
  int parts = in.ConsumeIntegralInRange<int>(0, 6);
  for (int i = 0; i < parts; ++i)
    out += kTokens[in.ConsumeIntegralInRange<std::size_t>(0, kCount - 1)];
  return out;
}

// Identity of whatever `rel` names now (lstat from the harness side), or a made-up one: rmdirs must
// cope with both.
inline Identity identity_guess(const World& w, const std::string& rel, FuzzedDataProvider& in) {
  struct stat st;
  if (in.ConsumeBool() && ::lstat((w.root + "/" + rel).c_str(), &st) == 0) {
    return Identity{static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)};
  }
  return Identity{in.ConsumeIntegral<std::uint64_t>(), in.ConsumeIntegral<std::uint64_t>()};
}

inline Request grammar_request(const World& w, FuzzedDataProvider& in) {
  Request r;
  r.op =
      static_cast<Op>(in.ConsumeIntegralInRange<unsigned>(0, static_cast<unsigned>(Op::Count) - 1));
  r.path = grammar_path(in);
  r.to = grammar_path(in);
  if (r.op == Op::Glob) {
    r.pattern = grammar_pattern(in);
    int n = in.ConsumeIntegralInRange<int>(0, 2);
    for (int i = 0; i < n; ++i) r.exclude.push_back(grammar_pattern(in));
  }
  r.recursive = in.ConsumeBool();
  r.force = in.ConsumeBool();
  r.atomic = in.ConsumeBool();
  r.dot = in.ConsumeBool();
  r.has_mode = in.ConsumeBool();
  r.mode = in.ConsumeIntegralInRange<std::uint32_t>(0, 07777);
  static const std::int64_t kIds[] = {-1, 0, 1000, 65534};
  r.uid = kIds[in.ConsumeIntegralInRange<int>(0, 3)];
  r.gid = kIds[in.ConsumeIntegralInRange<int>(0, 3)];
  r.flag = static_cast<OpenFlag>(
      in.ConsumeIntegralInRange<unsigned>(0, static_cast<unsigned>(OpenFlag::AXPlus)));
  r.data = in.ConsumeRandomLengthString(64);
  r.max_bytes = in.ConsumeBool() ? 0 : in.ConsumeIntegralInRange<std::uint64_t>(1, 64);
  if (r.op == Op::Mkdirs) {
    int n = in.ConsumeIntegralInRange<int>(0, 3);
    for (int i = 0; i < n; ++i)
      r.plan.push_back({grammar_path(in), in.ConsumeIntegralInRange<std::uint32_t>(0, 07777)});
    // The program's test hook: something changes between planning and creating.
    n = in.ConsumeIntegralInRange<int>(0, 2);
    for (int i = 0; i < n; ++i) {
      HookStep step;
      step.kind = static_cast<HookStep::Kind>(in.ConsumeIntegralInRange<int>(0, 3));
      step.path = grammar_path(in);
      step.to = grammar_path(in);
      r.after_plan.push_back(std::move(step));
    }
  }
  if (r.op == Op::Rmdirs) {
    int n = in.ConsumeIntegralInRange<int>(0, 3);
    for (int i = 0; i < n; ++i) {
      OwnedDir d;
      d.path = grammar_path(in);
      d.identity = identity_guess(w, d.path, in);
      d.optional = in.ConsumeBool();
      r.owned.push_back(std::move(d));
    }
  }
  return r;
}

inline Request raw_request(FuzzedDataProvider& in) {
  Request r;
  r.op = static_cast<Op>(in.ConsumeIntegral<unsigned char>());
  r.flag = static_cast<OpenFlag>(in.ConsumeIntegral<unsigned char>());
  r.recursive = in.ConsumeBool();
  r.force = in.ConsumeBool();
  r.atomic = in.ConsumeBool();
  r.dot = in.ConsumeBool();
  r.has_mode = in.ConsumeBool();
  r.mode = in.ConsumeIntegral<std::uint32_t>();
  r.uid = in.ConsumeIntegral<std::int64_t>();
  r.gid = in.ConsumeIntegral<std::int64_t>();
  r.max_bytes = in.ConsumeIntegral<std::uint64_t>();
  r.path = in.ConsumeRandomLengthString(512);
  r.to = in.ConsumeRandomLengthString(512);
  r.pattern = in.ConsumeRandomLengthString(256);
  int n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) r.exclude.push_back(in.ConsumeRandomLengthString(64));
  n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i)
    r.plan.push_back({in.ConsumeRandomLengthString(64), in.ConsumeIntegral<std::uint32_t>()});
  n = in.ConsumeIntegralInRange<int>(0, 3);
  for (int i = 0; i < n; ++i) {
    OwnedDir d;
    d.path = in.ConsumeRandomLengthString(64);
    d.identity = Identity{in.ConsumeIntegral<std::uint64_t>(), in.ConsumeIntegral<std::uint64_t>()};
    d.optional = in.ConsumeBool();
    r.owned.push_back(std::move(d));
  }
  r.data = in.ConsumeRemainingBytesAsString();
  return r;
}

// Identities of everything in the canary tree: a stat answer naming one is an escape.
inline std::set<std::pair<std::uint64_t, std::uint64_t>> canary_identities(const World& w) {
  std::set<std::pair<std::uint64_t, std::uint64_t>> ids;
  for (const char* rel : {"", "/secret", "/sub", "/sub/x"}) {
    struct stat st;
    must(::lstat((w.outside + rel).c_str(), &st) == 0, "lstat canary");
    ids.insert({static_cast<std::uint64_t>(st.st_dev), static_cast<std::uint64_t>(st.st_ino)});
  }
  return ids;
}

// What no answer may ever be: canary bytes, or a description of a canary inode.
inline void check_answer(const Result<Value>& result,
                         const std::set<std::pair<std::uint64_t, std::uint64_t>>& canary) {
  if (!result.ok()) {
    must(result.error().syscall != nullptr, "error without a syscall name");
    return;
  }
  const Value& v = result.value();
  if (auto* b = std::get_if<Bytes>(&v))
    must(!carries_canary(b->data), "answer carries canary content");
  if (auto* s = std::get_if<StatInfo>(&v)) {
    must(canary.count({s->dev, s->ino}) == 0, "stat answered a canary inode");
  }
}

// What every target over the scratch tree starts from, built once in LLVMFuzzerInitialize: the
// world, the identities of its canary tree, and the root pinned under each strategy (index 0 the
// kernel strategy, 1 the walk).
struct Harness {
  World world;
  std::set<std::pair<std::uint64_t, std::uint64_t>> canary;
  std::shared_ptr<Root> roots[2];

  static Harness* make() {
    auto* h = new Harness{World::make(), {}, {}};
    h->canary = canary_identities(h->world);
    for (int i = 0; i < 2; ++i) {
      auto pinned = Root::pin(h->world.root, i == 0 ? Strategy::Kernel : Strategy::Walk);
      must(pinned.ok(), "pin scratch root", pinned.ok() ? "" : pinned.error().description);
      h->roots[i] = pinned.take();
    }
    return h;
  }
};

// The harness of the one target in this binary (each target is a binary of its own), made by
// LLVMFuzzerInitialize below before the first input.
inline Harness* harness = nullptr;

// The root an input runs under, chosen by its next byte: the kernel strategy or the walk.
inline const Root& root_of(FuzzedDataProvider& in) {
  return *harness->roots[in.ConsumeBool() ? 1 : 0];
}

}  // namespace pinnedfs::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pinnedfs::fuzz::harness = pinnedfs::fuzz::Harness::make();
  return 0;
}
