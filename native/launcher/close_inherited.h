// Closing every descriptor a process inherited but was not meant to have. bubblewrap passes every
// descriptor it was started with on to the command, and libuv's spawn closes only those marked
// close-on-exec, so a descriptor the caller of pinnedfs left open (a handle on a protected
// directory, a socket) would otherwise reach the confined command, whatever the mounts say.
#pragma once

namespace pinnedfs::launcher {

// How the descriptors are found (`range`: close_range(2)): `best` tries each of the others in turn,
// the first that works deciding; the others exist so the native tests can run each fallback on a
// kernel that has the better one.
enum class Method { best, range, listed, counted };

// Closes every descriptor from `keep_below` up, except `also_keep` (-1: none). Answers 0, or the
// errno of the step that failed. close_range(2) when the kernel has it (5.9+), else each
// descriptor /proc/self/fd (or /dev/fd) lists, else every number up to the hard RLIMIT_NOFILE
// (bounded by Linux's default fs.nr_open).
int close_inherited(int keep_below, int also_keep, Method method = Method::best);

// Whether /proc/self/fd lists no descriptor from `keep_below` up other than `also_keep`: 1 yes,
// 0 no, -1 when /proc cannot be read (nothing to check with).
int only_kept_open(int keep_below, int also_keep);

}  // namespace pinnedfs::launcher
