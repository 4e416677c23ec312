// Everything a platform provides, in one place. The rest of the native core is written against
// these declarations only; each supported system implements them in its own folder, and
// native/sources.json lists which files a system compiles:
//
//   the kernel-confined open and its probe   linux/openat2.cc (openat2 RESOLVE_BENEATH),
//                                             darwin/nofollow_any.cc (O_NOFOLLOW_ANY)
//   where a descriptor is, its mount         linux/fd_where.cc, darwin/fd_where.cc
//   the directory reader                     linux/getdents.cc (getdents64), darwin/readdir.cc
//   attribute handles (chmod, chown)         linux/attr_fd.cc, darwin/attr_fd.cc
//   on-disk spelling of a name               darwin/spelling.cc, linux/spelling.cc (byte-exact)
//   unlink met a directory, no-replace rename linux/names.cc, darwin/names.cc
//   huge-page advice for large buffers       linux/huge_pages.cc, darwin/huge_pages.cc (none)
//
// The walk (core/walk.cc) is the strategy every platform has; it needs nothing from here but the
// handle flags.
//
// The directory reader: Linux calls getdents64 directly; macOS runs readdir(3) on a dup of the
// descriptor. Why not fdopendir on Linux: it costs an extra fstat + fcntl per directory, takes
// ownership of the descriptor we still need to open the children through, and on glibc < 2.39
// accepts an O_PATH descriptor whose first readdir fails.
//
// The spelling: Linux compares names byte for byte, so a name that resolved is spelled on disk as
// requested and this costs nothing. The exception is a casefold directory (ext4/f2fs +F), where
// only a listing could tell the stored spelling; it is not handled, and the requested spelling is
// answered there. macOS volumes are usually case-insensitive: the stored name comes from
// getattrlistat (ATTR_CMN_NAME, FSOPT_NOFOLLOW), as Apple's realpath(3) does, one call per
// component.
#pragma once
#if !defined(__linux__) && !defined(__APPLE__)
#error "pinnedfs supports Linux and macOS only: this system has no platform files (native/platform)"
#endif

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "../core/entry_kind.h"
#include "../core/error.h"
#include "../core/fd.h"
#include "../core/path_lex.h"
#include "../core/root.h"

namespace pinnedfs {

namespace platform {

// Where `fd` is, as the kernel says: 0 and its absolute path, or an errno (ENOSYS where the
// platform cannot say, ENAMETOOLONG past a page).
int fd_path(int fd, std::string* out);
// The mount `fd` lies on.
Result<MountIdentity> mount_of(int fd);
// lstat of `name` in `dirfd` (`""` for `dirfd` itself) that tells its mount in the same call where
// the kernel can (Linux statx with STATX_MNT_ID, 5.8+): 0 or an errno. `mount->has_id` is false
// where it could not, and the caller then asks mount_of on a handle of its own.
int lstat_with_mount(int dirfd, const char* name, struct stat* st, MountIdentity* mount);
#if defined(__linux__)
// Whether /proc is procfs (known once it could be checked; a check that failed is not kept): the
// /proc routes are used only then.
bool proc_is_procfs();
#ifdef PINNEDFS_TEST_HOOKS
// Forgets what proc_is_procfs learned, so a test can watch it learn again.
void forget_procfs();
#endif
// The "mnt_id:" line of a /proc/self/fdinfo/N text (exposed for the native tests).
bool parse_fdinfo_mount_id(const char* text, std::uint64_t* id);
#endif
// The kernel-confined strategy, implemented per platform. kernel_compiled() is false where this
// build has none and kernel_probe() fails where this kernel has none; the walk is then the only
// strategy.
bool kernel_compiled();
// Probes the kernel strategy on `rootfd` once: 0 if it works, else the errno that disabled it.
int kernel_probe(int rootfd);
// Opens `relative` (".."-free, no trailing '/', "." for the root itself) beneath `dirfd`.
Result<Fd> kernel_open(int dirfd, const std::string& relative, int flags, mode_t mode,
                       const std::string& shown_path);
// Whether this platform's kernel can follow links confined beneath a directory in one call (Linux
// openat2 RESOLVE_BENEATH without RESOLVE_NO_SYMLINKS; macOS O_NOFOLLOW_ANY cannot), and that open:
// a link is followed while it stays beneath `dirfd`, never through a magic link or a mount.
bool kernel_follows_within();
Result<Fd> kernel_open_within(int dirfd, const std::string& relative, int flags, mode_t mode,
                              const std::string& shown_path);

// Whether unlink(2) of `name` in `dirfd` failed with `err` because the entry is a directory.
// Linux answers EISDIR; macOS answers EPERM, which a permission refusal also gives, so there the
// entry itself is asked. (linux/names.cc, darwin/names.cc)
bool unlink_met_directory(int err, int dirfd, const std::string& name);

// renameat that refuses an existing destination in the same system call, so no name can appear
// between a check and the rename: Linux renameat2(RENAME_NOREPLACE) (the raw syscall, since glibc's
// wrapper only exists from 2.28), macOS renameatx_np(RENAME_EXCL). 0, or -1 with errno: EEXIST for
// an existing destination, EINVAL (Linux) where the file system cannot rename that way.
// (linux/names.cc, darwin/names.cc)
int rename_noreplace(int fromfd, const char* from, int tofd, const char* to);

// Exchanges two names atomically, both of which must exist: Linux renameat2(RENAME_EXCHANGE) (the
// raw syscall, as above), macOS renameatx_np(RENAME_SWAP). 0, or -1 with errno: EINVAL (Linux) or
// ENOTSUP (macOS) where the file system cannot. (linux/names.cc, darwin/names.cc)
int rename_exchange(int fromfd, const char* from, int tofd, const char* to);

// Asks for huge pages behind `[p, p + n)`, a large buffer about to be written whole (a big write
// payload copied out of its JavaScript string, a big read): one fault per 2 MiB instead of per
// 4 KiB. The advice changes no content and its failure changes nothing. (linux/huge_pages.cc;
// darwin/huge_pages.cc does nothing.) Callers outside the core reach it through
// core/alloc.h advise_large_buffer.
void advise_huge_pages(void* p, std::size_t n);

}  // namespace platform

// ---- the directory reader -----------------------------------------------------------------------

struct DirEntry {
  std::string name;  // bytes as the kernel gave them; never "." or ".."
  EntryKind kind = EntryKind::Unknown;
};

// Streams the entries of a directory opened O_RDONLY|O_DIRECTORY, allocation-free per entry: each
// name is a view into a buffer the caller owns and may reuse across directories (glob walks
// thousands). The descriptor stays the caller's and its offset is consumed: list it once.
class DirectoryReader {
 public:
  DirectoryReader(int fd, std::vector<char>& buffer);
  ~DirectoryReader();
  DirectoryReader(const DirectoryReader&) = delete;
  DirectoryReader& operator=(const DirectoryReader&) = delete;

  // The next entry other than "." and "..": true with `name` (valid until the next call) and
  // `type` (a DT_* value; DT_UNKNOWN when the file system does not say), or false at the end or on
  // error (`error()` then non-zero: an errno, EIO for a malformed kernel record).
  bool next(std::string_view* name, unsigned char* type);
  int error() const { return error_; }
  // How many reads of the directory the entries so far came from (1 for the first batch). Where
  // the platform hides its reads (readdir), every 512 entries count as one.
  std::size_t batches() const { return batches_; }

 private:
  // Each platform's own reading state, kept in place (no allocation per directory):
  // linux/getdents.cc (the caller's buffer, the unread part of the last getdents64 answer),
  // darwin/readdir.cc (the DIR* over a private dup, the entries given out).
  struct State;
  State& state();
  static constexpr std::size_t kStateSize = 4 * sizeof(void*);
  int fd_;
  int error_ = 0;
  bool done_ = false;
  std::size_t batches_ = 0;
  alignas(std::max_align_t) unsigned char state_[kStateSize];
};

#if defined(__linux__)
// Appends the entries of one getdents64 answer (`len` bytes of linux_dirent64 records) to `out`,
// skipping "." and "..". Pure, so the native tests can feed it crafted records. Returns false when
// a record is malformed (a zero or overrunning d_reclen).
bool parse_dirents64(const char* buf, std::size_t len, std::vector<DirEntry>& out);

// One record of a getdents64 answer at `pos`: its name, type and length, or false when malformed.
bool dirent64_at(const char* buf, std::size_t len, std::size_t pos, std::string_view* name,
                 unsigned char* type, std::size_t* reclen);
#endif

}  // namespace pinnedfs

// ---- attribute handles: the seam under chmod and chown (ops/attr.cc) ----------------------------
// Linux: O_PATH, fchmodat2 / fchownat on the descriptor. macOS: O_RDONLY|O_NOFOLLOW_ANY, fchmod /
// fchown.

namespace pinnedfs::attr {

// Opens the object `path` names beneath the root, never following a link. Where the platform can
// (Linux O_PATH), a trailing link is opened as the link itself so the caller's fstat refuses it
// with a clear reason; elsewhere the open refuses it.
Result<Fd> open_for_change(const Root& root, const LexedPath& path);

// Act on the descriptor open_for_change gave, after the caller's fstat checks passed on it.
Status change_mode(int fd, mode_t mode, const std::string& shown);
Status change_owner(int fd, uid_t uid, gid_t gid, const std::string& shown);

#if defined(__linux__)
// chmod through /proc/self/fd/N, for kernels before 6.6 (no fchmodat2) or a seccomp filter that
// denies it. Exposed so the native tests run it on kernels that have fchmodat2.
Status change_mode_via_proc(int fd, mode_t mode, const std::string& shown);
#endif

}  // namespace pinnedfs::attr

// ---- on-disk spelling, for the answers that promise it (realPath, resolve)
// -----------------------

namespace pinnedfs::ops {

#if defined(__APPLE__)
constexpr bool kSpellingMayDiffer = true;
#else
constexpr bool kSpellingMayDiffer = false;
#endif
// `name` (one component, no '/') as stored in `dirfd`; a link is described, never followed.
// (darwin/spelling.cc; linux/spelling.cc answers the name as given.)
Result<std::string> on_disk_name(int dirfd, const std::string& name, const std::string& shown_path);

}  // namespace pinnedfs::ops
