// glob: Effect 4.1's `FileSystem.glob` walk, beneath the pinned root, in one trip.
//
// The matcher (ops/glob_match.h) is pure; this file drives it over the tree. The walk is depth
// first, each directory's entries sorted by name in JavaScript string order, a match reported
// before its own subtree, as Effect's walk does. Differences from Effect, all from the contract's
// "no link is ever followed":
//  - A link is never a directory here, whatever it points at: `**` does not enter it (as in
//    Effect), and neither does a literal or wildcard segment (Effect follows those). A link named
//    by the last segment is still a match, as a link; a directory-only pattern (`link/`) does not
//    match it, since telling would mean looking through it.
//  - Every directory is opened beneath the root as core/resolve.h descend() opens a child of the
//    directory being listed (O_NOFOLLOW|O_DIRECTORY, confined, on the root's mount), never by an
//    unconfined joined path, and is proven beneath the root before it is listed (and before each
//    later batch of a large one): a directory moved out mid-glob is refused, never listed. Types
//    come from d_type, with fstatat(AT_SYMLINK_NOFOLLOW) on the listed handle where the file
//    system does not say.
//  - A mount point is like a link: it can match, it is never entered.
//  - The glob root itself must be a real directory: a link there is refused (PermissionDenied),
//    where Effect would list whatever it names.
//  - ".." segments are resolved physically, by returning to the handle the walk came from (or to
//    an ancestor of the glob root, opened beneath the pinned root). A pattern that could climb
//    above the pinned root is refused as an escape before any directory is read.
//  - Names that are not valid UTF-8 are never visited: no JavaScript string can name them
//    faithfully. By default they are skipped. With `unnamed`, each one the pattern would have
//    reported or entered (matched with every invalid byte read as U+FFFD; excludes applied) is
//    answered too, as a NUL (which no name holds), then 'd' for a directory (not entered: nothing
//    beneath it is listed) or 'e' for any other entry, then its path's bytes in hex. A caller
//    that must not drop a name silently (the in-place fixers) reports them.
//  - A literal segment holding an escaped '/' (`a\/b`) matches nothing: no single name holds a
//    '/', and probing it as a path would cross a component unchecked.
//  - Absolute patterns ("/x", and "C:/x", which Effect reads as a drive root on every platform)
//    are the TypeScript layer's to rewrite relative to the root; here they are a BadArgument.
//  - A literal segment longer than NAME_MAX names nothing and is skipped (Effect's stat of it
//    would fail with ENAMETOOLONG).
#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <deque>

#include "../core/alloc.h"
#include "../core/limits.h"
#include "../platform/platform.h"
#include "dir_list.h"
#include "glob_match.h"
#include "ops.h"

namespace pinnedfs::ops {

namespace {

using glob::Compiled;
using glob::State;
using glob::Stepper;

// open_child adds O_NOFOLLOW|O_CLOEXEC. O_NONBLOCK: O_DIRECTORY already refuses a FIFO before it
// could block; this keeps that true even if a flag is ever dropped.
constexpr int kListFlags = O_RDONLY | O_DIRECTORY | O_NONBLOCK;

// Effect's two error policies. "Missing" (NotFound, BadResource) is skipped everywhere; a denied
// directory is skipped only where a wildcard reached it. A link met where a directory was typed a
// moment ago (a race) contributes nothing, as a link does.
bool missing(const Error& e) {
  return (e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR || e.err == EISDIR)) ||
         e.refusal == Refusal::Symlink ||
         (e.refusal == Refusal::Escape && !e.mount && !e.moved);  // left mid-lookup
}
bool skippable(const Error& e, bool named) {
  if (missing(e)) return true;
  return !named && e.refusal == Refusal::None && (e.err == EACCES || e.err == EPERM);
}

bool has_wildcard(const Compiled& c, const std::vector<State>& states) {
  for (State s : states) {
    glob::NodeKind k = c.nodes[s].kind;
    if (k == glob::NodeKind::Globstar || k == glob::NodeKind::Wildcard) return true;
  }
  return false;
}

struct Entry {
  std::uint32_t name_off, name_len;
  std::uint32_t states_off, states_len;
  std::uint32_t excluded_off, excluded_len;
  bool accepted;
  bool descend;
};

// Buffers a frame keeps for the next directory at its depth; a larger one is given back when the
// frame is reused, so one huge directory met once does not stay allocated for the rest of the walk.
constexpr std::size_t kKeptFrameBytes = std::size_t{64} << 10;

template <class Buffer>
void clear_keeping_small(Buffer& b, std::size_t element) {
  if (b.capacity() * element > kKeptFrameBytes) {
    Buffer().swap(b);
  } else {
    b.clear();
  }
}

// One directory on the depth-first stack, at most kMaxTreeDepth + 1 of them. Frames are reused by
// depth, so their buffers keep their capacity and the walk allocates per directory at most, never
// per entry (the names it reports aside). A frame's path is no copy of its own: it is the first
// `relative_len` bytes of the walker's one path buffer, which holds the path of the frame being
// read and grows and shrinks with the stack.
struct Frame {
  Held dir;                 // the handle this frame opened, if it opened one
  bool dir_unread = false;  // `dir` was opened for reading and is still at its start
  // Which handle this directory is: a frame index (>= 0), or an ancestor of the glob root (-k is
  // k levels above it). "." and ".." segments reuse handles instead of opening by name.
  int phys = 0;
  int phys_parent = -1;
  bool named = false;  // reached from the glob root through literal segments only
  bool listed = false;
  std::size_t relative_len = 0;
  std::vector<State> states, excluded;
  std::string names;         // entry names, end to end
  std::vector<State> arena;  // entry states, end to end
  std::vector<Entry> entries;
  std::size_t next = 0;
  std::size_t charged = 0;  // of the walker's held_: what this frame's buffers hold now

  void reset() {
    dir.reset();
    dir_unread = false;
    relative_len = 0;
    clear_keeping_small(states, sizeof(State));
    clear_keeping_small(excluded, sizeof(State));
    clear_keeping_small(names, 1);
    clear_keeping_small(arena, sizeof(State));
    clear_keeping_small(entries, sizeof(Entry));
    next = 0;
  }
};

class Walker {
 public:
  Walker(const Root& root, const Compiled& pattern, const Compiled& exclude, LexedPath to,
         bool unnamed)
      : root_(root),
        pattern_(pattern),
        exclude_(exclude),
        to_(std::move(to)),
        to_shown_(to_.joined()),
        step_(pattern),
        step_excluded_(exclude),
        exclude_needs_directory_(glob::any_directory_only(exclude)),
        unnamed_(unnamed) {}

  Result<Value> run();

 private:
  std::string shown(std::string_view relative) const {
    if (to_shown_.empty()) return std::string(relative);
    if (relative.empty()) return to_shown_;
    return to_shown_ + "/" + std::string(relative);
  }
  // The frame's path below the glob root: a prefix of the one path buffer.
  std::string_view relative(const Frame& f) const {
    return std::string_view(path_).substr(0, f.relative_len);
  }
  // The shown path of `name` in frame `f`.
  std::string shown_in(const Frame& f, std::string_view name) const {
    std::string rel(relative(f));
    if (!rel.empty()) rel.push_back('/');
    rel.append(name);
    return shown(rel);
  }
  // Takes `bytes` more of what all frames may hold together (kMaxListingBytes): the stack's
  // entries, names and match states, each directory's sized by the disk, the depth by the pattern.
  bool charge(Frame& f, std::size_t bytes) {
    if (held_ + bytes > kMaxListingBytes) return false;
    held_ += bytes;
    f.charged += bytes;
    return true;
  }
  void uncharge(Frame& f) {
    held_ -= f.charged;
    f.charged = 0;
  }
  int parent_ref(int ref) const {
    return ref >= 0 ? frames_[static_cast<std::size_t>(ref)].phys_parent : ref - 1;
  }
  Result<Held*> handle(int ref);
  Status enter(std::size_t index);
  // enter's steps: list the directory (a wildcard, or the walk's own start, needs its names), then
  // probe the literals a listing did not cover.
  Status list(std::size_t index);
  Status probe_literals(std::size_t index);
  Status probe_and_visit(std::size_t index, std::string_view name);
  Status visit(Frame& f, std::string_view name, EntryKind kind, int dirfd);
  Status note_unnamed(const Frame& f, std::string_view name, EntryKind kind, int dirfd);
  Status descend(std::size_t parent, const Entry& e, bool* entered);
  // A handle that failed its proof. Below the glob root and moved or replaced within the pinned
  // root: a concurrent change whose subtree is not read (as a directory that vanished). Out of the
  // root, or the glob root itself (or above it): the refusal.
  static Status departed(int ref, Status s) {
    if (s.ok() || !s.error().moved || ref <= 0 || s.error().refusal == Refusal::Escape) return s;
    return ok_status();
  }

  const Root& root_;
  const Compiled& pattern_;
  const Compiled& exclude_;
  LexedPath to_;
  std::string to_shown_;
  Stepper step_, step_excluded_;
  bool exclude_needs_directory_;
  bool unnamed_;
  std::vector<Frame> frames_;
  std::deque<Held> ancestors_;  // [k-1]: k levels above the glob root, opened on demand
  std::vector<char> buffer_;    // getdents buffer, one for the whole walk
  std::vector<State> next_, next_excluded_;
  std::vector<std::string> out_;
  std::size_t out_bytes_ = 0;  // of out_, counted as kMaxListingBytes counts them
  std::string path_;           // the path below the glob root of the frame being read
  std::size_t held_ = 0;       // what the frames' buffers hold, counted as kMaxListingBytes counts
};

Result<Held*> Walker::handle(int ref) {
  if (ref >= 0) return &frames_[static_cast<std::size_t>(ref)].dir;
  std::size_t up = static_cast<std::size_t>(-ref);
  if (up > to_.parts.size()) {
    return refusal(Refusal::Escape, "glob", to_shown_, "glob pattern climbs above the root", EXDEV);
  }
  if (ancestors_.size() < up) ancestors_.resize(up);
  Held& a = ancestors_[up - 1];
  if (!a.valid()) {
    auto d = open_dirs(root_, to_, to_.parts.size() - up);
    if (!d.ok()) return d.take_error();
    a = d.take();
    a.spend();  // kept for later listings and probes, not used at once
  }
  return &a;
}

Status Walker::visit(Frame& f, std::string_view name, EntryKind kind, int dirfd) {
  step_.step(f.states.data(), f.states.size(), name, next_);
  if (next_.empty()) return ok_status();
  step_excluded_.step(f.excluded.data(), f.excluded.size(), name, next_excluded_);
  bool more = glob::can_descend(pattern_, next_.data(), next_.size());
  bool is_directory = false;
  if (more || glob::needs_directory(pattern_, next_.data(), next_.size()) ||
      exclude_needs_directory_) {
    if (kind == EntryKind::Unknown) {
      struct stat st;
      std::string n(name);
      if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0) {
        kind = entry_kind_of_mode(st.st_mode);
      } else {
        Error e = sys_error(errno, "fstatat", shown_in(f, n));
        if (!skippable(e, false)) return e;
      }
    }
    is_directory = kind == EntryKind::Directory;
  }
  bool accepted = glob::accepts(pattern_, next_.data(), next_.size(), is_directory);
  if ((!accepted && (!is_directory || !more)) ||
      glob::accepts(exclude_, next_excluded_.data(), next_excluded_.size(), is_directory)) {
    return ok_status();  // neither reported nor read: an excluded directory is never opened
  }
  Entry e;
  e.name_off = static_cast<std::uint32_t>(f.names.size());
  e.name_len = static_cast<std::uint32_t>(name.size());
  // One directory's entries, their names and match states, are sized by the disk, and the stack of
  // directories by the pattern and the tree: all of them together are bounded.
  if (!charge(f, name.size() + kNameOverhead +
                     sizeof(State) * (next_.size() + next_excluded_.size()))) {
    return too_many_names(shown(relative(f)));
  }
  // The frame's buffers grow with the directory: checked, as every buffer the disk sizes is.
  if (!room_for_more(f.names, name.size()) || !room_for_one(f.entries) ||
      !room_for_more(f.arena, next_.size() + next_excluded_.size())) {
    return out_of_memory(f.names.size() + f.arena.size() * sizeof(State), "glob",
                         shown(relative(f)));
  }
  f.names.append(name);
  e.states_off = static_cast<std::uint32_t>(f.arena.size());
  e.states_len = static_cast<std::uint32_t>(next_.size());
  f.arena.insert(f.arena.end(), next_.begin(), next_.end());
  e.excluded_off = static_cast<std::uint32_t>(f.arena.size());
  e.excluded_len = static_cast<std::uint32_t>(next_excluded_.size());
  f.arena.insert(f.arena.end(), next_excluded_.begin(), next_excluded_.end());
  e.accepted = accepted;
  e.descend = is_directory && more;
  f.entries.push_back(e);
  return ok_status();
}

// A name that is not UTF-8 (see the top of the file): answered, never entered.
Status Walker::note_unnamed(const Frame& f, std::string_view name, EntryKind kind, int dirfd) {
  step_.step(f.states.data(), f.states.size(), name, next_);
  if (next_.empty()) return ok_status();
  step_excluded_.step(f.excluded.data(), f.excluded.size(), name, next_excluded_);
  if (kind == EntryKind::Unknown) {
    struct stat st;
    std::string n(name);
    if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      Error e = sys_error(errno, "fstatat", shown_in(f, n));
      return skippable(e, false) ? ok_status() : Status(std::move(e));
    }
    kind = entry_kind_of_mode(st.st_mode);
  }
  bool is_directory = kind == EntryKind::Directory;
  bool enters = is_directory && glob::can_descend(pattern_, next_.data(), next_.size());
  if ((!enters && !glob::accepts(pattern_, next_.data(), next_.size(), is_directory)) ||
      glob::accepts(exclude_, next_excluded_.data(), next_excluded_.size(), is_directory)) {
    return ok_status();
  }
  std::string_view rel = relative(f);
  std::size_t bytes = rel.size() + (rel.empty() ? 0 : 1) + name.size();
  out_bytes_ += 2 + 2 * bytes + kNameOverhead;
  if (out_bytes_ > kMaxListingBytes) return too_many_names(shown(rel));
  if (!room_for_one(out_)) {
    return out_of_memory(out_.capacity() * 2 * sizeof(std::string), "glob", shown(rel));
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string entry;
  entry.reserve(2 + 2 * bytes);
  entry.push_back('\0');
  entry.push_back(is_directory ? 'd' : 'e');
  auto hex = [&entry](unsigned char c) {
    entry.push_back(kHex[c >> 4]);
    entry.push_back(kHex[c & 15]);
  };
  for (char c : rel) hex(static_cast<unsigned char>(c));
  if (!rel.empty()) hex('/');
  for (char c : name) hex(static_cast<unsigned char>(c));
  out_.push_back(std::move(entry));
  return ok_status();
}

// A literal probed by name rather than found in a listing: the literals of a directory reached
// through literals only (its parent need not be readable, as in Effect), and "." and "..", which
// no listing holds.
Status Walker::probe_and_visit(std::size_t index, std::string_view name) {
  Frame& f = frames_[index];
  if (name == "." || name == "..") {
    auto fd = handle(f.phys);
    if (!fd.ok()) return fd.take_error();
    return visit(f, name, EntryKind::Directory, fd.value()->look());
  }
  if (name.find('/') != std::string_view::npos || name.size() > kNameMax) return ok_status();
  auto fd = handle(f.phys);
  if (!fd.ok()) return fd.take_error();
  int dirfd = fd.value()->look();
  std::string n(name);
  struct stat st;
  if (::fstatat(dirfd, n.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    Error e = sys_error(errno, "fstatat", shown_in(f, n));
    return skippable(e, f.named) ? ok_status() : Status(std::move(e));
  }
  return visit(f, name, entry_kind_of_mode(st.st_mode), dirfd);
}

Status Walker::list(std::size_t index) {
  Frame& f = frames_[index];
  Fd fresh;
  int fd = -1;
  // The handle whose directory is listed: this frame's own, or the one another frame holds
  // (".", "..", an ancestor). It is proven beneath the root before the listing and again
  // before each later batch.
  auto owner = handle(f.phys);
  if (!owner.ok()) return owner.take_error();
  Held* held = owner.value();
  std::string here = shown(relative(f));
  auto listable = held->prove(root_, "getdents64", here);
  if (!listable.ok()) return departed(f.phys, listable.take_error());
  if (f.dir_unread) {
    fd = listable.value().fd();  // a frame left unread is its own handle (phys is its index)
    f.dir_unread = false;
  } else {
    // Another frame's handle, or an O_PATH one: list a fresh open description of it, never a
    // shared offset.
    auto opened = open_child(root_, listable.value().fd(), ".", kListFlags, 0, here);
    if (!opened.ok()) {
      if (!skippable(opened.error(), f.named)) return opened.take_error();
    } else {
      fresh = opened.take();
      fd = fresh.get();
    }
  }
  if (fd >= 0) {
    DirectoryReader reader(fd, buffer_);
    std::string_view name;
    unsigned char type = DT_UNKNOWN;
    std::size_t proven = 1;
    while (reader.next(&name, &type)) {
      if (reader.batches() > proven) {
        proven = reader.batches();
        auto still = held->beneath(root_, "getdents64", here);
        if (!still.ok()) {
          frames_[index].entries.clear();
          uncharge(frames_[index]);
          return departed(f.phys, still);
        }
      }
      if (!glob::valid_utf8(name)) {
        if (!unnamed_) continue;
        auto u = note_unnamed(frames_[index], name, entry_kind(type), fd);
        if (!u.ok()) return u;
        continue;
      }
      auto v = visit(frames_[index], name, entry_kind(type), fd);
      if (!v.ok()) return v;
    }
    if (reader.error() != 0) {
      Error e = sys_error(reader.error(), "getdents64", here);
      if (!skippable(e, f.named)) return e;
      // Effect sees a listing fail whole: nothing read from it counts.
      f.entries.clear();
      f.names.clear();
      f.arena.clear();
      uncharge(f);
    }
  }
  return ok_status();
}

Status Walker::probe_literals(std::size_t index) {
  Frame& f = frames_[index];
  // Probed literals: all of them where the directory is not listed, else only "." and "..".
  for (std::size_t i = 0; i < f.states.size(); ++i) {
    const glob::Node& node = pattern_.nodes[f.states[i]];
    if (node.kind != glob::NodeKind::Literal) continue;
    std::string_view lit = pattern_.literal(node);
    if (f.listed && lit != "." && lit != "..") continue;
    bool seen = false;
    for (std::size_t j = 0; j < i && !seen; ++j) {
      const glob::Node& other = pattern_.nodes[f.states[j]];
      seen = other.kind == glob::NodeKind::Literal && pattern_.literal(other) == lit;
    }
    if (seen) continue;
    auto v = probe_and_visit(index, lit);
    if (!v.ok()) return v;
  }
  return ok_status();
}

Status Walker::enter(std::size_t index) {
  Frame& f = frames_[index];
  f.listed = !f.named || has_wildcard(pattern_, f.states);
  if (f.listed) {
    auto listed = list(index);
    if (!listed.ok()) return listed;
  }
  auto probed = probe_literals(index);
  if (!probed.ok()) return probed;
  const std::string& names = f.names;
  std::sort(f.entries.begin(), f.entries.end(), [&names](const Entry& a, const Entry& b) {
    return glob::utf16_less(std::string_view(names).substr(a.name_off, a.name_len),
                            std::string_view(names).substr(b.name_off, b.name_len));
  });
  return ok_status();
}

// Opens the directory of `e` (a child of frames_[parent], whose path path_ holds) into the next
// frame and reads it. Every frame is a level, "." and ".." segments included: each holds buffers,
// and each one reached through a name holds a descriptor, so the stack is bounded as every other
// walk is (kMaxTreeDepth levels below the glob root), whatever the pattern or the tree.
Status Walker::descend(std::size_t parent, const Entry& e, bool* entered) {
  *entered = false;
  std::size_t index = parent + 1;
  if (index > kMaxTreeDepth) {
    return refusal(Refusal::TooLarge, "glob", shown(path_),
                   "glob goes deeper than the limit of " + std::to_string(kMaxTreeDepth) +
                       " levels below its root (directories, and '.' and '..' segments, each "
                       "count as one)",
                   ENAMETOOLONG);
  }
  if (frames_.size() <= index) frames_.emplace_back();
  Frame& f = frames_[parent];
  Frame& c = frames_[index];
  uncharge(c);
  c.reset();
  c.relative_len = path_.size();
  if (!charge(c, sizeof(State) * (e.states_len + e.excluded_len))) {
    return too_many_names(shown(path_));
  }
  c.states.assign(f.arena.begin() + e.states_off, f.arena.begin() + e.states_off + e.states_len);
  c.excluded.assign(f.arena.begin() + e.excluded_off,
                    f.arena.begin() + e.excluded_off + e.excluded_len);
  c.named = f.named && !f.listed;
  std::string_view name = std::string_view(f.names).substr(e.name_off, e.name_len);
  if (name == ".") {
    c.phys = f.phys;
    c.phys_parent = f.phys_parent;
  } else if (name == "..") {
    c.phys = f.phys_parent;
    c.phys_parent = parent_ref(f.phys_parent);
    auto h = handle(c.phys);  // an escape is refused here, before anything is read
    if (!h.ok()) return h.take_error();
  } else {
    auto h = handle(f.phys);
    if (!h.ok()) return h.take_error();
    bool will_list = !c.named || has_wildcard(pattern_, c.states);
    auto opened = pinnedfs::descend(root_, *h.value(), std::string(name),
                                    will_list ? kListFlags : kDirHandleFlags, shown(path_));
    if (!opened.ok()) {
      // The parent has left its path: nothing more of it is read.
      if (opened.error().moved) return departed(f.phys, opened.take_error());
      // A mount point matches as a name and is never entered, as a link.
      if (opened.error().mount) return ok_status();
      return skippable(opened.error(), c.named) ? ok_status() : Status(opened.take_error());
    }
    c.dir = opened.take();
    if (!will_list) c.dir.spend();  // a path to probe through later, not a listing now
    c.dir_unread = will_list;
    c.phys = static_cast<int>(index);
    c.phys_parent = f.phys;
  }
  auto r = enter(index);
  if (!r.ok()) return r;
  *entered = true;
  return ok_status();
}

Result<Value> Walker::run() {
  if (pattern_.matches_nothing()) return Value(Names{});
  frames_.emplace_back();
  Frame& top = frames_[0];
  top.named = true;
  top.phys = 0;
  top.phys_parent = -1;
  top.states = pattern_.initial;
  top.excluded = exclude_.initial;
  bool will_list = has_wildcard(pattern_, top.states);
  if (!will_list && to_.is_root()) {
    top.dir = Held::root(root_);
  } else {
    auto opened = hold_beneath(root_, to_, will_list ? kListFlags : kDirHandleFlags);
    if (!opened.ok()) {
      // A missing glob root is an empty result; a link there is not "missing": it is refused.
      const Error& e = opened.error();
      if (e.refusal == Refusal::None && (e.err == ENOENT || e.err == ENOTDIR)) {
        return Value(Names{});
      }
      return opened.take_error();
    }
    top.dir = opened.take();
    if (!will_list) top.dir.spend();
    top.dir_unread = will_list;
  }
  auto first = enter(0);
  if (!first.ok()) return first.take_error();
  std::size_t depth = 1;
  while (depth > 0) {
    std::size_t index = depth - 1;
    if (frames_[index].next == frames_[index].entries.size()) {
      // Done with this directory: its descriptor and its buffers go now, not when the frame is
      // next reused.
      uncharge(frames_[index]);
      frames_[index].reset();
      --depth;
      continue;
    }
    Frame& f = frames_[index];
    Entry e = f.entries[f.next++];
    std::string_view name = std::string_view(f.names).substr(e.name_off, e.name_len);
    path_.resize(f.relative_len);
    if (!path_.empty()) path_.push_back('/');
    path_.append(name);
    if (e.accepted) {
      out_bytes_ += path_.size() + kNameOverhead;
      if (out_bytes_ > kMaxListingBytes) return too_many_names(shown(relative(f)));
      if (!room_for_one(out_)) {
        return out_of_memory(out_.capacity() * 2 * sizeof(std::string), "glob", shown(path_));
      }
      out_.push_back(path_);
    }
    if (!e.descend) continue;
    bool entered = false;
    auto d = descend(index, e, &entered);
    if (!d.ok()) return d.take_error();
    if (entered) ++depth;
  }
  return Value(Names{std::move(out_)});
}

bool has_nul(const std::string& s) {
  return s.find('\0') != std::string::npos;
}

}  // namespace

Result<Value> glob(const Root& root, const Request& request) {
  if (has_nul(request.pattern)) return bad_argument("glob pattern contains a NUL byte");
  std::size_t text = request.pattern.size();
  for (const std::string& e : request.exclude) text += e.size();
  if (text > kMaxPatternBytes) {
    return bad_argument("glob pattern and excludes exceed " + std::to_string(kMaxPatternBytes) +
                        " bytes");
  }
  for (const std::string& e : request.exclude) {
    if (has_nul(e)) return bad_argument("glob exclude pattern contains a NUL byte");
  }
  auto to = lex_path(request.to);
  if (!to.ok()) return to.take_error();
  Compiled pattern = glob::compile({request.pattern}, request.dot);
  // Effect matches exclude patterns with `dot` on: an exclude names what it names.
  Compiled exclude = glob::compile(request.exclude, true);
  if (pattern.matches_nothing()) return Value(Names{});
  if (pattern.absolute) {
    return bad_argument("absolute glob patterns must be made relative to the root first",
                        request.pattern);
  }
  // ".." segments in the glob root resolve physically (prepare_path); then the pattern's own
  // climb, known from its segments alone, must stay beneath the pinned root.
  auto prepared = prepare_path(root, request.to);
  if (!prepared.ok()) return prepared.take_error();
  LexedPath base = prepared.take();
  if (static_cast<long>(base.parts.size()) + pattern.min_depth < 0) {
    return refusal(Refusal::Escape, "glob", request.pattern,
                   "glob pattern climbs above the root with '..'", EXDEV);
  }
  base.must_be_dir = false;
  Walker walker(root, pattern, exclude, std::move(base), request.unnamed);
  return walker.run();
}

}  // namespace pinnedfs::ops
