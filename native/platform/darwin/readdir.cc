// Portable listing (macOS and other non-Linux POSIX systems): readdir(3) on a dup of the caller's
// descriptor, because fdopendir takes ownership of the descriptor it is given and the caller still
// needs its own to open children through. The dup shares the offset, which is harmless: the caller
// opened this description itself and lists it once.
#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <new>

#include "../../core/eintr.h"
#include "../../core/fd.h"
#include "../platform.h"

namespace pinnedfs {

// The caller's buffer is not needed: readdir has its own.
struct DirectoryReader::State {
  DIR* dir = nullptr;         // over a private dup of the caller's descriptor
  std::size_t delivered = 0;  // entries given out so far
};
DirectoryReader::State& DirectoryReader::state() {
  static_assert(sizeof(State) <= kStateSize && alignof(State) <= alignof(std::max_align_t),
                "the reader's state fits the room platform.h keeps for it");
  return *std::launder(reinterpret_cast<State*>(state_));
}

DirectoryReader::DirectoryReader(int fd, std::vector<char>&) : fd_(fd) {
  new (state_) State();
}

DirectoryReader::~DirectoryReader() {
  if (state().dir) ::closedir(state().dir);
  state().~State();
}

bool DirectoryReader::next(std::string_view* name, unsigned char* type) {
  if (done_) return false;
  State& st = state();
  if (!st.dir) {
    int copy = retry_eintr([&] { return ::fcntl(fd_, F_DUPFD_CLOEXEC, 0); });
    if (copy < 0) {
      error_ = errno;
      done_ = true;
      return false;
    }
    Fd owned(copy);
    DIR* dir = ::fdopendir(owned.get());
    if (!dir) {
      error_ = errno;
      done_ = true;
      return false;
    }
    owned.release();  // closedir closes it from here on
    st.dir = dir;
  }
  for (;;) {
    // errno cleared first: a null answer with errno untouched is the end of the directory.
    struct dirent* e = retry_eintr([&] {
      errno = 0;
      return ::readdir(st.dir);
    });
    if (!e) {
      error_ = errno;
      done_ = true;
      return false;
    }
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    // readdir hides its reads of the directory: count every 512 entries as one batch.
    if (st.delivered++ % 512 == 0) ++batches_;
    *name = std::string_view(e->d_name);
    *type = e->d_type;
    return true;
  }
}

}  // namespace pinnedfs
