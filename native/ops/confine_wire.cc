// The byte form of the confine programs' requests and answers (see confine.h), decoded and encoded
// here so the binding only moves bytes. Integers are little-endian u8/u32/i32/u64; a string is a
// u32 length and that many bytes, so any byte but NUL (refused where it cannot be a name) passes.
//
// discover request:  u8 1, u32 max_entries, u32 max_matches, u32 max_depth,
//                    u32 n, n × (str glob, u8 access), u32 n, n × str skip, u32 n, n × str probe,
//                    u32 n, n × str prefix component
// discover answer:   str anchor, u8 truncated, u32 directories, u32 entries,
//                    u32 n, n × (str path, u8 type, u32 pattern, str identity),
//                    u32 n, n × (str path, i32 errno, u8 access),
//                    u32 n, n × (u8 status, u8 type, i32 errno, error, str identity),
//                    u32 n, n × str skipped, u32 n, n × str mount, u8 unstable, str path
// hold request:      u8 2, u32 n, n × (str path, u8 lease)
// hold answer:       str anchor, u32 n, n × member
// member:            u8 status, u8 type, str identity, u64 nlink, i32 fd, error,
//                    u32 n, n × (u64 dev, u64 ino) chain, i32 lease fd
// prepare request:   u8 3, u8 strategy, u8 has record, [str runtime parent, str runtime name,
//                    str record name], u32 n, n × (str anchor path, u8 has expected, u64 dev,
//                    u64 ino, u32 n, n × (str path, u32 mode, u8 flags), u32 n, n × (str held
//                    path, u8 lease))
// prepare answer:    i32 record fd, str record identity,
//                    u32 n, n × (str identity, error, u32 n, n × (str path, str identity) created,
//                    error stopped, u8 held, [str anchor, u32 n, n × member, error])
// cleanup request:   u8 4, u8 strategy, u32 n, n × (i32 fd, u64 dev, u64 ino) released,
//                    u32 n, n × (str anchor path, u64 dev, u64 ino,
//                                u32 n, n × (str path, u64 dev, u64 ino, u8 flags)),
//                    i32 record fd, u64 dev, u64 ino, str runtime parent, str runtime name,
//                    str record name, u8 sweep        (member flags: 1 optional, 2 purge, 4 leased)
// cleanup answer:    u32 unreleased, u32 n, n × (error, u32 n, n × (str path, u8 status, error)),
//                    swept
// sweep request:     u8 5, u8 strategy, str runtime parent, str runtime name, str own record
// sweep answer:      swept
// swept:             u32 records, u32 live, u32 n, n × (str path, u8 status, str why)
// verify request:    u8 6, i32 pid, i32 block fd, u32 wait ms, i32 record fd, u64 dev, u64 ino,
//                    u32 n, n × (str anchor path, u64 dev, u64 ino),
//                    u32 n, n × (u32 anchor, str path, u8 kind, u64 dev, u64 ino, u32 perms,
//                                u32 n, n × (u8 expect, u64 dev, u64 ino))
// verify answer:     u8 ok, u8 moved, u8 died, str why
// strays request:    u8 7, u8 strategy, u64 since ns, i32 record fd, u64 dev, u64 ino,
//                    u32 n, n × (str anchor path, u64 dev, u64 ino,
//                                u32 n, n × (str dir path, u64 dev, u64 ino))
// strays answer:     u32 n, n × str removed path, u32 n, n × (u32 anchor, str path, u64, u64) kept
// error:             str code, i32 errno, str syscall, str path, u8 refusal, str description
//                    (errno 0 and refusal 0: no error)
#include <sys/stat.h>

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
  for (auto* list : {&r.skip, &r.probes, &r.prefix}) {
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
    out.str(m.identity.str());
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
    out.str(p.status == ProbeStatus::Present ? p.identity.str() : std::string());
  }
  for (const auto* list : {&d.skipped, &d.mounts}) {
    out.u32(static_cast<std::uint32_t>(list->size()));
    for (const std::string& s : *list) out.str(s);
  }
  out.u8(d.unstable ? 1 : 0);
  out.str(d.unstable_path);
  return Answer{out.take(), {}};
}

// One held member; its descriptor moves into the answer's list.
void put_member(Out& out, HeldMember& m, Answer& answer) {
  out.u8(static_cast<std::uint8_t>(m.status));
  out.u8(static_cast<std::uint8_t>(m.type));
  out.str(m.status == HoldStatus::Held ? m.identity.str() : std::string());
  out.u64(m.nlink);
  out.i32(m.fd.valid() ? m.fd.get() : -1);
  out.error(m.error);
  out.u32(static_cast<std::uint32_t>(m.chain.size()));
  for (const Identity& id : m.chain) {
    out.u64(id.dev);
    out.u64(id.ino);
  }
  out.i32(m.lease.valid() ? m.lease.get() : -1);
  if (m.fd.valid()) answer.fds.push_back(std::move(m.fd));
  if (m.lease.valid()) answer.fds.push_back(std::move(m.lease));
}

bool hold_path(In& in, HoldPath* p) {
  std::uint8_t lease = 0;
  if (!in.str(&p->path) || !in.u8(&lease)) return false;
  p->lease = lease != 0;
  return true;
}

bool place(In& in, RuntimePlace* p) {
  return in.str(&p->parent) && in.str(&p->name);
}

void put_swept(Out& out, const SweepResult& s) {
  out.u32(s.records);
  out.u32(s.live);
  out.u32(static_cast<std::uint32_t>(s.items.size()));
  for (const Swept& x : s.items) {
    out.str(x.path);
    out.u8(static_cast<std::uint8_t>(x.status));
    out.str(x.why);
  }
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
  std::uint8_t has_record = 0;
  RuntimePlace runtime;
  std::string record_name;
  if (!strategy(in, &r.strategy)) return malformed("strategy");
  if (!in.u8(&has_record) || (has_record && (!place(in, &runtime) || !in.str(&record_name))))
    return malformed("record");
  if (!in.count(&n) || n > kMaxAnchors) return malformed("anchor count");
  r.anchors.resize(n);
  for (PrepareAnchor& a : r.anchors) {
    std::uint8_t expected = 0;
    if (!in.str(&a.path) || !in.u8(&expected) || !identity(in, &a.expected))
      return malformed("anchor");
    a.has_expected = expected != 0;
    if (!in.count(&n)) return malformed("creation count");
    a.create.resize(n);
    a.create_flags.resize(n);
    for (std::size_t k = 0; k < n; ++k)
      if (!in.str(&a.create[k].path) || !in.u32(&a.create[k].mode) || !in.u8(&a.create_flags[k]))
        return malformed("creation");
    if (!in.count(&n)) return malformed("held count");
    a.hold.resize(n);
    for (HoldPath& p : a.hold)
      if (!hold_path(in, &p)) return malformed("held path");
  }
  if (!in.done()) return malformed("trailing bytes");
  Answer answer;
  Out out;
  // The record comes first: nothing is made that is not on record.
  Identity record_id;
  if (has_record) {
    auto record = create_record(runtime, record_name);
    if (!record.ok()) return record.take_error();
    struct stat st;
    if (::fstat(record.value().get(), &st) != 0) return sys_error(errno, "fstat", record_name);
    record_id = identity_of(st);
    r.record = RecordRef{record.value().get(), record_id};
    answer.fds.push_back(record.take());
  }
  out.i32(r.record.fd);
  out.str(has_record ? record_id.str() : std::string());
  auto prepared = prepare(r);
  if (!prepared.ok()) return prepared.take_error();
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
    for (HeldMember& m : a.holds.members) put_member(out, m, answer);
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
    a.purge.resize(n);
    for (std::size_t k = 0; k < n; ++k) {
      OwnedDir& o = a.owned[k];
      std::uint8_t flags = 0;
      if (!in.str(&o.path) || !identity(in, &o.identity) || !in.u8(&flags))
        return malformed("member");
      o.optional = (flags & 1) != 0;
      a.purge[k] = (flags & 2) != 0;
      o.leased = (flags & 4) != 0;
    }
  }
  std::uint32_t record_fd = 0;
  std::uint8_t sweep = 0;
  if (!in.u32(&record_fd) || !identity(in, &r.record.identity) || !place(in, &r.runtime) ||
      !in.str(&r.record_name) || !in.u8(&sweep))
    return malformed("record");
  r.record.fd = static_cast<int>(record_fd);
  r.sweep = sweep != 0;
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
  put_swept(out, cleaned.value().swept);
  return Answer{out.take(), {}};
}

Result<Answer> run_sweep(In& in) {
  Strategy s = Strategy::Auto;
  RuntimePlace runtime;
  std::string own;
  if (!strategy(in, &s) || !place(in, &runtime) || !in.str(&own)) return malformed("sweep");
  if (!in.done()) return malformed("trailing bytes");
  auto swept = sweep(runtime, own, s);
  if (!swept.ok()) return swept.take_error();
  Out out;
  put_swept(out, swept.value());
  return Answer{out.take(), {}};
}

Result<Answer> run_strays(In& in) {
  StraysRequest r;
  std::uint32_t n = 0;
  std::uint32_t record = 0;
  if (!strategy(in, &r.strategy) || !in.u64(&r.since_ns) || !in.u32(&record) ||
      !identity(in, &r.record.identity))
    return malformed("strays");
  r.record.fd = static_cast<int>(record);
  if (!in.count(&n) || n > kMaxAnchors) return malformed("anchor count");
  r.anchors.resize(n);
  for (StrayAnchor& a : r.anchors) {
    if (!in.str(&a.path) || !identity(in, &a.identity) || !in.count(&n) || n > kMaxHeld)
      return malformed("anchor");
    a.dirs.resize(n);
    for (StrayPlace& d : a.dirs)
      if (!in.str(&d.path) || !identity(in, &d.identity)) return malformed("directory");
  }
  if (!in.done()) return malformed("trailing bytes");
  auto removed = remove_strays(r);
  if (!removed.ok()) return removed.take_error();
  Out out;
  out.u32(static_cast<std::uint32_t>(removed.value().removed.size()));
  for (const std::string& p : removed.value().removed) out.str(p);
  out.u32(static_cast<std::uint32_t>(removed.value().kept.size()));
  for (const auto& k : removed.value().kept) {
    out.u32(static_cast<std::uint32_t>(k.anchor));
    out.str(k.path);
    out.u64(k.identity.dev);
    out.u64(k.identity.ino);
  }
  return Answer{out.take(), {}};
}

Result<Answer> run_verify(In& in) {
  VerifyRequest r;
  std::uint32_t pid = 0, block = 0, record = 0, n = 0;
  if (!in.u32(&pid) || !in.u32(&block) || !in.u32(&r.wait_ms) || !in.u32(&record) ||
      !identity(in, &r.record.identity))
    return malformed("verify");
  r.pid = static_cast<int>(pid);
  r.block_fd = static_cast<int>(block);
  r.record.fd = static_cast<int>(record);
  if (!in.count(&n) || n > kMaxAnchors) return malformed("anchor count");
  r.anchors.resize(n);
  for (auto& [path, id] : r.anchors)
    if (!in.str(&path) || !identity(in, &id)) return malformed("anchor");
  if (!in.count(&n) || n > kMaxHeld) return malformed("layer count");
  r.layers.resize(n);
  for (ExpectedLayer& l : r.layers) {
    std::uint8_t kind = 0;
    std::uint32_t steps = 0;
    if (!in.u32(&l.anchor) || !in.str(&l.path) || !in.u8(&kind) || kind < 1 || kind > 4 ||
        !identity(in, &l.identity) || !in.u32(&l.perms) || !in.count(&steps))
      return malformed("layer");
    l.kind = static_cast<LayerKind>(kind);
    l.steps.resize(steps);
    for (ExpectedStep& st : l.steps) {
      std::uint8_t e = 0;
      if (!in.u8(&e) || e > 2 || !identity(in, &st.identity)) return malformed("step");
      st.expect = static_cast<Expect>(e);
    }
  }
  if (!in.done()) return malformed("trailing bytes");
  auto verified = verify_sandbox(r);
  if (!verified.ok()) return verified.take_error();
  Out out;
  out.u8(verified.value().ok ? 1 : 0);
  out.u8(verified.value().moved ? 1 : 0);
  out.u8(verified.value().died ? 1 : 0);
  out.str(verified.value().why);
  return Answer{out.take(), {}};
}

Result<Answer> run_hold(const Root& root, In& in) {
  std::uint32_t n = 0;
  if (!in.count(&n) || n > kMaxHeld) return malformed("path count");
  std::vector<HoldPath> paths(n);
  for (HoldPath& p : paths)
    if (!hold_path(in, &p)) return malformed("path");
  if (!in.done()) return malformed("trailing bytes");
  auto held = hold(root, paths);
  if (!held.ok()) return held.take_error();
  HoldResult& h = held.value();
  Answer answer;
  Out out;
  out.str(h.anchor.str());
  out.u32(static_cast<std::uint32_t>(h.members.size()));
  for (HeldMember& m : h.members) put_member(out, m, answer);
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
    case Kind::Sweep:
      if (root.path() != "/") return not_on_slash();
      return run_sweep(in);
    case Kind::Verify:
      if (root.path() != "/") return not_on_slash();
      return run_verify(in);
    case Kind::Strays:
      if (root.path() != "/") return not_on_slash();
      return run_strays(in);
  }
  return malformed("unknown program");
}

}  // namespace pinnedfs::confine
