// Linux: where a descriptor is, as the kernel tells it. Its path (readlink of /proc/self/fd/N, the
// kernel's d_path of the open file) for the walk's proof that a held directory is still beneath
// the root, and its mount (statx STATX_MNT_ID, 5.8+; /proc/self/fdinfo's mnt_id line, 3.15+; else
// only st_dev) for the rule that no mount is crossed.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstring>

#include "../../core/eintr.h"
#include "../../core/resolve.h"
#include "../platform.h"

#ifndef SYS_statx
#define SYS_statx __NR_statx
#endif

namespace pinnedfs::platform {

namespace {

constexpr long kProcSuperMagic = 0x9fa0;
constexpr unsigned kStatxMntId = 0x1000;  // STATX_MNT_ID, 5.8

// 1 procfs, 0 not, -1 not yet known. Known once /proc could be opened and its file system read: a
// /proc that is not procfs would answer whatever someone mounted or linked there. A failed open
// (out of descriptors, most often) is not cached: it may pass, and caching it would turn every
// later proof of the process into a lookup, or a moved handle's classification into a guess.
std::atomic<int> g_procfs{-1};

// The kernel's struct statx up to stx_mnt_id, padded to its full 256 bytes: glibc's own struct
// keeps stx_mnt_id in its padding, and older headers have no statx at all.
struct KernelStatx {
  std::uint32_t mask, blksize;
  std::uint64_t attributes;
  std::uint32_t nlink, uid, gid;
  std::uint16_t mode, pad1;
  std::uint64_t ino, size, blocks, attributes_mask;
  std::uint64_t times[8];  // atime, btime, ctime, mtime: {s64 sec, u32 nsec, s32 pad} each
  std::uint32_t rdev_major, rdev_minor, dev_major, dev_minor;
  std::uint64_t mnt_id;
  std::uint64_t spare[13];
};
static_assert(sizeof(KernelStatx) == 256, "struct statx is 256 bytes");

// mnt_id from /proc/self/fdinfo/N: kernels before 5.8 (no STATX_MNT_ID) still print it there.
bool mount_id_from_fdinfo(int fd, std::uint64_t* id) {
  if (!proc_is_procfs()) return false;
  char path[48];
  std::snprintf(path, sizeof path, "/proc/self/fdinfo/%d", fd);
  int info = retry_eintr([&] { return ::open(path, O_RDONLY | O_CLOEXEC); });
  if (info < 0) return false;
  Fd closer(info);
  char text[1024];
  std::size_t used = 0;
  for (;;) {
    ssize_t n = retry_eintr([&] { return ::read(info, text + used, sizeof text - 1 - used); });
    if (n <= 0) break;
    used += static_cast<std::size_t>(n);
    if (used == sizeof text - 1) break;
  }
  text[used] = '\0';
  return parse_fdinfo_mount_id(text, id);
}

}  // namespace

bool parse_fdinfo_mount_id(const char* text, std::uint64_t* id) {
  for (const char* line = text; line && *line; line = std::strchr(line, '\n')) {
    if (*line == '\n') ++line;
    unsigned long long v = 0;
    if (std::sscanf(line, "mnt_id:%llu", &v) == 1) {
      *id = v;
      return true;
    }
  }
  return false;
}

bool proc_is_procfs() {
  int known = g_procfs.load();
  if (known >= 0) return known == 1;
  int fd = ::open("/proc", O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0) {
    // Not mounted (ENOENT) is as good as not procfs; anything else may pass. Neither is kept.
    return false;
  }
  struct statfs sfs;
  int rc = retry_eintr([&] { return ::fstatfs(fd, &sfs); });
  ::close(fd);
  if (rc != 0) return false;
  int ok = static_cast<long>(sfs.f_type) == kProcSuperMagic ? 1 : 0;
  g_procfs.store(ok);
  return ok == 1;
}

#ifdef PINNEDFS_TEST_HOOKS
void forget_procfs() {
  g_procfs.store(-1);
}
#endif

int fd_path(int fd, std::string* out) {
  if (!proc_is_procfs()) return ENOSYS;
  char link[48];
  std::snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  // The kernel prints at most a page; a longer path is ENAMETOOLONG and the caller looks up
  // instead.
  char buf[4096 + 1];
  ssize_t n = retry_eintr([&] { return ::readlink(link, buf, sizeof buf); });
  if (n < 0) return errno;
  if (static_cast<std::size_t>(n) >= sizeof buf) return ENAMETOOLONG;
  out->assign(buf, static_cast<std::size_t>(n));
  return 0;
}

Result<MountIdentity> mount_of(int fd) {
  MountIdentity m;
  KernelStatx sx;
  std::memset(&sx, 0, sizeof sx);
  long rc = retry_eintr([&] {
    return ::syscall(SYS_statx, fd, "", AT_EMPTY_PATH | AT_SYMLINK_NOFOLLOW, kStatxMntId, &sx);
  });
  if (rc == 0) {
    m.dev = static_cast<std::uint64_t>(makedev(sx.dev_major, sx.dev_minor));
    if (sx.mask & kStatxMntId) {
      m.id = sx.mnt_id;
      m.has_id = true;
      return m;
    }
  } else {
    // No statx (before 4.11), or a seccomp profile that predates it.
    if (errno != ENOSYS && errno != EPERM) return sys_error(errno, "statx");
    struct stat st;
    if (::fstat(fd, &st) != 0) return sys_error(errno, "fstat");
    m.dev = static_cast<std::uint64_t>(st.st_dev);
  }
  m.has_id = mount_id_from_fdinfo(fd, &m.id);
  return m;
}

namespace {

constexpr unsigned kStatxBasic = 0x7ff;  // STATX_BASIC_STATS
// What a caller of lstat_with_mount reads: without any of these the answer is not an lstat's.
constexpr unsigned kStatxNeeded = 0x1 | 0x2 | 0x4 | 0x100 | 0x200;  // type, mode, nlink, ino, size

timespec time_of(const KernelStatx& sx, int which) {
  // Each timestamp is {s64 sec, u32 nsec, s32 pad}: two 64-bit words.
  timespec t{};
  std::int64_t sec;
  std::uint32_t nsec;
  std::memcpy(&sec, &sx.times[2 * which], sizeof sec);
  std::memcpy(&nsec, &sx.times[2 * which + 1], sizeof nsec);
  t.tv_sec = static_cast<time_t>(sec);
  t.tv_nsec = static_cast<long>(nsec);
  return t;
}

}  // namespace

int lstat_with_mount(int dirfd, const char* name, struct stat* st, MountIdentity* mount) {
  *mount = MountIdentity{};
  KernelStatx sx;
  std::memset(&sx, 0, sizeof sx);
  int flags = AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT | (*name == '\0' ? AT_EMPTY_PATH : 0);
  long rc = retry_eintr(
      [&] { return ::syscall(SYS_statx, dirfd, name, flags, kStatxBasic | kStatxMntId, &sx); });
  if (rc != 0 && errno != ENOSYS && errno != EPERM) return errno;
  if (rc != 0 || (sx.mask & kStatxNeeded) != kStatxNeeded) {
    // No statx (before 4.11, or an older seccomp profile), or a file system that left out what an
    // lstat gives: the lstat itself, and the mount by the caller's own handle.
    int got = *name == '\0' ? ::fstat(dirfd, st) : ::fstatat(dirfd, name, st, AT_SYMLINK_NOFOLLOW);
    if (got != 0) return errno;
    mount->dev = static_cast<std::uint64_t>(st->st_dev);
    return 0;
  }
  std::memset(st, 0, sizeof *st);
  st->st_dev = makedev(sx.dev_major, sx.dev_minor);
  st->st_ino = static_cast<ino_t>(sx.ino);
  st->st_mode = static_cast<mode_t>(sx.mode);
  st->st_nlink = static_cast<nlink_t>(sx.nlink);
  st->st_uid = static_cast<uid_t>(sx.uid);
  st->st_gid = static_cast<gid_t>(sx.gid);
  st->st_rdev = makedev(sx.rdev_major, sx.rdev_minor);
  st->st_size = static_cast<off_t>(sx.size);
  st->st_blksize = static_cast<blksize_t>(sx.blksize);
  st->st_blocks = static_cast<blkcnt_t>(sx.blocks);
  st->st_atim = time_of(sx, 0);
  st->st_ctim = time_of(sx, 2);
  st->st_mtim = time_of(sx, 3);
  mount->dev = static_cast<std::uint64_t>(st->st_dev);
  if (sx.mask & kStatxMntId) {
    mount->id = sx.mnt_id;
    mount->has_id = true;
  }
  return 0;
}

}  // namespace pinnedfs::platform
