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
// hold answer:       str anchor, u32 n, n × member
// member:            u8 status, u8 type, str identity, u64 nlink, i32 fd, error
// prepare request:   u8 3, u8 strategy, u32 n, n × (str anchor path, u8 has expected,
//                    u64 dev, u64 ino, u32 n, n × (str path, u32 mode), u32 n, n × str held path)
// prepare answer:    u32 n, n × (str identity, error, u32 n, n × (str path, str identity) created,
//                    error stopped, u8 held, [str anchor, u32 n, n × member, error])
// cleanup request:   u8 4, u8 strategy, u32 n, n × (i32 fd, u64 dev, u64 ino) released,
//                    u32 n, n × (str anchor path, u64 dev, u64 ino,
//                                u32 n, n × (str path, u64 dev, u64 ino, u8 optional))
// cleanup answer:    u32 unreleased, u32 n, n × (error, u32 n, n × (str path, u8 status, error))
// error:             str code, i32 errno, str syscall, str path, u8 refusal, str description
//                    (errno 0 and refusal 0: no error)
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
  bool u64(std::uint64_t* v) {
    std::uint32_t lo = 0, hi = 0;
    if (!u32(&lo) || !u32(&hi)) return false;
    *v = (static_cast<std::uint64_t>(hi) << 32) | lo;
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

// prepare and cleanup name their anchors by absolute path: they run on a handle of "/" only, so a
// handle on some workspace can never be used to make or remove directories outside it.
Error not_on_slash() {
  return bad_argument("the prepare and cleanup programs run on a handle pinned on '/'");
}

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

// One held member; its descriptor moves into the answer's list.
void put_member(Out& out, Held& m, Answer& answer) {
  out.u8(static_cast<std::uint8_t>(m.status));
  out.u8(static_cast<std::uint8_t>(m.type));
  out.str(m.status == HoldStatus::Held ? m.identity.str() : std::string());
  out.u64(m.nlink);
  out.i32(m.fd.valid() ? m.fd.get() : -1);
  out.error(m.error);
  if (m.fd.valid()) answer.fds.push_back(std::move(m.fd));
}

bool strategy(In& in, Strategy* s) {
  std::uint8_t v = 0;
  if (!in.u8(&v) || v > static_cast<std::uint8_t>(Strategy::Walk)) return false;
  *s = static_cast<Strategy>(v);
  return true;
}

bool identity(In& in, Identity* id) {
  return in.u64(&id->dev) && in.u64(&id->ino);
}

Result<Answer> run_prepare(In& in) {
  PrepareRequest r;
  std::uint32_t n = 0;
  if (!strategy(in, &r.strategy)) return malformed("strategy");
  if (!in.count(&n) || n > kMaxAnchors) return malformed("anchor count");
  r.anchors.resize(n);
  for (PrepareAnchor& a : r.anchors) {
    std::uint8_t expected = 0;
    if (!in.str(&a.path) || !in.u8(&expected) || !identity(in, &a.expected))
      return malformed("anchor");
    a.has_expected = expected != 0;
    if (!in.count(&n)) return malformed("creation count");
    a.create.resize(n);
    for (MkdirsEntry& e : a.create)
      if (!in.str(&e.path) || !in.u32(&e.mode)) return malformed("creation");
    if (!in.count(&n)) return malformed("held count");
    a.hold.resize(n);
    for (std::string& p : a.hold)
      if (!in.str(&p)) return malformed("held path");
  }
  if (!in.done()) return malformed("trailing bytes");
  auto prepared = prepare(r);
  if (!prepared.ok()) return prepared.take_error();
  Answer answer;
  Out out;
  out.u32(static_cast<std::uint32_t>(prepared.value().size()));
  for (PreparedAnchor& a : prepared.value()) {
    out.str(a.identity.dev == 0 && a.identity.ino == 0 ? std::string() : a.identity.str());
    out.error(a.error);
    out.u32(static_cast<std::uint32_t>(a.made.created.size()));
    for (const CreatedDir& c : a.made.created) {
      out.str(c.path);
      out.str(c.identity.str());
    }
    out.error(a.made.failed ? a.made.error : Error{});
    out.u8(a.held ? 1 : 0);
    if (!a.held) continue;
    out.str(a.holds.anchor.str());
    out.u32(static_cast<std::uint32_t>(a.holds.members.size()));
    for (Held& m : a.holds.members) put_member(out, m, answer);
    out.error(a.hold_error);
  }
  answer.bytes = out.take();
  return answer;
}

Result<Answer> run_cleanup(In& in) {
  CleanupRequest r;
  std::uint32_t n = 0;
  if (!strategy(in, &r.strategy)) return malformed("strategy");
  if (!in.count(&n) || n > kMaxHeld) return malformed("release count");
  r.release.resize(n);
  for (Release& x : r.release) {
    std::uint32_t v = 0;
    if (!in.u32(&v) || !identity(in, &x.identity)) return malformed("descriptor");
    x.fd = static_cast<int>(v);
  }
  if (!in.count(&n) || n > kMaxAnchors) return malformed("anchor count");
  r.anchors.resize(n);
  for (CleanupAnchor& a : r.anchors) {
    if (!in.str(&a.path) || !identity(in, &a.identity)) return malformed("anchor");
    if (!in.count(&n)) return malformed("member count");
    a.owned.resize(n);
    for (OwnedDir& o : a.owned) {
      std::uint8_t optional = 0;
      if (!in.str(&o.path) || !identity(in, &o.identity) || !in.u8(&optional))
        return malformed("member");
      o.optional = optional != 0;
    }
  }
  if (!in.done()) return malformed("trailing bytes");
  auto cleaned = cleanup(r);
  if (!cleaned.ok()) return cleaned.take_error();
  Out out;
  out.u32(cleaned.value().unreleased);
  out.u32(static_cast<std::uint32_t>(cleaned.value().anchors.size()));
  for (const CleanedAnchor& a : cleaned.value().anchors) {
    out.error(a.error);
    out.u32(static_cast<std::uint32_t>(a.removed.members.size()));
    for (const RmdirMember& m : a.removed.members) {
      out.str(m.path);
      out.u8(static_cast<std::uint8_t>(m.status));
      out.error(m.error);
    }
  }
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
  for (Held& m : h.members) put_member(out, m, answer);
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
    case Kind::Prepare:
      if (root.path() != "/") return not_on_slash();
      return run_prepare(in);
    case Kind::Cleanup:
      if (root.path() != "/") return not_on_slash();
      return run_cleanup(in);
  }
  return malformed("unknown program");
}

}  // namespace pinnedfs::confine
