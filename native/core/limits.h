// Ceilings on what one operation may allocate. Every buffer whose size comes from the disk (a
// file's length, a directory's entries) or from the caller (a limit, an array of paths) is checked
// against one of these first, and going over is a TooLarge refusal, never an attempt. What stays
// under them is still a checked allocation (core/alloc.h: ENOMEM when the system says no), and file
// content is also held to the process's budget across concurrent calls (core/budget.h).
#pragma once
#include <cstddef>
#include <cstdint>

namespace pinnedfs {

// Most bytes of one file's content, whatever limit the caller asks for: Node's own fs.readFile
// ceiling (2 GiB - 1), and well under what a Buffer may hold on every Node line we support.
constexpr std::uint64_t kMaxContentBytes = (std::uint64_t{1} << 31) - 1;

// Most bytes of names one listing answer (readDirectory, glob) or one directory's entries may take,
// counting kNameOverhead per name for the string that holds it. A million 200-byte paths fit; a
// tree built to make the answer explode (deep chains of long names times many leaves) does not.
constexpr std::size_t kMaxListingBytes = std::size_t{256} << 20;
constexpr std::size_t kNameOverhead = 32;

// Deepest level any walk of a tree goes below the directory it starts from (the recursive
// listing, the recursive remove, glob): each level holds a descriptor and its own buffers while
// the levels below it are read, so this bounds both per call. Deeper is a TooLarge refusal.
constexpr std::size_t kMaxTreeDepth = 256;

// Most bytes of text (paths, patterns, link targets, identities) one call may hand the core, and
// most bytes of write payload: the caller's strings are copied, and one JavaScript string
// referenced a million times in an array would otherwise become a million copies.
constexpr std::size_t kMaxRequestText = std::size_t{64} << 20;
constexpr std::size_t kMaxRequestData = static_cast<std::size_t>(kMaxContentBytes);

// Most bytes of glob pattern text (the pattern, and its excludes together): the compiled matcher
// grows with the text, and no real pattern comes near this.
constexpr std::size_t kMaxPatternBytes = std::size_t{1} << 20;

// Smallest buffer (a file's content read whole, a write payload copied out of its string) worth
// asking huge pages for (platform::advise_huge_pages): below it the few faults saved are not worth
// a system call.
constexpr std::size_t kHugeBuffer = std::size_t{8} << 20;

}  // namespace pinnedfs
