// The pinned-parent creation program behind mkdirs and makeDirectory({ recursive: true }).
//
// One call plans and runs, so a whole program is one trip off the JavaScript thread:
//  plan  lex every entry, add the ancestors it implies, order parent before child, and drop what
//        already exists, checked with fstatat(parent, name, AT_SYMLINK_NOFOLLOW) on a parent
//        opened beneath the root (a link where a directory is wanted is a refusal, never
//        "exists"; a parent known missing makes its children missing without a syscall);
//  run   for each missing directory: open its parent beneath the root again, check the parent is
//        still the directory planned or created (dev:ino), mkdirat(parent, name, mode), then
//        (exact modes) open the new name O_NOFOLLOW|O_DIRECTORY, record its identity and chmod
//        that handle. EEXIST or a changed parent stops the program before the next mode change;
//        what was created is answered all the same, since it is the caller's to clean up.
#pragma once
#include <vector>

#include "ops.h"

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
// directories) is an Error before any syscall; everything after the first syscall is answered in
// the outcome, with the directories created so far.
Result<MkdirsOutcome> run_mkdirs_program(const Root& root, const std::vector<MkdirsEntry>& plan,
                                         const ProgramOptions& options);

}  // namespace pinnedfs::ops
