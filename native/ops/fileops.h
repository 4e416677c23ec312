// The file operations fs/promises users reach for after reads and writes: copyFile, cp, symlink,
// link, utimes, truncate, lchown. Each starts as every other op does (prepare the path, open the
// parent or the object beneath the root, prove it before the act); the shared pieces are here.
#pragma once
#include <sys/stat.h>

#include <string>

#include "ops.h"

namespace pinnedfs::ops {

// copy_file, cp, symlink, link, utimes, truncate and lchown are declared by their rows (ops.h).

// fs.constants.COPYFILE_*: the values are Node's, the same on every platform.
constexpr std::uint32_t kCopyExcl = 1;
constexpr std::uint32_t kCopyFiclone = 2;
constexpr std::uint32_t kCopyFicloneForce = 4;

// The parent of a non-root path, the leaf to act on there, proven beneath the root just now (the
// proof hands out nothing): the preamble of an op here that looks in the parent before it acts
// there. Looks go through `dir.look()`; each later act through a descriptor from `dir.prove()` or
// `dir.act()` taken right before it. An op that only acts uses in_parent (core/resolve.h).
Result<Parent> held_parent(const Root& root, const LexedPath& path, const char* syscall,
                           const std::string& shown);

// Whether link text `text`, read from a link in directory `dir` (root-relative components), stays
// beneath the root when resolved lexically: not absolute, not empty, and no ".." climbing above the
// root. A refusal (Escape) names the link at `shown`.
Status link_text_within(const std::vector<std::string>& dir, const std::string& text,
                        const char* syscall, const std::string& shown);

// Copies the open regular file `src` (with its fstat `st`) to `leaf` in the held directory `dir`:
// a temporary in `dir` (O_TMPFILE where the file system has it), the data by reflink,
// copy_file_range or a bounded read/write loop, the mode bits of `st` as Node's copyFile sets them,
// then one publish (linkat, renameat; `exclusive`: never replacing a name). Every name made in
// `dir` (the temporary, the publish, the cleanup) goes through a descriptor `dir` proves right
// before it. An interrupted copy leaves no half file under `leaf`. `src` is read by position
// from its start, so a second attempt with the same descriptor copies the whole file again.
Status copy_into(const Root& root, int src, const struct stat& st, Held& dir,
                 const std::string& leaf, std::uint32_t copy_mode, bool exclusive,
                 const std::string& shown);

// Opens `name` in the held, proven directory `dirfd` (its look(): a child opened for reading and
// checked in its turn) for a copy's content: no link followed, a regular file with one link on
// the root's mount, never a FIFO or device opened for reading.
Result<Fd> open_copy_source(const Root& root, int dirfd, const std::string& name,
                            const std::string& shown, struct stat* st);

}  // namespace pinnedfs::ops
