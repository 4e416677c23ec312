// Linux: directory entries straight from getdents64(2), 32 KiB at a time. No DIR*, no hidden
// fstat/fcntl, and the descriptor stays ours.
#include <dirent.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <new>

#include "../../core/eintr.h"
#include "../platform.h"

namespace pinnedfs {

namespace {
constexpr std::size_t kBufferSize = 32 * 1024;
// The fixed head of struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), then
// the NUL-terminated name. Offsets, not a struct, so a crafted buffer in a test needs no alignment.
constexpr std::size_t kReclenOffset = 16;
constexpr std::size_t kTypeOffset = 18;
constexpr std::size_t kNameOffset = 19;

bool dot_or_dotdot(std::string_view n) {
  return n == "." || n == "..";
}
}  // namespace

bool dirent64_at(const char* buf, std::size_t len, std::size_t pos, std::string_view* name,
                 unsigned char* type, std::size_t* reclen) {
  if (pos >= len || len - pos < kNameOffset + 1) return false;
  std::uint16_t rl;
  std::memcpy(&rl, buf + pos + kReclenOffset, sizeof rl);
  if (rl < kNameOffset + 1 || rl > len - pos) return false;
  const char* start = buf + pos + kNameOffset;
  const void* nul = std::memchr(start, '\0', rl - kNameOffset);
  if (!nul) return false;
  *name = std::string_view(start, static_cast<const char*>(nul) - start);
  *type = static_cast<unsigned char>(buf[pos + kTypeOffset]);
  *reclen = rl;
  return true;
}

bool parse_dirents64(const char* buf, std::size_t len, std::vector<DirEntry>& out) {
  std::size_t pos = 0;
  while (pos < len) {
    std::string_view name;
    unsigned char type = 0;
    std::size_t reclen = 0;
    if (!dirent64_at(buf, len, pos, &name, &type, &reclen)) return false;
    if (!dot_or_dotdot(name) && !name.empty())
      out.push_back(DirEntry{std::string(name), entry_kind(type)});
    pos += reclen;
  }
  return true;
}

struct DirectoryReader::State {
  std::vector<char>& buffer;
  std::size_t pos = 0;  // the unread part of the last getdents64 answer
  std::size_t len = 0;
};
DirectoryReader::State& DirectoryReader::state() {
  static_assert(sizeof(State) <= kStateSize && alignof(State) <= alignof(std::max_align_t),
                "the reader's state fits the room platform.h keeps for it");
  return *std::launder(reinterpret_cast<State*>(state_));
}

DirectoryReader::DirectoryReader(int fd, std::vector<char>& buffer) : fd_(fd) {
  new (state_) State{buffer};
  if (buffer.size() < kBufferSize) buffer.resize(kBufferSize);
}

DirectoryReader::~DirectoryReader() {
  state().~State();
}

bool DirectoryReader::next(std::string_view* name, unsigned char* type) {
  State& st = state();
  for (;;) {
    while (st.pos < st.len) {
      std::size_t reclen = 0;
      if (!dirent64_at(st.buffer.data(), st.len, st.pos, name, type, &reclen)) {
        // A malformed record would otherwise loop forever or overrun: stop with EIO.
        error_ = EIO;
        done_ = true;
        st.len = st.pos = 0;
        return false;
      }
      st.pos += reclen;
      if (!dot_or_dotdot(*name) && !name->empty()) return true;
    }
    if (done_) return false;
    long n = retry_eintr(
        [&] { return ::syscall(SYS_getdents64, fd_, st.buffer.data(), st.buffer.size()); });
    if (n <= 0) {
      if (n < 0) error_ = errno;
      done_ = true;
      return false;
    }
    st.pos = 0;
    st.len = static_cast<std::size_t>(n);
    ++batches_;
  }
}

}  // namespace pinnedfs
