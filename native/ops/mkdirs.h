// The pinned-parent creation program behind mkdirs and makeDirectory({ recursive: true }).
//
// One call plans and runs, so a whole program is one trip off the JavaScript thread:
//  plan  lex every entry, insert it into a tree of components (implied ancestors included), order
//        it parent before child (pre-order, siblings by name), and drop what already exists,
//        checked with fstatat(parent, name, AT_SYMLINK_NOFOLLOW) on the parent's handle (a link
//        where a directory is wanted is a refusal, never "exists"; a parent known missing makes
//        its children missing without a syscall);
//  run   for each missing directory: bring the handle to its parent, prove that parent beneath
//        the root (core/beneath.h), mkdirat(parent, name, mode), then (exact modes) open the new
//        name O_NOFOLLOW|O_DIRECTORY, record its identity, prove it and chmod that handle. EEXIST,
//        a parent that is no longer the directory planned or created (dev:ino), or one that left
//        the root stops the program before the next change; what was created is answered all the
//        same, since it is the caller's to clean up.
//
// Linear in the plan: one handle travels the tree, a child opened from its parent going down, ".."
// going up, each arrival checked against the identity recorded for that directory, so the
// syscalls are a constant per directory whatever the depth (a program never reopens a parent from
// the root). Each proof costs a constant number of syscalls; under the kernel strategy its one
// confined lookup walks the path in the kernel, which grows with the depth. Bounded: at most
// kMaxDirectories directories and kMaxPlanComponents components per call, refused as BadArgument
// before any syscall.
#pragma once
#include <cstddef>
#include <vector>

#include "dir_cursor.h"

namespace pinnedfs::ops {

struct ProgramOptions {
  // mkdirs: give each created directory exactly its mode on its own handle (no umask). Off for
  // makeDirectory, which matches Node: mkdirat's mode with the umask applied, nothing after.
  bool exact_modes = true;
  // makeDirectory -p: an EEXIST that turns out to be a directory (a concurrent creator) is fine,
  // as in Node. mkdirs treats it as a conflict: the directory is not ours to chmod or own.
  bool tolerate_existing = false;
  // Test hook, run between plan and run (see HookStep in core/request.h).
  const std::vector<HookStep>* after_plan = nullptr;
};

// Plans and runs `plan`. A malformed plan (bad path, mode, duplicate with another mode, too many
// directories or components) is an Error before any syscall; everything after the first syscall
// is answered in the outcome, with the directories created so far.
Result<MkdirsOutcome> run_mkdirs_program(const Root& root, const std::vector<MkdirsEntry>& plan,
                                         const ProgramOptions& options);

}  // namespace pinnedfs::ops
