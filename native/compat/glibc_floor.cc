// Built into the portable prebuilds only (binding.gyp: pinnedfs_portable). They are compiled on a
// current Debian, with libstdc++ and libgcc linked in, but must load on glibc 2.28 (RHEL 8,
// Debian 10, Ubuntu 20.04). The linker's --wrap (the list is native/sources.json, portableWraps)
// sends each reference below here instead of to a glibc symbol version newer than 2.28; a loader
// refuses the whole file when one version is missing, even for a function never called. Each
// replacement does what the newer symbol does, through an interface 2.28 already had.
// scripts/package/prebuilds.mjs checks the result.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>

#if defined(__x86_64__)
#define PINNEDFS_GLIBC_BASE "GLIBC_2.2.5"
#elif defined(__aarch64__)
#define PINNEDFS_GLIBC_BASE "GLIBC_2.17"
#else
#error "glibc_floor.cc knows the x86_64 and aarch64 glibc ABIs only"
#endif

#define PINNEDFS_HIDDEN __attribute__((visibility("hidden")))

extern "C" {

// libstdc++'s inline code (shared_ptr counts, locale) reads this GLIBC_2.32 flag to skip atomic
// instructions while a process has one thread. Node always runs several, so "not single-threaded"
// is the true answer, and the one code built against an older glibc assumes.
PINNEDFS_HIDDEN char __wrap___libc_single_threaded = 0;

// stat, fstat, lstat and fstatat became exported functions in glibc 2.33; before, the headers
// inlined calls to __xstat and friends. On x86_64 and aarch64 the kernel's struct stat is glibc's
// struct stat64, so the system call fills the caller's buffer exactly as the wrapper would.
PINNEDFS_HIDDEN int __wrap_fstatat64(int dirfd, const char* path, struct stat64* st, int flags) {
  return static_cast<int>(::syscall(SYS_newfstatat, dirfd, path, st, flags));
}
PINNEDFS_HIDDEN int __wrap_fstat64(int fd, struct stat64* st) {
  return static_cast<int>(::syscall(SYS_fstat, fd, st));
}
PINNEDFS_HIDDEN int __wrap_stat64(const char* path, struct stat64* st) {
  return __wrap_fstatat64(AT_FDCWD, path, st, 0);
}
PINNEDFS_HIDDEN int __wrap_lstat64(const char* path, struct stat64* st) {
  return __wrap_fstatat64(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}

// glibc 2.34 moved the pthread functions into libc.so.6 under a new default version; the
// functions under their original version are the same code, and older systems find them in
// libpthread, which Node itself links. libgcc's unwinder uses these two.
int pinnedfs_pthread_once_base(pthread_once_t*, void (*)());
int pinnedfs_pthread_key_create_base(pthread_key_t*, void (*)(void*));
__asm__(".symver pinnedfs_pthread_once_base, pthread_once@" PINNEDFS_GLIBC_BASE);
__asm__(".symver pinnedfs_pthread_key_create_base, __pthread_key_create@" PINNEDFS_GLIBC_BASE);

PINNEDFS_HIDDEN int __wrap_pthread_once(pthread_once_t* once, void (*init)()) {
  return pinnedfs_pthread_once_base(once, init);
}
PINNEDFS_HIDDEN int __wrap___pthread_key_create(pthread_key_t* key, void (*destructor)(void*)) {
  return pinnedfs_pthread_key_create_base(key, destructor);
}

// The recursive remove's closing threads (native/ops/remove_tree.cc), under the same move.
int pinnedfs_pthread_create_base(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int pinnedfs_pthread_join_base(pthread_t, void**);
__asm__(".symver pinnedfs_pthread_create_base, pthread_create@" PINNEDFS_GLIBC_BASE);
__asm__(".symver pinnedfs_pthread_join_base, pthread_join@" PINNEDFS_GLIBC_BASE);

PINNEDFS_HIDDEN int __wrap_pthread_create(pthread_t* thread, const pthread_attr_t* attr,
                                          void* (*start)(void*), void* arg) {
  return pinnedfs_pthread_create_base(thread, attr, start, arg);
}
PINNEDFS_HIDDEN int __wrap_pthread_join(pthread_t thread, void** result) {
  return pinnedfs_pthread_join_base(thread, result);
}

// std::random_device's arc4random source (GLIBC_2.36). libstdc++'s random.o comes in with the
// exception types the standard library's own error paths name; nothing here uses random_device.
// getentropy (2.25) gives the same kernel randomness; like arc4random, it never answers less.
PINNEDFS_HIDDEN std::uint32_t __wrap_arc4random() {
  std::uint32_t value;
  if (::getentropy(&value, sizeof value) != 0) ::abort();
  return value;
}

#if defined(DLFO_STRUCT_HAS_EH_DBASE)  // glibc 2.35+ headers: the unwinder may call it
// libgcc's unwinder (GLIBC_2.35) asks which loaded object holds a code address and where that
// object's unwind table (PT_GNU_EH_FRAME) is. dl_iterate_phdr, which unwinders used before
// _dl_find_object existed, answers the same question by walking the program headers.
namespace {
struct FindObject {
  std::uintptr_t address;
  dl_find_object* result;
  bool found;
};

int find_object(dl_phdr_info* info, size_t, void* data) {
  auto* want = static_cast<FindObject*>(data);
  std::uintptr_t lo = UINTPTR_MAX;
  std::uintptr_t hi = 0;
  bool inside = false;
  const ElfW(Phdr)* eh_frame = nullptr;
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type == PT_GNU_EH_FRAME) eh_frame = &ph;
    if (ph.p_type != PT_LOAD) continue;
    std::uintptr_t start = info->dlpi_addr + ph.p_vaddr;
    std::uintptr_t end = start + ph.p_memsz;
    if (start < lo) lo = start;
    if (end > hi) hi = end;
    if (want->address >= start && want->address < end) inside = true;
  }
  if (!inside) return 0;
  want->found = true;
  want->result->dlfo_flags = 0;
  want->result->dlfo_map_start = reinterpret_cast<void*>(lo);
  want->result->dlfo_map_end = reinterpret_cast<void*>(hi);
  want->result->dlfo_link_map = nullptr;
  want->result->dlfo_eh_frame =
      eh_frame ? reinterpret_cast<void*>(info->dlpi_addr + eh_frame->p_vaddr) : nullptr;
  return 1;
}
}  // namespace

PINNEDFS_HIDDEN int __wrap__dl_find_object(void* address, dl_find_object* result) {
  FindObject want{reinterpret_cast<std::uintptr_t>(address), result, false};
  ::dl_iterate_phdr(find_object, &want);
  return want.found ? 0 : -1;
}
#endif

}  // extern "C"
