// The prebuilds' stand-ins for glibc 2.29+ symbols (native/compat/glibc_floor.cc) answer as the
// glibc they replace does, checked side by side on this machine's glibc.
#if defined(__linux__)
#include <features.h>
#endif
#if defined(__GLIBC__)
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <set>

#include "harness.h"

extern "C" {
extern char __wrap___libc_single_threaded;
int __wrap_fstatat64(int, const char*, struct stat64*, int);
int __wrap_fstat64(int, struct stat64*);
int __wrap_stat64(const char*, struct stat64*);
int __wrap_lstat64(const char*, struct stat64*);
int __wrap_pthread_once(pthread_once_t*, void (*)());
int __wrap_pthread_create(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*);
int __wrap_pthread_join(pthread_t, void**);
std::uint32_t __wrap_arc4random();
#if defined(DLFO_STRUCT_HAS_EH_DBASE)
int __wrap__dl_find_object(void*, dl_find_object*);
#endif
}

namespace {
bool same_file(const struct stat64& a, const struct stat64& b) {
  return a.st_dev == b.st_dev && a.st_ino == b.st_ino && a.st_mode == b.st_mode &&
         a.st_nlink == b.st_nlink && a.st_size == b.st_size &&
         a.st_mtim.tv_sec == b.st_mtim.tv_sec && a.st_mtim.tv_nsec == b.st_mtim.tv_nsec;
}

int g_once_runs = 0;
void count_once() {
  ++g_once_runs;
}
}  // namespace

TEST(glibc_floor_stat_family_matches_glibc) {
  std::string dir = pinnedfs::test::scratch_dir();
  pinnedfs::test::write_file(dir + "/f", "hello");
  CHECK(::symlink("f", (dir + "/l").c_str()) == 0);
  int dfd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  CHECK(dfd >= 0);
  struct stat64 want {
  }, got{};
  CHECK(::fstatat64(dfd, "l", &want, AT_SYMLINK_NOFOLLOW) == 0);
  CHECK(__wrap_fstatat64(dfd, "l", &got, AT_SYMLINK_NOFOLLOW) == 0);
  CHECK(S_ISLNK(got.st_mode) && same_file(want, got));
  CHECK(::stat64((dir + "/l").c_str(), &want) == 0);
  CHECK(__wrap_stat64((dir + "/l").c_str(), &got) == 0);
  CHECK(S_ISREG(got.st_mode) && got.st_size == 5 && same_file(want, got));
  CHECK(::lstat64((dir + "/l").c_str(), &want) == 0);
  CHECK(__wrap_lstat64((dir + "/l").c_str(), &got) == 0);
  CHECK(S_ISLNK(got.st_mode) && same_file(want, got));
  CHECK(::fstat64(dfd, &want) == 0);
  CHECK(__wrap_fstat64(dfd, &got) == 0);
  CHECK(S_ISDIR(got.st_mode) && same_file(want, got));
  errno = 0;
  CHECK(__wrap_fstatat64(dfd, "missing", &got, 0) == -1 && errno == ENOENT);
  errno = 0;
  CHECK(__wrap_fstat64(-1, &got) == -1 && errno == EBADF);
  ::close(dfd);
}

TEST(glibc_floor_threading_answers) {
  CHECK(__wrap___libc_single_threaded == 0);
  pthread_once_t once = PTHREAD_ONCE_INIT;
  CHECK(__wrap_pthread_once(&once, count_once) == 0);
  CHECK(__wrap_pthread_once(&once, count_once) == 0);
  CHECK(g_once_runs == 1);
}

TEST(glibc_floor_thread_runs_and_joins) {
  int ran = 0;
  pthread_t thread;
  auto body = [](void* arg) -> void* {
    *static_cast<int*>(arg) = 7;
    return arg;
  };
  CHECK(__wrap_pthread_create(&thread, nullptr, body, &ran) == 0);
  void* result = nullptr;
  CHECK(__wrap_pthread_join(thread, &result) == 0);
  CHECK(ran == 7);
  CHECK(result == &ran);
}

TEST(glibc_floor_arc4random_draws_kernel_randomness) {
  std::set<std::uint32_t> seen;
  for (int i = 0; i < 8; i++) seen.insert(__wrap_arc4random());
  CHECK(seen.size() > 1);
}

#if defined(DLFO_STRUCT_HAS_EH_DBASE)
TEST(glibc_floor_find_object_matches_glibc) {
  // An address in this binary, one in libc, and one in no object at all.
  void* addresses[] = {reinterpret_cast<void*>(&count_once), reinterpret_cast<void*>(&::write)};
  for (void* address : addresses) {
    dl_find_object want{}, got{};
    CHECK(::_dl_find_object(address, &want) == 0);
    CHECK(__wrap__dl_find_object(address, &got) == 0);
    // What libgcc reads: the unwind table's address. The mapping bounds bracket the address.
    CHECK(got.dlfo_eh_frame != nullptr && got.dlfo_eh_frame == want.dlfo_eh_frame);
    CHECK(got.dlfo_map_start <= address && address < got.dlfo_map_end);
  }
  dl_find_object none{};
  CHECK(::_dl_find_object(reinterpret_cast<void*>(16), &none) == -1);
  CHECK(__wrap__dl_find_object(reinterpret_cast<void*>(16), &none) == -1);
}
#endif
#endif
