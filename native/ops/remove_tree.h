// Recursive removal by handle (platform-notes pitfall 10): every directory is opened
// O_DIRECTORY|O_NOFOLLOW from the handle of its parent, listed, emptied entry by entry with
// unlinkat on that handle, then removed from its parent with unlinkat(AT_REMOVEDIR); when that
// finds it not empty (entries skipped or added meanwhile) it is opened and emptied again, boundedly. No path is ever joined and resolved again, so a link anywhere in
// the tree is removed as the entry it is and never followed.
#pragma once
#include <sys/types.h>

#include <string>

#include "ops.h"

namespace pinnedfs::ops {

// Deepest directory level removed below the one named; each level holds one descriptor.
constexpr int kMaxRemoveDepth = 256;

// Removes directory `name` in `parent` and everything beneath it. `shown` is its root-relative path
// for errors. Something already gone counts as removed; an entry that turns out not to be a
// directory (a link or file swapped in) is unlinked as an entry.
Status remove_tree(const Root& root, int parent, const std::string& name, const std::string& shown);

}  // namespace pinnedfs::ops
