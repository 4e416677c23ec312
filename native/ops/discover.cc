// discover: the protected-path walk of one anchor (see confine.h).
//
// Depth first with an explicit stack: each frame holds its directory's handle until every pending
// child of it has been opened from that handle, so the number of open descriptors is the depth,
// never the width. A directory is read whole before any child is entered; the pending children
// carry the glob states they were reached with, one state set per pattern (patterns are matched
// separately because the first matching one decides the protection).
//
// What is never done: following a link (a child is opened O_NOFOLLOW|O_DIRECTORY as
// core/resolve.h descend() opens one: from the anchor within the lookup depth under the kernel
// strategy, else from its parent's handle; a name that turned into a link between the listing and
// the open is skipped, as anything that vanished is), listing a directory that is no longer at its
// path beneath the anchor (each is proven, core/beneath.h, before its listing and before each later
// batch of it; one moved away, out of the anchor or within it, is skipped as a concurrent change,
// so a departed tree's names are never reported as the anchor's), crossing into another mount,
// decoding a name (bytes are matched as the glob matcher decodes them, with invalid sequences as
// U+FFFD, and reported unchanged), descending into a matched entry (its whole tree is protected by
// one mount, so nothing inside matters), or entering a skipped subtree.
#include <fcntl.h>
#include <sys/stat.h>

#include <time.h>

#include <algorithm>
#include <set>
#include <unordered_map>

#include "../core/eintr.h"
#include "../core/resolve.h"
#include "../platform/platform.h"
#include "confine.h"
#include "dir_list.h"
#include "glob_match.h"
#include "stat_answer.h"

namespace pinnedfs::confine {

namespace {

using glob::Compiled;
using glob::State;
using glob::Stepper;

constexpr int kListFlags = O_RDONLY | O_DIRECTORY | O_NONBLOCK;

using States = std::vector<std::vector<State>>;  // per pattern

struct Pending {
  std::string name;
  States states;
  std::size_t relevant = 0;  // its entry in the parent's listing record
};

struct Frame {
  pinnedfs::Held dir;
  std::string relative;  // "" for the anchor itself
  std::vector<Pending> children;
  std::size_t next = 0;
  std::size_t listed = 0;  // its record among the directories listed
};

std::uint64_t realtime_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

bool permission(int err) {
  return err == EACCES || err == EPERM;
}

// Gone or no longer a directory since it was listed: a race, not a failure. A link refusal is the
// same case (a directory replaced by a link is not entered).
bool vanished(const Error& e) {
  return e.refusal == Refusal::Symlink ||
         (e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR || e.err == ELOOP));
}

std::string join(const std::string& parent, std::string_view name) {
  std::string out;
  out.reserve(parent.size() + 1 + name.size());
  if (!parent.empty()) {
    out = parent;
    out.push_back('/');
  }
  out.append(name);
  return out;
}

class Walker {
 public:
  Walker(const Root& root, const DiscoverRequest& request, const std::atomic<bool>* cancel)
      : root_(root),
        request_(request),
        cancel_(cancel),
        skip_(request.skip.begin(), request.skip.end()) {
    compiled_.reserve(request.patterns.size());
    for (const Pattern& p : request.patterns) compiled_.push_back(glob::compile({p.glob}, true));
    steppers_.reserve(compiled_.size());
    for (const Compiled& c : compiled_) steppers_.emplace_back(c);
    next_.resize(compiled_.size());
  }

  Status run(DiscoverResult& out);
  // Whether every directory listed is still as it was listed, as far as the patterns can tell; the
  // first that is not, in `out`.
  void recheck(DiscoverResult& out);

 private:
  // What one listing saw: the directory, the states its entries were matched with, and every entry
  // that mattered (matched, or entered) with its identity (zero: it vanished before it was
  // entered).
  struct Listed {
    std::string relative;
    struct stat st;
    States states;
    std::vector<std::pair<std::string, Identity>> relevant;
  };
  enum class Verdict : unsigned char { Ignore, Match, Descend, Vanished };
  // What the patterns make of entry `name` of the directory open at `dir`, reached with `states`.
  Result<Verdict> classify(int dir, const States& states, std::string_view name,
                           unsigned char dtype, const std::string& shown, EntryKind* type,
                           std::size_t* matched);
  // Whether directory `l` still holds what mattered in it, and nothing new but what was born
  // during the walk.
  bool still_as_listed(const Listed& l);
  std::vector<Listed> listed_;
  std::uint64_t started_ns_ = 0;
  bool cancelled() const { return cancel_ && cancel_->load(std::memory_order_relaxed); }
  Access strictest_alive(const States& states) const;
  // Reads the directory open at `fd` and queues its children in `frame`. Returns false when a
  // bound was reached.
  Result<bool> list(Frame& frame, const States& states, DiscoverResult& out);

  const Root& root_;
  const DiscoverRequest& request_;
  const std::atomic<bool>* cancel_;
  std::set<std::string> skip_;
  std::vector<Compiled> compiled_;
  std::vector<Stepper> steppers_;
  States next_;
  std::vector<char> buffer_;
};

Access Walker::strictest_alive(const States& states) const {
  Access a = Access::None;
  for (std::size_t p = 0; p < compiled_.size(); ++p) {
    const auto& s = states[p];
    if (s.empty() || !glob::can_descend(compiled_[p], s.data(), s.size())) continue;
    if (request_.patterns[p].access > a) a = request_.patterns[p].access;
  }
  return a;
}

Result<bool> Walker::list(Frame& frame, const States& states, DiscoverResult& out) {
  // Only a directory still beneath the anchor at its path is listed; a departed one is skipped.
  auto listable = frame.dir.prove(root_, "getdents64", frame.relative);
  if (!listable.ok()) {
    if (listable.error().moved) return true;
    return listable.take_error();
  }
  {
    Listed l;
    l.relative = frame.relative;
    l.states = states;
    if (::fstat(frame.dir.look(), &l.st) != 0) return sys_error(errno, "fstat", frame.relative);
    frame.listed = listed_.size();
    listed_.push_back(std::move(l));
  }
  DirectoryReader reader(listable.value().fd(), buffer_);
  std::string_view name;
  unsigned char dtype = DT_UNKNOWN;
  std::size_t proven = 1;
  while (reader.next(&name, &dtype)) {
    if (reader.batches() > proven) {
      proven = reader.batches();
      auto still = frame.dir.prove(root_, "getdents64", frame.relative);
      if (!still.ok()) {
        frame.children.clear();  // what was queued came from a place that may now be outside
        if (still.error().moved) return true;
        return still.take_error();
      }
    }
    if (++out.entries > request_.max_entries) {
      out.truncated = Truncation::Entries;
      return false;
    }
    if ((out.entries & 1023u) == 0 && cancelled()) break;
    EntryKind type = EntryKind::Unknown;
    std::size_t matched = 0;
    auto verdict = classify(frame.dir.look(), states, name, dtype, join(frame.relative, name),
                            &type, &matched);
    if (!verdict.ok()) return verdict.take_error();
    if (verdict.value() == Verdict::Ignore || verdict.value() == Verdict::Vanished) continue;
    if (verdict.value() == Verdict::Match) {
      if (out.matches.size() >= request_.max_matches) {
        out.truncated = Truncation::Matches;
        return false;
      }
      Match found{join(frame.relative, name), type, static_cast<std::uint32_t>(matched), {}};
      struct stat mst;
      std::string n(name);
      if (::fstatat(frame.dir.look(), n.c_str(), &mst, AT_SYMLINK_NOFOLLOW) == 0) {
        found.identity = identity_of(mst);
      } else if (errno == ENOENT) {
        continue;  // vanished since the listing: the recheck of this directory tells
      } else {
        return sys_error(errno, "fstatat", found.path);
      }
      listed_[frame.listed].relevant.emplace_back(std::string(name), found.identity);
      out.matches.push_back(std::move(found));
      continue;  // pruned: the mount over it covers its whole tree
    }
    std::string relative = join(frame.relative, name);
    if (skip_.count(relative)) {
      out.skipped.push_back(std::move(relative));
      continue;
    }
    listed_[frame.listed].relevant.emplace_back(std::string(name), Identity{});
    frame.children.push_back(
        Pending{std::string(name), next_, listed_[frame.listed].relevant.size() - 1});
  }
  if (reader.error() != 0) {
    if (permission(reader.error())) {
      // Part of a listing is no listing: the whole directory is protected instead.
      frame.children.clear();
      out.unreadable.push_back(Unreadable{frame.relative, reader.error(), strictest_alive(states)});
      return true;
    }
    return sys_error(reader.error(), "getdents64", frame.relative);
  }
  return true;
}

Status Walker::run(DiscoverResult& out) {
  // Birth times come from a coarse clock that may lag this one by a tick.
  started_ns_ = realtime_ns() - 20000000;
  States initial;
  initial.reserve(compiled_.size());
  bool any = false;
  for (const Compiled& c : compiled_) {
    initial.push_back(c.initial);
    any = any || !c.matches_nothing();
  }
  if (!any) return ok_status();
  // An anchor that is a mount inside the patterns' directory: the patterns start where they stand
  // at the mount point.
  for (const std::string& component : request_.prefix) {
    any = false;
    for (std::size_t p = 0; p < compiled_.size(); ++p) {
      const auto& s = initial[p];
      steppers_[p].step(s.data(), s.size(), component, next_[p]);
      any = any || !next_[p].empty();
    }
    initial.swap(next_);
    if (!any) return ok_status();
  }

  std::vector<Frame> stack;
  {
    auto opened = hold_beneath(root_, LexedPath{}, kListFlags);
    if (!opened.ok()) {
      const Error& e = opened.error();
      if (e.refusal == Refusal::None && permission(e.err)) {
        out.unreadable.push_back(Unreadable{"", e.err, strictest_alive(initial)});
        return ok_status();
      }
      return opened.take_error();
    }
    Frame top;
    top.dir = opened.take();
    ++out.directories;
    auto listed = list(top, initial, out);
    if (!listed.ok()) return listed.take_error();
    if (!listed.value()) return ok_status();
    stack.push_back(std::move(top));
  }
  while (!stack.empty()) {
    if (cancelled()) {
      Error e = sys_error(ECANCELED, "discover");
      e.description = "discovery was cancelled";
      return e;
    }
    Frame& f = stack.back();
    if (f.next == f.children.size()) {
      stack.pop_back();
      continue;
    }
    Pending child = std::move(f.children[f.next++]);
    std::string relative = join(f.relative, child.name);
    if (stack.size() + 1 > request_.max_depth) {
      out.truncated = Truncation::Depth;
      return ok_status();
    }
    auto opened = descend(root_, f.dir, child.name, kListFlags, relative);
    if (!opened.ok()) {
      const Error& e = opened.error();
      // Not entered, but seen: what the recheck compares (a vanished one stays unknown).
      struct stat seen;
      if ((e.mount || permission(e.err)) &&
          ::fstatat(f.dir.look(), child.name.c_str(), &seen, AT_SYMLINK_NOFOLLOW) == 0) {
        listed_[f.listed].relevant[child.relevant].second = identity_of(seen);
      }
      // A mount is not entered: the caller walks it as an anchor of its own.
      if (e.mount) {
        out.mounts.push_back(std::move(relative));
        continue;
      }
      if (e.refusal == Refusal::None && permission(e.err)) {
        out.unreadable.push_back(
            Unreadable{std::move(relative), e.err, strictest_alive(child.states)});
        continue;
      }
      if (vanished(e) || e.moved) continue;
      return opened.take_error();
    }
    Frame next;
    next.dir = opened.take();
    {
      struct stat cst;
      if (::fstat(next.dir.look(), &cst) == 0)
        listed_[f.listed].relevant[child.relevant].second = identity_of(cst);
    }
    next.relative = std::move(relative);
    ++out.directories;
    auto listed = list(next, child.states, out);
    if (!listed.ok()) return listed.take_error();
    if (!listed.value()) return ok_status();
    stack.push_back(std::move(next));
  }
  if (cancelled()) {
    Error e = sys_error(ECANCELED, "discover");
    e.description = "discovery was cancelled";
    return e;
  }
  return ok_status();
}

// The shortest prefix of `p` that is a mount: where a lookup that met one crossed.
std::string mount_prefix(const Root& root, const LexedPath& p) {
  for (std::size_t k = 1; k < p.parts.size(); ++k) {
    auto dir = open_dirs(root, p, k);
    if (!dir.ok() && dir.error().mount) return p.joined(k);
    if (!dir.ok()) break;
  }
  return {};
}

bool same_time(const struct timespec& a, const struct timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool unchanged(const struct stat& a, const struct stat& b) {
  return identity_of(a) == identity_of(b) && a.st_nlink == b.st_nlink &&
#if defined(__APPLE__)
         same_time(a.st_mtimespec, b.st_mtimespec) && same_time(a.st_ctimespec, b.st_ctimespec);
#else
         same_time(a.st_mtim, b.st_mtim) && same_time(a.st_ctim, b.st_ctim);
#endif
}

// Whether entry `name` of `dir` was born at or after `since` (a directory made, or a file
// written, during the walk, rather than renamed in): false where the file system cannot tell.
bool born_after(int dir, const std::string& name, std::uint64_t since) {
#if defined(__linux__) && defined(STATX_BTIME)
  struct statx sx;
  if (::statx(dir, name.c_str(), AT_SYMLINK_NOFOLLOW, STATX_BTIME, &sx) != 0 ||
      !(sx.stx_mask & STATX_BTIME))
    return false;
  return static_cast<std::uint64_t>(sx.stx_btime.tv_sec) * 1000000000u + sx.stx_btime.tv_nsec >=
         since;
#else
  (void)dir;
  (void)name;
  (void)since;
  return false;
#endif
}

}  // namespace

Result<Walker::Verdict> Walker::classify(int dir, const States& states, std::string_view name,
                                         unsigned char dtype, const std::string& shown,
                                         EntryKind* type, std::size_t* matched) {
  bool alive = false;
  for (std::size_t p = 0; p < compiled_.size(); ++p) {
    const auto& s = states[p];
    steppers_[p].step(s.data(), s.size(), name, next_[p]);
    alive = alive || !next_[p].empty();
  }
  if (!alive) return Verdict::Ignore;
  *type = entry_kind(dtype);
  bool typed = false;
  for (std::size_t p = 0; p < compiled_.size() && !typed; ++p) {
    const auto& n = next_[p];
    typed = !n.empty() && (glob::can_descend(compiled_[p], n.data(), n.size()) ||
                           glob::needs_directory(compiled_[p], n.data(), n.size()));
  }
  if (typed && *type == EntryKind::Unknown) {
    struct stat st;
    std::string n(name);
    if (::fstatat(dir, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
      *type = entry_kind_of_mode(st.st_mode);
    } else if (errno == ENOENT) {
      return Verdict::Vanished;
    } else {
      return sys_error(errno, "fstatat", shown);
    }
  }
  bool is_dir = *type == EntryKind::Directory;
  for (std::size_t p = 0; p < compiled_.size(); ++p) {
    const auto& n = next_[p];
    if (!n.empty() && glob::accepts(compiled_[p], n.data(), n.size(), is_dir)) {
      *matched = p;
      return Verdict::Match;
    }
  }
  if (!is_dir) return Verdict::Ignore;
  for (std::size_t p = 0; p < compiled_.size(); ++p) {
    const auto& n = next_[p];
    if (!n.empty() && glob::can_descend(compiled_[p], n.data(), n.size())) return Verdict::Descend;
  }
  return Verdict::Ignore;
}

bool Walker::still_as_listed(const Listed& l) {
  const char* name = l.relative.empty() ? "." : l.relative.c_str();
  struct stat now;
  if (::fstatat(root_.fd(), name, &now, AT_SYMLINK_NOFOLLOW) != 0 ||
      identity_of(now) != identity_of(l.st))
    return false;
  if (unchanged(now, l.st)) return true;
  // Changed while the walk went on: only what the patterns care about must be the same.
  int fd = retry_eintr(
      [&] { return ::openat(root_.fd(), name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); });
  if (fd < 0) return false;
  Fd dir(fd);
  struct stat opened;
  if (::fstat(fd, &opened) != 0 || identity_of(opened) != identity_of(l.st)) return false;
  std::unordered_map<std::string, Identity> seen;
  {
    DirectoryReader reader(fd, buffer_);
    std::string_view entry;
    unsigned char dtype = DT_UNKNOWN;
    while (reader.next(&entry, &dtype)) {
      std::string full = join(l.relative, entry);
      if (skip_.count(full)) continue;
      EntryKind type = EntryKind::Unknown;
      std::size_t matched = 0;
      auto verdict = classify(fd, l.states, entry, dtype, full, &type, &matched);
      if (!verdict.ok()) return false;
      if (verdict.value() != Verdict::Match && verdict.value() != Verdict::Descend) continue;
      struct stat st;
      std::string n(entry);
      if (::fstatat(fd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) return false;
      seen.emplace(std::move(n), identity_of(st));
    }
    if (reader.error() != 0) return false;
  }
  std::unordered_map<std::string, Identity> had(l.relevant.begin(), l.relevant.end());
  for (const auto& [n, id] : had) {
    auto now_at = seen.find(n);
    // Gone, replaced, or never entered: it may be elsewhere now.
    if (now_at == seen.end() || now_at->second != id || id == Identity{}) return false;
  }
  for (const auto& [m, now_id] : seen) {
    if (!had.count(m) && !born_after(fd, m, started_ns_))
      return false;  // moved in, not made: from where?
  }
  return true;
}

void Walker::recheck(DiscoverResult& out) {
  for (const Listed& l : listed_) {
    if (!still_as_listed(l)) {
      out.unstable = true;
      out.unstable_path = l.relative;
      return;
    }
  }
}

namespace {

Probe probe(const Root& root, const std::string& path, std::vector<std::string>& mounts) {
  Probe out;
  auto lexed = lex_path(path);
  if (!lexed.ok()) {
    out.status = ProbeStatus::Refused;
    out.error = lexed.take_error();
    return out;
  }
  LexedPath p = lexed.take();
  if (p.has_dotdot || p.is_root()) {
    out.status = ProbeStatus::Refused;
    out.error = bad_argument("a probe names a path beneath the anchor, without '..'", path);
    return out;
  }
  auto parent = open_parent(root, p);
  int dirfd = -1;
  if (parent.ok()) {
    // The type answered must be the type of what the path names beneath the anchor, not of an
    // entry in a parent that left it.
    auto still = parent.value().dir.prove(root, "fstatat", path);
    if (still.ok())
      dirfd = still.value().fd();
    else
      parent = still.take_error();
  }
  if (!parent.ok()) {
    Error e = parent.take_error();
    if (e.mount) {
      std::string at = mount_prefix(root, p);
      if (!at.empty()) {
        if (std::find(mounts.begin(), mounts.end(), at) == mounts.end()) mounts.push_back(at);
        out.status = ProbeStatus::Beneath;
        return out;
      }
    }
    if (e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR)) {
      out.err = e.err;
      return out;  // Missing
    }
    out.status = ProbeStatus::Refused;
    out.error = std::move(e);
    return out;
  }
  struct stat st;
  int rc = retry_eintr(
      [&] { return ::fstatat(dirfd, parent.value().leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW); });
  if (rc != 0 && (errno == ENOENT || errno == ENOTDIR)) {
    out.err = errno;
    return out;
  }
  answer_stat(&out, rc, st, ProbeStatus::Present, ProbeStatus::Refused, "fstatat", path);
  return out;
}

}  // namespace

Result<DiscoverResult> discover(const Root& root, const DiscoverRequest& request,
                                const std::atomic<bool>* cancel) {
  for (const Pattern& p : request.patterns) {
    if (p.glob.find('\0') != std::string::npos)
      return bad_argument("a discovery pattern contains a NUL byte");
    if (p.access != Access::ReadOnly && p.access != Access::Inaccessible) {
      return bad_argument("a discovery pattern's access must be read-only or inaccessible", p.glob);
    }
    Compiled c = glob::compile({p.glob}, true);
    if (c.absolute || c.min_depth < 0) {
      return bad_argument(
          "a discovery pattern must stay beneath its anchor (no absolute path, no '..')", p.glob);
    }
  }
  if (request.max_depth == 0) return bad_argument("max_depth must be at least 1");
  for (const std::string& c : request.prefix) {
    if (c.empty() || c == "." || c == ".." || c.find('/') != std::string::npos ||
        c.find('\0') != std::string::npos) {
      return bad_argument("a discovery prefix is a list of path components");
    }
  }
  DiscoverResult out;
  out.anchor = root.identity();
  Walker walker(root, request, cancel);
  auto walked = walker.run(out);
  if (!walked.ok()) return walked.take_error();
  out.probes.reserve(request.probes.size());
  for (const std::string& p : request.probes) out.probes.push_back(probe(root, p, out.mounts));
  walker.recheck(out);
  // The anchor must still be the directory its path names: a walk of a directory renamed away
  // would describe somewhere else.
  auto same = root.verify_path_identity();
  if (!same.ok()) return same.take_error();
  return out;
}

}  // namespace pinnedfs::confine
