// Forced in (-include) ahead of every source in the macOS syntax check: the Linux headers are
// included once here, then the functions only Linux has are poisoned, so using one in code that
// the macOS build compiles is an error here as it would be on a Mac. See README.md.
#pragma once
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#pragma GCC poison statx renameat2 getdents64 openat2 pipe2 dup3 accept4 memfd_create
#pragma GCC poison copy_file_range fallocate posix_fallocate syncfs getrandom close_range
#pragma GCC poison name_to_handle_at open_by_handle_at fstatat64 openat64 readdir64
// glibc's names for struct stat's times; macOS has st_atimespec and friends (sys/stat.h here).
#pragma GCC poison st_atim st_mtim st_ctim
