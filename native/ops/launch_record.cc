// Launch records: what a confined launch made, kept where a launch killed with SIGKILL cannot take
// it with it, so the next launch (or `pinnedfs run --cleanup`) removes what the dead one left.
//
// The runtime directory is this user's alone: made 0700 when missing, refused when it is a link
// (never followed), when another user owns it, or when anyone else may enter it. Each launch
// writes one record there, `<32 hex>.launch`, made under a temporary name, locked LOCK_EX and only
// then given its name, so no sweep ever sees an unlocked record that is still being born. The lock
// lasts as long as the launch's descriptor: the kernel drops it when the process dies, which is
// how a sweep tells a dead launch's record (it can take the lock) from a live one's (it cannot).
//
// A record is append-only text, one line per fact, paths in lowercase hex so any byte survives:
//   pinnedfs-record 1 <pid> <start>   the header
//   A <i> <path> <dev>:<ino>          anchor i, pinned by its canonical path
//   I <i> <rel> <ns>                  a directory about to be made (CLOCK_REALTIME nanoseconds)
//   M <i> <rel> <dev>:<ino> <kind>    a directory made (kind rmdir, or purge: the temp root)
//   S <pid> <start>                   the sandbox started (pid 1 of its namespace)
//   D <path> <rel>                    done: removed, or no longer the launch's to remove
// An intent with no made line is a directory the launch may have made just before it died: removed
// only when the file system says it was born after the intent (statx btime) and it is empty.
//
// The sweep of a dead record: its sandbox, if it still runs (it may, when the supervisor died
// before the sandbox's own death signal was armed), is killed first, by a pidfd checked against
// the recorded start time; then every directory made is removed child before parent through its
// pinned anchor with the identity recorded, a leased one kept (another live launch relies on it),
// the temporary root purged; done lines are appended, and the record removed once nothing stays.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#if defined(__linux__)
#include <sys/sysmacros.h>
#endif
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "../core/eintr.h"
#include "../core/resolve.h"
#include "../platform/platform.h"
#include "confine.h"
#include "ops.h"

namespace pinnedfs::confine {

namespace {

#if defined(O_PATH)
constexpr int kParentFlags = O_PATH | O_DIRECTORY | O_CLOEXEC;
#else
constexpr int kParentFlags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
#endif
constexpr std::size_t kMaxRecordBytes = 4u << 20;
constexpr std::size_t kMaxRecords = 4096;
constexpr std::uint64_t kFreshSeconds = 60;
const char* const kRecordSuffix = ".launch";
const char* const kNewPrefix = ".new-";

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(digits[c >> 4]);
    out.push_back(digits[c & 15]);
  }
  return out;
}

int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

bool unhex(std::string_view text, std::string* out) {
  if (text.size() % 2 != 0) return false;
  out->clear();
  for (std::size_t i = 0; i < text.size(); i += 2) {
    int hi = nibble(text[i]);
    int lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi << 4 | lo));
  }
  return true;
}

bool all_hex(std::string_view text, std::size_t n) {
  if (text.size() != n) return false;
  for (char c : text)
    if (nibble(c) < 0) return false;
  return true;
}

bool is_record_name(const std::string& name) {
  std::size_t n = std::strlen(kRecordSuffix);
  return name.size() == 32 + n && name.compare(32, n, kRecordSuffix) == 0 &&
         all_hex(std::string_view(name).substr(0, 32), 32);
}

bool number(std::string_view text, std::uint64_t* out) {
  if (text.empty() || text.size() > 20) return false;
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  *out = v;
  return true;
}

bool identity_text(std::string_view text, Identity* out) {
  std::size_t colon = text.find(':');
  return colon != std::string_view::npos && number(text.substr(0, colon), &out->dev) &&
         number(text.substr(colon + 1), &out->ino);
}

std::vector<std::string_view> fields(std::string_view line) {
  std::vector<std::string_view> out;
  std::size_t at = 0;
  while (at <= line.size()) {
    std::size_t space = line.find(' ', at);
    if (space == std::string_view::npos) space = line.size();
    out.push_back(line.substr(at, space - at));
    at = space + 1;
  }
  return out;
}

std::uint64_t now_ns() {
  struct timespec ts;
  ::clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

Status write_all(int fd, const std::string& text, const char* what) {
  const char* p = text.data();
  std::size_t left = text.size();
  while (left > 0) {
    ssize_t n = retry_eintr([&] { return ::write(fd, p, left); });
    if (n <= 0) return sys_error(n < 0 ? errno : EIO, what);
    p += n;
    left -= static_cast<std::size_t>(n);
  }
  return ok_status();
}

// ---- one dead record ----------------------------------------------------------------------------

struct Made {
  std::uint32_t anchor = 0;
  std::string rel;
  Identity identity;
  bool purge = false;
  bool known = true;         // false: an intent only, identity unknown
  std::uint64_t intent = 0;  // when it was announced (0: no intent line for it)
};

struct Parsed {
  std::map<std::uint32_t, std::pair<std::string, Identity>> anchors;
  std::vector<Made> made;  // in the order made, intents with no made line appended
  std::set<std::pair<std::string, std::string>> done;
  std::vector<std::pair<int, std::uint64_t>> sandboxes;
};

bool parse(const std::string& text, Parsed* out) {
  std::vector<Made> intents;
  // Each made line's places in out->made, by anchor and path: an intent finds its made lines in
  // one lookup, not a pass over every made line (a record holds up to kMaxRecordBytes of them).
  std::map<std::pair<std::uint32_t, std::string>, std::vector<std::size_t>> recorded;
  std::size_t at = 0;
  bool header = false;
  while (at < text.size()) {
    std::size_t end = text.find('\n', at);
    if (end == std::string::npos) break;  // a line cut short by the death: ignored
    std::vector<std::string_view> f = fields(std::string_view(text).substr(at, end - at));
    at = end + 1;
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::string s;
    if (!header) {
      if (f.size() != 4 || f[0] != "pinnedfs-record" || f[1] != "1") return false;
      header = true;
    } else if (f[0] == "A" && f.size() == 4 && number(f[1], &a) && unhex(f[2], &s) &&
               a < kMaxAnchors) {
      Identity id;
      if (!identity_text(f[3], &id)) return false;
      out->anchors[static_cast<std::uint32_t>(a)] = {s, id};
    } else if (f[0] == "I" && f.size() == 4 && number(f[1], &a) && unhex(f[2], &s) &&
               number(f[3], &b)) {
      Made m;
      m.anchor = static_cast<std::uint32_t>(a);
      m.rel = s;
      m.known = false;
      m.intent = b;
      intents.push_back(std::move(m));
    } else if (f[0] == "M" && f.size() == 5 && number(f[1], &a) && unhex(f[2], &s)) {
      Made m;
      m.anchor = static_cast<std::uint32_t>(a);
      m.rel = s;
      if (!identity_text(f[3], &m.identity) || (f[4] != "rmdir" && f[4] != "purge")) return false;
      m.purge = f[4] == "purge";
      recorded[{m.anchor, m.rel}].push_back(out->made.size());
      out->made.push_back(std::move(m));
    } else if (f[0] == "S" && f.size() == 3 && number(f[1], &a) && number(f[2], &b) && a > 0 &&
               a < (1u << 30)) {
      out->sandboxes.push_back({static_cast<int>(a), b});
    } else if (f[0] == "D" && f.size() == 3) {
      std::string rel;
      if (!unhex(f[1], &s) || !unhex(f[2], &rel)) return false;
      out->done.insert({s, rel});
    } else {
      return false;
    }
  }
  if (!header) return false;
  for (Made& m : intents) {
    auto made = recorded.find({m.anchor, m.rel});
    if (made == recorded.end()) {
      out->made.push_back(std::move(m));
      continue;
    }
    // A made line's intent: when the directory was about to be made, which its birth must follow.
    for (std::size_t i : made->second) out->made[i].intent = m.intent;
  }
  return true;
}

// Kills a dead launch's sandbox that still runs; false when it could not be made to stop.
bool stop_sandbox(int pid, std::uint64_t start) {
  if (process_start(pid) != start) return true;  // gone (or the pid is another process now)
#if defined(__linux__) && defined(SYS_pidfd_open)
  constexpr int kKillWaitMs = 5000;
  int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
  if (pidfd >= 0) {
    Fd owned(pidfd);
    // Checked after the pidfd is open: the pidfd names this process whatever the pid becomes.
    if (process_start(pid) != start) return true;
    if (::syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, nullptr, 0) != 0 && errno != ESRCH)
      return false;
    struct pollfd p = {pidfd, POLLIN, 0};
    return retry_eintr([&] { return ::poll(&p, 1, kKillWaitMs); }) == 1;
  }
#endif
  if (::kill(pid, SIGKILL) != 0 && errno != ESRCH) return false;
  return true;
}

bool temp_root_name(const std::string& rel) {
  const std::string prefix = "pinnedfs-confine-";
  return rel.size() == prefix.size() + 16 && rel.compare(0, prefix.size(), prefix) == 0 &&
         all_hex(std::string_view(rel).substr(prefix.size()), 16);
}

std::string joined(const std::string& anchor, const std::string& rel) {
  if (rel.empty()) return anchor;
  return anchor == "/" ? "/" + rel : anchor + "/" + rel;
}

// Stays: worth another sweep (a live launch relies on it, or on something inside it).
enum class Fate : unsigned char { Done, Stays };

// The birth time of `rel` beneath `root`, when the file system keeps one (0 otherwise), and its
// identity; false when it is gone.
bool born(const Root& root, const std::string& rel, std::uint64_t* ns, Identity* id, bool* dir) {
  auto lexed = lex_path(rel);
  if (!lexed.ok() || lexed.value().is_root()) return false;
  auto parent = open_parent(root, lexed.value());
  if (!parent.ok()) return false;
  *ns = 0;
#if defined(__linux__) && defined(STATX_BTIME)
  struct statx sx;
  if (::statx(parent.value().dir.look(), parent.value().leaf.c_str(), AT_SYMLINK_NOFOLLOW,
              STATX_TYPE | STATX_INO | STATX_BTIME, &sx) != 0) {
    return false;
  }
  if (sx.stx_mask & STATX_BTIME) {
    *ns = static_cast<std::uint64_t>(sx.stx_btime.tv_sec) * 1000000000u + sx.stx_btime.tv_nsec;
  }
  id->dev = static_cast<std::uint64_t>(::makedev(sx.stx_dev_major, sx.stx_dev_minor));
  id->ino = sx.stx_ino;
  *dir = S_ISDIR(sx.stx_mode);
  return true;
#else
  struct stat st;
  if (::fstatat(parent.value().dir.look(), parent.value().leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) !=
      0)
    return false;
  *id = identity_of(st);
  *dir = S_ISDIR(st.st_mode);
  return true;
#endif
}

bool under(const std::string& path, const std::string& dir) {
  return path.size() > dir.size() && path.compare(0, dir.size(), dir) == 0 &&
         path[dir.size()] == '/';
}

Fate remove_made(const Root& root, const std::string& anchor, const Made& m,
                 const std::vector<std::string>& staying, std::vector<Swept>& items) {
  std::string shown = joined(anchor, m.rel);
  Identity identity = m.identity;
  if (!m.known) {
    std::uint64_t ns = 0;
    bool dir = false;
    if (!born(root, m.rel, &ns, &identity, &dir) || !dir) return Fate::Done;
    if (ns == 0) {
      items.push_back({shown, SweptStatus::Kept,
                       "a killed launch may have made it, but this file system keeps no birth time "
                       "to tell: left in place"});
      return Fate::Done;
    }
    if (ns < m.intent) return Fate::Done;  // it was there before the launch meant to make it
    // The launch makes a directory right after announcing it: one born long after is someone
    // else's (the user's, or another launch's made since), not the dead launch's to take back.
    if (ns - m.intent > kFreshSeconds * 1000000000u) {
      items.push_back({shown, SweptStatus::Kept,
                       "born long after the killed launch announced it: not that launch's, left in "
                       "place"});
      return Fate::Done;
    }
  }
  if (m.known && m.intent != 0) {
    // dev:ino is all a made line records, and a freed inode number goes to the next directory
    // made: one born long after the launch announced it got the number of the directory the
    // launch made, and is someone else's.
    std::uint64_t ns = 0;
    bool dir = false;
    Identity now;
    if (!born(root, m.rel, &ns, &now, &dir)) return Fate::Done;
    if (ns != 0 && ns > m.intent && ns - m.intent > kFreshSeconds * 1000000000u) {
      items.push_back({shown, SweptStatus::Kept,
                       "born long after the killed launch made its directory there: another "
                       "directory with a reused number, left in place"});
      return Fate::Done;
    }
  }
  if (m.purge) {
    if (!temp_root_name(m.rel)) {
      items.push_back(
          {shown, SweptStatus::Refused, "not a private temporary root's name: never purged"});
      return Fate::Done;
    }
    Status purged = purge(root, m.rel, identity);
    if (purged.ok()) {
      items.push_back({shown, SweptStatus::Removed, ""});
      return Fate::Done;
    }
    if (purged.error().err == ENOENT) return Fate::Done;
    items.push_back({shown, SweptStatus::Refused,
                     purged.error().description.empty() ? errno_name(purged.error().err)
                                                        : purged.error().description});
    return purged.error().refusal == Refusal::IdentityChanged ? Fate::Done : Fate::Stays;
  }
  Request r;
  r.op = Op::Rmdirs;
  r.owned = {OwnedDir{m.rel, identity, true, true}};
  auto removed = ops::rmdirs(root, r);
  if (!removed.ok()) {
    items.push_back({shown, SweptStatus::Refused, removed.error().description});
    return Fate::Done;
  }
  const RmdirsOutcome& out = std::get<RmdirsOutcome>(removed.value());
  if (out.members.empty()) return Fate::Done;
  const RmdirMember& member = out.members[0];
  switch (member.status) {
    case RmdirStatus::Removed:
      items.push_back({shown, SweptStatus::Removed, ""});
      return Fate::Done;
    case RmdirStatus::Missing:
      return Fate::Done;
    case RmdirStatus::Kept:
      if (member.error.err == EBUSY) {
        items.push_back(
            {shown, SweptStatus::Kept, "in use by a live launch: removed when it is done"});
        return Fate::Stays;
      }
      for (const std::string& s : staying) {
        if (under(s, m.rel)) return Fate::Stays;  // it empties when what stays inside it goes
      }
      items.push_back({shown, SweptStatus::Kept, "not empty: left in place"});
      return Fate::Done;
    case RmdirStatus::Refused:
      break;
  }
  items.push_back(
      {shown, SweptStatus::Refused,
       member.error.description.empty() ? errno_name(member.error.err) : member.error.description});
  return Fate::Done;
}

// Sweeps one dead record held locked at `fd`; true when nothing of it stays.
bool sweep_record(int fd, const std::string& text, Strategy strategy, std::vector<Swept>& items) {
  Parsed p;
  if (!parse(text, &p)) {
    items.push_back({"", SweptStatus::Refused,
                     "a launch record that does not parse: left for a person to look at"});
    return false;
  }
  for (const auto& [pid, start] : p.sandboxes) {
    if (!stop_sandbox(pid, start)) {
      items.push_back({"", SweptStatus::Kept,
                       "the sandbox of a killed launch (pid " + std::to_string(pid) +
                           ") does not stop: what it relies on stays"});
      return false;
    }
  }
  std::map<std::uint32_t, std::shared_ptr<Root>> roots;
  std::map<std::uint32_t, std::vector<std::string>> staying;
  bool stays = false;
  std::string done;
  for (auto it = p.made.rbegin(); it != p.made.rend(); ++it) {
    const Made& m = *it;
    auto anchor = p.anchors.find(m.anchor);
    if (anchor == p.anchors.end()) continue;
    const auto& [path, identity] = anchor->second;
    if (p.done.count({path, m.rel})) continue;
    auto root = roots.find(m.anchor);
    if (root == roots.end()) {
      auto pinned = Root::pin(path, strategy);
      std::shared_ptr<Root> r;
      if (pinned.ok() && pinned.value()->identity() == identity) r = pinned.take();
      root = roots.emplace(m.anchor, std::move(r)).first;
    }
    Fate fate = Fate::Done;
    if (root->second == nullptr) {
      items.push_back(
          {joined(path, m.rel), SweptStatus::Refused,
           "its directory '" + path +
               "' is gone or replaced: nothing there is the killed launch's to remove"});
    } else {
      fate = remove_made(*root->second, path, m, staying[m.anchor], items);
    }
    if (fate == Fate::Stays) {
      stays = true;
      staying[m.anchor].push_back(m.rel);
    } else {
      done += "D " + hex(path) + " " + hex(m.rel) + "\n";
      p.done.insert({path, m.rel});
    }
  }
  if (!done.empty()) (void)write_all(fd, done, "write");
  return !stays;
}

}  // namespace

// ---- the runtime directory and a launch's own record --------------------------------------------

Result<Fd> open_runtime(const RuntimePlace& place) {
  if (place.parent.empty() || place.parent[0] != '/' ||
      place.parent.find('\0') != std::string::npos) {
    return bad_argument("the runtime directory's parent must be an absolute path");
  }
  if (place.name.empty() || place.name == "." || place.name == ".." ||
      place.name.find('/') != std::string::npos || place.name.find('\0') != std::string::npos) {
    return bad_argument("the runtime directory's name must be one path component");
  }
  std::string shown = joined(place.parent, place.name);
  int parent = retry_eintr([&] { return ::open(place.parent.c_str(), kParentFlags); });
  if (parent < 0) return sys_error(errno, "open", place.parent);
  Fd up(parent);
  if (retry_eintr([&] { return ::mkdirat(parent, place.name.c_str(), 0700); }) != 0 &&
      errno != EEXIST) {
    return sys_error(errno, "mkdir", shown);
  }
  int fd = retry_eintr([&] {
    return ::openat(parent, place.name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  });
  if (fd < 0) {
    int err = errno;
    struct stat st;
    if (::fstatat(parent, place.name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
        S_ISLNK(st.st_mode)) {
      return refusal(
          Refusal::Symlink, "open", shown,
          "the runtime directory '" + shown + "' is a symbolic link: refused, never followed",
          ELOOP);
    }
    return sys_error(err, "open", shown);
  }
  Fd dir(fd);
  struct stat st;
  if (::fstat(fd, &st) != 0) return sys_error(errno, "fstat", shown);
  if (st.st_uid != ::geteuid()) {
    Error e = sys_error(EACCES, "open", shown);
    e.description = "the runtime directory '" + shown + "' belongs to uid " +
                    std::to_string(st.st_uid) + ", not to this user (" +
                    std::to_string(::geteuid()) + "): refused";
    return e;
  }
  if ((st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    Error e = sys_error(EACCES, "open", shown);
    e.description = "the runtime directory '" + shown + "' has mode " + mode +
                    ": it must be closed to everyone but its owner (0700)";
    return e;
  }
  return dir;
}

Result<Fd> create_record(const RuntimePlace& place, const std::string& name) {
  if (!all_hex(name, 32)) return bad_argument("a launch record's name is 32 lowercase hex digits");
  auto runtime = open_runtime(place);
  if (!runtime.ok()) return runtime.take_error();
  int dir = runtime.value().get();
  std::string fresh = kNewPrefix + name;
  int fd = retry_eintr([&] {
    return ::openat(dir, fresh.c_str(),
                    O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_NOFOLLOW | O_CLOEXEC, 0600);
  });
  if (fd < 0) return sys_error(errno, "open", joined(place.parent, place.name) + "/" + fresh);
  Fd record(fd);
  auto undo = [&](Error e) {
    ::unlinkat(dir, fresh.c_str(), 0);
    return e;
  };
  if (retry_eintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0)
    return undo(sys_error(errno, "flock", fresh));
  int pid = static_cast<int>(::getpid());
  Status header = write_all(
      fd,
      "pinnedfs-record 1 " + std::to_string(pid) + " " + std::to_string(process_start(pid)) + "\n",
      "write");
  if (!header.ok()) return undo(header.take_error());
  std::string final_name = name + kRecordSuffix;
  if (retry_eintr([&] { return ::renameat(dir, fresh.c_str(), dir, final_name.c_str()); }) != 0) {
    return undo(sys_error(errno, "rename", final_name));
  }
  return record;
}

Status record_line(const RecordRef& record, const std::string& line) {
  if (record.fd < 0) return ok_status();
  struct stat st;
  if (::fstat(record.fd, &st) != 0 || identity_of(st) != record.identity) {
    return bad_argument("the launch record's descriptor no longer names the record");
  }
  return write_all(record.fd, line, "write");
}

std::string record_anchor(std::size_t index, const std::string& path, const Identity& identity) {
  return "A " + std::to_string(index) + " " + hex(path) + " " + identity.str() + "\n";
}

std::string record_intent(std::size_t index, const std::string& relative) {
  return "I " + std::to_string(index) + " " + hex(relative) + " " + std::to_string(now_ns()) + "\n";
}

std::string record_made(std::size_t index, const std::string& relative, const Identity& identity,
                        bool purge) {
  return "M " + std::to_string(index) + " " + hex(relative) + " " + identity.str() +
         (purge ? " purge\n" : " rmdir\n");
}

std::string record_done(const std::string& anchor, const std::string& relative) {
  return "D " + hex(anchor) + " " + hex(relative) + "\n";
}

std::string record_sandbox(int pid, std::uint64_t start) {
  return "S " + std::to_string(pid) + " " + std::to_string(start) + "\n";
}

std::uint64_t process_start(int pid) {
  char path[40];
  std::snprintf(path, sizeof path, "/proc/%d/stat", pid);
  int fd = retry_eintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  if (fd < 0) return 0;
  Fd owned(fd);
  char buf[1024];
  ssize_t n = retry_eintr([&] { return ::read(fd, buf, sizeof buf - 1); });
  if (n <= 0) return 0;
  buf[n] = '\0';
  // The command name (field 2) is in parentheses and may hold anything: fields count from the last
  // ')'.
  const char* close = std::strrchr(buf, ')');
  if (close == nullptr) return 0;
  std::vector<std::string_view> f = fields(std::string_view(close + 2));
  // f[0] is field 3 (state); field 22 (starttime) is f[19]. A zombie has exited: no longer running.
  if (f.size() < 20 || f[0] == "Z" || f[0] == "X") return 0;
  std::uint64_t start = 0;
  return number(f[19], &start) ? start : 0;
}

// ---- the sweep
// ------------------------------------------------------------------------------------

Result<SweepResult> sweep(const RuntimePlace& place, const std::string& own, Strategy strategy) {
  auto runtime = open_runtime(place);
  if (!runtime.ok()) return runtime.take_error();
  int dir = runtime.value().get();
  std::vector<std::string> names;
  {
    std::vector<char> buffer(16384);
    DirectoryReader reader(dir, buffer);
    std::string_view name;
    unsigned char type = 0;
    while (names.size() < kMaxRecords && reader.next(&name, &type)) names.emplace_back(name);
    if (reader.error() != 0)
      return sys_error(reader.error(), "getdents64", joined(place.parent, place.name));
  }
  SweepResult out;
  std::string mine = own + kRecordSuffix;
  for (const std::string& name : names) {
    bool fresh = name.compare(0, std::strlen(kNewPrefix), kNewPrefix) == 0;
    if (name == mine || (!fresh && !is_record_name(name))) continue;
    int fd = retry_eintr([&] {
      return ::openat(dir, name.c_str(), O_RDWR | O_APPEND | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    });
    if (fd < 0) continue;
    Fd record(fd);
    struct stat st;
    if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid() ||
        st.st_nlink != 1 || static_cast<std::uint64_t>(st.st_size) > kMaxRecordBytes) {
      out.items.push_back({joined(place.parent, place.name) + "/" + name, SweptStatus::Refused,
                           "not a launch record of this user: left alone"});
      continue;
    }
    // A record is locked an instant after it is made under its temporary name: one that young
    // may not be locked yet, and is left to its maker.
    if (fresh && static_cast<std::uint64_t>(st.st_ctime) + kFreshSeconds > now_ns() / 1000000000u)
      continue;
    if (retry_eintr([&] { return ::flock(fd, LOCK_EX | LOCK_NB); }) != 0) {
      if (errno == EWOULDBLOCK) out.live += 1;
      continue;
    }
    // Looked at again under the lock: another sweep may have finished this record (and unlinked
    // it, with the lines it added) between the look above and the lock. A record swept once is
    // never swept again from a stale copy.
    if (::fstat(fd, &st) != 0 || st.st_nlink != 1 ||
        static_cast<std::uint64_t>(st.st_size) > kMaxRecordBytes)
      continue;
    bool gone = fresh;  // a record killed before it got its name holds nothing but its header
    if (!fresh) {
      std::string text(static_cast<std::size_t>(st.st_size), '\0');
      ssize_t n = retry_eintr([&] { return ::pread(fd, text.data(), text.size(), 0); });
      if (n < 0) continue;
      text.resize(static_cast<std::size_t>(n));
      gone = sweep_record(fd, text, strategy, out.items);
    }
    if (!gone) continue;
    struct stat named;
    if (::fstatat(dir, name.c_str(), &named, AT_SYMLINK_NOFOLLOW) == 0 &&
        identity_of(named) == identity_of(st) && ::unlinkat(dir, name.c_str(), 0) == 0) {
      out.records += fresh ? 0 : 1;
    }
  }
  return out;
}

}  // namespace pinnedfs::confine
