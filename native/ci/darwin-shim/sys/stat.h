// macOS <sys/stat.h> over Linux's: see README.md. macOS names struct stat's times *timespec and
// adds a birth time; here they are glibc's fields of the same type (the birth time borrows st_ctim:
// only the type matters to a syntax check).
#pragma once
#include_next <sys/stat.h>

#define st_atimespec st_atim
#define st_mtimespec st_mtim
#define st_ctimespec st_ctim
#define st_birthtimespec st_ctim
