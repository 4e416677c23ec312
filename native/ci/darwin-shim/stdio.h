// macOS <stdio.h> over Linux's: renameatx_np (macOS 10.12+) and its flags.
#pragma once
#include_next <stdio.h>

#define RENAME_SWAP 0x00000002
#define RENAME_EXCL 0x00000004
#define RENAME_NOFOLLOW_ANY 0x00000010
extern "C" int renameatx_np(int, const char*, int, const char*, unsigned int);
