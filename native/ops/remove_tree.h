// Recursive removal by handle: every directory is opened O_DIRECTORY|O_NOFOLLOW as a child of the
// directory being emptied (core/resolve.h descend: confined, on the root's mount), listed, emptied
// entry by entry with unlinkat on its handle, then removed from its parent with
// unlinkat(AT_REMOVEDIR); when that finds it not empty (entries skipped or added meanwhile) it is
// opened and emptied again, boundedly. No path is ever joined and resolved without confinement, so
// a link anywhere in the tree is removed as the entry it is and never followed.
//
// Every unlink and every listing is preceded by the proof that the directory it acts in is still
// beneath the root (Held::beneath): a directory moved out mid-removal is refused, and nothing in
// the departed tree is listed or deleted. A mount point met in the tree stops the removal with a
// PermissionDenied refusal naming it: nothing beneath it is deleted, and what was removed before it
// was met stays removed (as any failing fs.rm leaves it).
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

#include "../core/limits.h"
#include "ops.h"

namespace pinnedfs::ops {

// Deepest directory level removed below the one named; each level holds one descriptor.
constexpr int kMaxRemoveDepth = static_cast<int>(kMaxTreeDepth);

// Removes directory `name` in `parent` and everything beneath it. `shown` is its root-relative path
// for errors. Something already gone counts as removed; an entry that turns out not to be a
// directory (a link or file swapped in) is unlinked as an entry.
//
// With `split`: where the directory itself holds two or more directories, only its other entries
// are removed, and the directory's identity ("dev:ino"), then the directories' names, are appended
// to *split for the caller to remove (side by side, each by a remove of its own), the directory
// kept; otherwise the whole tree, as without.
Status remove_tree(const Root& root, Held& parent, const std::string& name,
                   const std::string& shown, std::vector<std::string>* split = nullptr);

// For the native tests: every removal started from now on holds each file from its first
// (ops/free_watch.h decides otherwise), so the held path is exercised whatever the disk.
void hold_every_file(bool on);

}  // namespace pinnedfs::ops
