// The scratch world the executing fuzz targets run in: a root full of traps (links out, a link in,
// a hard link to an outside file, a FIFO) and, beside it, a canary tree no input may read or
// change. Header-only so each fuzz_*.cc stays one translation unit (CMakeLists.txt globs
// fuzz_*.cc).
#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace pinnedfs::fuzz {

constexpr const char* kCanaryToken = "CANARY-7f3d9a1c";

[[noreturn]] inline void die(const char* what, const std::string& detail = {}) {
  std::fprintf(stderr, "pinnedfs fuzz invariant broken: %s %s\n", what, detail.c_str());
  std::abort();
}

inline void must(bool ok, const char* what, const std::string& detail = {}) {
  if (!ok) die(what, detail);
}

inline void write_file(const std::string& path, const std::string& content, mode_t mode = 0644) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  must(fd >= 0, "scratch create", path);
  must(::write(fd, content.data(), content.size()) == static_cast<ssize_t>(content.size()),
       "scratch write", path);
  ::close(fd);
}

// Removes everything under `dir` (not `dir` itself) without following links. Restores search and
// write permission first: an input may have chmod'ed a directory to 0.
inline void clear_dir(const std::string& dir) {
  ::chmod(dir.c_str(), 0755);
  DIR* d = ::opendir(dir.c_str());
  if (!d) return;
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
      names.emplace_back(e->d_name);
  }
  ::closedir(d);
  for (const auto& n : names) {
    std::string p = dir + "/" + n;
    struct stat st;
    if (::lstat(p.c_str(), &st) != 0) continue;
    if (S_ISDIR(st.st_mode)) {
      clear_dir(p);
      must(::rmdir(p.c_str()) == 0, "scratch rmdir", p);
    } else {
      must(::unlink(p.c_str()) == 0, "scratch unlink", p);
    }
  }
}

// Content, modes, owners and entries of the canary tree, links read (never followed).
inline std::string fingerprint(const std::string& dir) {
  std::string out;
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0) return "missing:" + dir;
  out += dir + " " + std::to_string(st.st_mode) + " " + std::to_string(st.st_uid) + " " +
         std::to_string(st.st_gid) + " " + std::to_string(st.st_size) + "\n";
  if (S_ISREG(st.st_mode)) {
    int fd = ::open(dir.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0) {
      char buf[256];
      ssize_t n = ::read(fd, buf, sizeof buf);
      if (n > 0) out.append(buf, static_cast<std::size_t>(n));
      ::close(fd);
    }
  } else if (S_ISDIR(st.st_mode)) {
    DIR* d = ::opendir(dir.c_str());
    std::vector<std::string> names;
    while (dirent* e = d ? ::readdir(d) : nullptr) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0)
        names.emplace_back(e->d_name);
    }
    if (d) ::closedir(d);
    std::sort(names.begin(), names.end());
    for (const auto& n : names) out += fingerprint(dir + "/" + n);
  }
  return out;
}

inline int open_fd_count() {
  DIR* d = ::opendir("/proc/self/fd");
  if (!d) return -1;
  int n = 0;
  while (::readdir(d)) ++n;
  ::closedir(d);
  return n;
}

struct World {
  std::string base, root, outside;
  std::string canary_print;

  // base/{root,outside}; tmpfs when there is one, for speed (the tree is rebuilt per input).
  static World make() {
    World w;
    const char* env = std::getenv("PINNEDFS_FUZZ_DIR");
    struct stat st;
    std::string parent =
        env && *env ? env
                    : (::stat("/dev/shm", &st) == 0 && S_ISDIR(st.st_mode) ? "/dev/shm" : "/tmp");
    std::string tmpl = parent + "/pinnedfs-fuzz-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    must(::mkdtemp(buf.data()) != nullptr, "mkdtemp", tmpl);
    w.base = buf.data();
    w.root = w.base + "/root";
    w.outside = w.base + "/outside";
    must(::mkdir(w.root.c_str(), 0755) == 0, "mkdir root");
    must(::mkdir(w.outside.c_str(), 0755) == 0, "mkdir outside");
    must(::mkdir((w.outside + "/sub").c_str(), 0750) == 0, "mkdir outside/sub");
    write_file(w.outside + "/secret", std::string(kCanaryToken) + " secret\n", 0640);
    write_file(w.outside + "/sub/x", std::string(kCanaryToken) + " x\n", 0640);
    w.canary_print = fingerprint(w.outside);
    w.reset();
    return w;
  }

  // Rebuilds the root's contents: the same starting tree for every input, so a crash reproduces.
  void reset() const {
    clear_dir(root);
    auto at = [&](const char* rel) { return root + "/" + rel; };
    must(::mkdir(at("a").c_str(), 0755) == 0, "mkdir a");
    must(::mkdir(at("a/b").c_str(), 0755) == 0, "mkdir a/b");
    must(::mkdir(at("dir").c_str(), 0755) == 0, "mkdir dir");
    write_file(at("a/b/f"), "inside f\n");
    write_file(at("f"), "inside top\n");
    must(::symlink(outside.c_str(), at("ln").c_str()) == 0, "symlink ln");
    must(::symlink("../../outside/secret", at("a/ln").c_str()) == 0, "symlink a/ln");
    must(::symlink("a", at("inln").c_str()) == 0, "symlink inln");
    must(::link((outside + "/secret").c_str(), at("hl").c_str()) == 0, "link hl");
    must(::mkfifo(at("fifo").c_str(), 0644) == 0, "mkfifo");
  }

  // The canary is untouched: same content, modes, owners and entries as at the start.
  void check_canary() const {
    std::string now = fingerprint(outside);
    if (now != canary_print)
      die("canary tree changed", "\nbefore:\n" + canary_print + "after:\n" + now);
  }
};

// The answer of an operation must never carry canary content.
inline bool carries_canary(const std::string& bytes) {
  return bytes.find(kCanaryToken) != std::string::npos;
}

}  // namespace pinnedfs::fuzz
