// Linux: directory entries straight from getdents64(2), 32 KiB at a time (platform-notes §1,
// "Directory listing"). No DIR*, no hidden fstat/fcntl, and the descriptor stays ours.
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "../ops/dir_list.h"

namespace pinnedfs {

namespace {
constexpr std::size_t kBufferSize = 32 * 1024;
// The fixed head of struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), then
// the NUL-terminated name. Offsets, not a struct, so a crafted buffer in a test needs no alignment.
constexpr std::size_t kReclenOffset = 16;
constexpr std::size_t kTypeOffset = 18;
constexpr std::size_t kNameOffset = 19;
}  // namespace

bool parse_dirents64(const char* buf, std::size_t len, std::vector<DirEntry>& out) {
  std::size_t pos = 0;
  while (pos < len) {
    if (len - pos < kNameOffset + 1) return false;
    std::uint16_t reclen;
    std::memcpy(&reclen, buf + pos + kReclenOffset, sizeof reclen);
    if (reclen < kNameOffset + 1 || reclen > len - pos) return false;
    const char* name = buf + pos + kNameOffset;
    std::size_t max = reclen - kNameOffset;
    const void* nul = std::memchr(name, '\0', max);
    if (!nul) return false;
    std::size_t n = static_cast<const char*>(nul) - name;
    bool dot = (n == 1 && name[0] == '.') || (n == 2 && name[0] == '.' && name[1] == '.');
    if (!dot && n > 0) {
      out.push_back(DirEntry{std::string(name, n),
                             entry_kind(static_cast<unsigned char>(buf[pos + kTypeOffset]))});
    }
    pos += reclen;
  }
  return true;
}

Status DirLister::list(int dirfd, const std::string& shown_path, std::vector<DirEntry>& out) {
  if (buffer.size() != kBufferSize) buffer.resize(kBufferSize);
  for (;;) {
    long n = ::syscall(SYS_getdents64, dirfd, buffer.data(), buffer.size());
    if (n < 0) {
      if (errno == EINTR) continue;
      return sys_error(errno, "getdents64", shown_path);
    }
    if (n == 0) return ok_status();
    if (!parse_dirents64(buffer.data(), static_cast<std::size_t>(n), out)) {
      Error e = sys_error(EIO, "getdents64", shown_path);
      e.description = "the kernel returned a malformed directory record";
      return e;
    }
  }
}

}  // namespace pinnedfs
