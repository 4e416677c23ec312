// The byte form of the confine programs' requests and answers (see confine.h), decoded and encoded
// here so the binding only moves bytes. Integers are little-endian u8/u32/i32/u64; a string is a
// u32 length and that many bytes, so any byte but NUL (refused where it cannot be a name) passes.
//
// discover request:  u8 1, u32 max_entries, u32 max_matches, u32 max_depth,
//                    u32 n, n × (str glob, u8 access), u32 n, n × str skip, u32 n, n × str probe
// discover answer:   str anchor, u8 truncated, u32 directories, u32 entries,
//                    u32 n, n × (str path, u8 type, u32 pattern),
//                    u32 n, n × (str path, i32 errno, u8 access),
//                    u32 n, n × (u8 status, u8 type, i32 errno, error),
//                    u32 n, n × str skipped
// hold request:      u8 2, u32 n, n × str path
// hold answer:       str anchor, u32 n, n × (u8 status, u8 type, str identity, u64 nlink, i32 fd,
// error) error:             str code, i32 errno, str syscall, str path, u8 refusal, str description
#include <cstring>

#include "confine.h"

namespace pinnedfs::confine {

namespace {

// Requests are written by our TypeScript layer, but a hostile or corrupt one must still be a
// BadArgument and never a read past the end or an unbounded allocation.
constexpr std::uint32_t kMaxList = 1u << 20;
constexpr std::uint32_t kMaxString = 1u << 16;

class In {
 public:
  explicit In(std::string_view b) : b_(b) {}
  bool u8(std::uint8_t* v) {
    if (b_.size() - at_ < 1) return fail();
    *v = static_cast<std::uint8_t>(b_[at_++]);
    return true;
  }
  bool u32(std::uint32_t* v) {
    if (b_.size() - at_ < 4) return fail();
    *v = 0;
    for (int i = 3; i >= 0; --i)
      *v = (*v << 8) | static_cast<std::uint8_t>(b_[at_ + static_cast<std::size_t>(i)]);
    at_ += 4;
    return true;
  }
  bool str(std::string* s) {
    std::uint32_t n = 0;
    if (!u32(&n) || n > kMaxString || b_.size() - at_ < n) return fail();
    s->assign(b_.data() + at_, n);
    at_ += n;
    return true;
  }
  bool count(std::uint32_t* n) { return u32(n) && (*n <= kMaxList || fail()); }
  bool done() const { return ok_ && at_ == b_.size(); }

 private:
  bool fail() {
    ok_ = false;
    return false;
  }
  std::string_view b_;
  std::size_t at_ = 0;
  bool ok_ = true;
};

class Out {
 public:
  void u8(std::uint8_t v) { s_.push_back(static_cast<char>(v)); }
  void u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) s_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void i32(int v) { u32(static_cast<std::uint32_t>(v)); }
  void u64(std::uint64_t v) {
    for (int i = 0; i < 8; ++i) s_.push_back(static_cast<char>((v >> (8 * i)) & 0xFF));
  }
  void str(std::string_view v) {
    u32(static_cast<std::uint32_t>(v.size()));
    s_.append(v);
  }
  void error(const Error& e) {
    str(e.err ? errno_name(e.err) : "EINVAL");
    i32(e.err);
    str(e.syscall ? e.syscall : "");
    str(e.path);
    u8(static_cast<std::uint8_t>(e.refusal));
    str(e.description);
  }
  std::string take() { return std::move(s_); }

 private:
  std::string s_;
};

Error malformed(const char* what) {
  return bad_argument(std::string("malformed confine request: ") + what);
}

Result<Answer> run_discover(const Root& root, In& in, const std::atomic<bool>* cancel) {
  DiscoverRequest r;
  std::uint32_t n = 0;
  if (!in.u32(&r.max_entries) || !in.u32(&r.max_matches) || !in.u32(&r.max_depth))
    return malformed("limits");
  if (!in.count(&n)) return malformed("pattern count");
  for (std::uint32_t i = 0; i < n; ++i) {
    Pattern p;
    std::uint8_t access = 0;
    if (!in.str(&p.glob) || !in.u8(&access)) return malformed("pattern");
    p.access = static_cast<Access>(access);
    r.patterns.push_back(std::move(p));
  }
  for (auto* list : {&r.skip, &r.probes}) {
    if (!in.count(&n)) return malformed("list count");
    for (std::uint32_t i = 0; i < n; ++i) {
      std::string s;
      if (!in.str(&s)) return malformed("path");
      list->push_back(std::move(s));
    }
  }
  if (!in.done()) return malformed("trailing bytes");
  auto found = discover(root, r, cancel);
  if (!found.ok()) return found.take_error();
  const DiscoverResult& d = found.value();
  Out out;
  out.str(d.anchor.str());
  out.u8(static_cast<std::uint8_t>(d.truncated));
  out.u32(d.directories);
  out.u32(d.entries);
  out.u32(static_cast<std::uint32_t>(d.matches.size()));
  for (const Match& m : d.matches) {
    out.str(m.path);
    out.u8(static_cast<std::uint8_t>(m.type));
    out.u32(m.pattern);
  }
  out.u32(static_cast<std::uint32_t>(d.unreadable.size()));
  for (const Unreadable& u : d.unreadable) {
    out.str(u.path);
    out.i32(u.err);
    out.u8(static_cast<std::uint8_t>(u.access));
  }
  out.u32(static_cast<std::uint32_t>(d.probes.size()));
  for (const Probe& p : d.probes) {
    out.u8(static_cast<std::uint8_t>(p.status));
    out.u8(static_cast<std::uint8_t>(p.type));
    out.i32(p.err);
    out.error(p.error);
  }
  out.u32(static_cast<std::uint32_t>(d.skipped.size()));
  for (const std::string& s : d.skipped) out.str(s);
  return Answer{out.take(), {}};
}

Result<Answer> run_hold(const Root& root, In& in) {
  std::uint32_t n = 0;
  if (!in.count(&n)) return malformed("path count");
  std::vector<std::string> paths;
  for (std::uint32_t i = 0; i < n; ++i) {
    std::string s;
    if (!in.str(&s)) return malformed("path");
    paths.push_back(std::move(s));
  }
  if (!in.done()) return malformed("trailing bytes");
  auto held = hold(root, paths);
  if (!held.ok()) return held.take_error();
  HoldResult& h = held.value();
  Answer answer;
  Out out;
  out.str(h.anchor.str());
  out.u32(static_cast<std::uint32_t>(h.members.size()));
  for (Held& m : h.members) {
    out.u8(static_cast<std::uint8_t>(m.status));
    out.u8(static_cast<std::uint8_t>(m.type));
    out.str(m.status == HoldStatus::Held ? m.identity.str() : std::string());
    out.u64(m.nlink);
    out.i32(m.fd.valid() ? m.fd.get() : -1);
    out.error(m.error);
    if (m.fd.valid()) answer.fds.push_back(std::move(m.fd));
  }
  answer.bytes = out.take();
  return answer;
}

}  // namespace

Result<Answer> run(const Root& root, std::string_view request, const std::atomic<bool>* cancel) {
  In in(request);
  std::uint8_t kind = 0;
  if (!in.u8(&kind)) return malformed("empty");
  switch (static_cast<Kind>(kind)) {
    case Kind::Discover:
      return run_discover(root, in, cancel);
    case Kind::Hold:
      return run_hold(root, in);
  }
  return malformed("unknown program");
}

}  // namespace pinnedfs::confine
