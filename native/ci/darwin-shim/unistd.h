// macOS <unistd.h> over Linux's: the getattrlist(2) calls macOS declares there (sys/unistd.h).
#pragma once
#include_next <unistd.h>
#include <stdint.h>

extern "C" {
int getattrlistat(int, const char*, void*, void*, size_t, unsigned long);
int getattrlistbulk(int, void*, void*, size_t, uint64_t);
int fgetattrlist(int, void*, void*, size_t, unsigned int);
}
