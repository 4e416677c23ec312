// Checked allocation, for every buffer whose size comes from the disk or the caller: the one place
// in the core that catches an exception. An allocation the system refuses (std::bad_alloc, or
// std::length_error past max_size()) becomes a false answer here, and the caller's typed ENOMEM
// error (out_of_memory), never std::terminate and an abort of the whole process. The containers
// these guard are then filled within the capacity reserved, which allocates nothing more.
#pragma once
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <new>
#include <stdexcept>
#include <string>

#include "error.h"

namespace pinnedfs {

// Whether `bytes` more of address space leave the process room to run, under an RLIMIT_AS (ulimit
// -v): an allocation that takes the last of it succeeds here and leaves V8 none to grow its heap
// into, and V8 answers that with a fatal out-of-memory abort at its next collection. So a large
// allocation (kRoomChecked or more) must leave kRoomLeft (or a quarter of the limit, if less)
// unused. True where there is no such limit, or where the process's size cannot be read.
bool room_for(std::size_t bytes) noexcept;

// For a large buffer about to be written whole (a big write payload copied out of its JavaScript
// string, a big read): asks the platform for huge pages behind it, one fault per 2 MiB instead of
// per 4 KiB. Changes no content; its failure changes nothing.
void advise_large_buffer(void* p, std::size_t n) noexcept;
constexpr std::size_t kRoomChecked = std::size_t{8} << 20;
constexpr std::size_t kRoomLeft = std::size_t{512} << 20;

// Grows `c`'s capacity to at least `n` (a std::string or std::vector); false, with `c` unchanged,
// when the memory cannot be had.
template <class C>
bool try_reserve(C& c, std::size_t n) noexcept {
  if (n <= c.capacity()) return true;
  std::size_t bytes = n * sizeof(typename C::value_type);
  if (bytes >= kRoomChecked && !room_for(bytes)) return false;
  try {
    c.reserve(n);
    return true;
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::length_error&) {
    return false;
  }
}

// Room for `more` elements past the size, growing geometrically as push_back would (so a buffer
// filled piece by piece is copied a bounded number of times); false when the memory cannot be had.
template <class C>
bool room_for_more(C& c, std::size_t more) noexcept {
  std::size_t want = c.size() + more;
  if (want <= c.capacity()) return true;
  std::size_t grown = c.capacity() < 16 ? 16 : c.capacity() * 2;
  return try_reserve(c, want > grown ? want : grown);
}
template <class C>
bool room_for_one(C& c) noexcept {
  return room_for_more(c, 1);
}

// The error of an allocation of `bytes` for `what` that the system refused: ENOMEM, retryable.
inline Error out_of_memory(std::size_t bytes, const char* syscall, std::string path) {
  Error e = sys_error(ENOMEM, syscall, std::move(path));
  e.description = "out of memory: " + std::to_string(bytes) +
                  " bytes could not be allocated (nothing was changed; retry when memory is free)";
  return e;
}

}  // namespace pinnedfs
