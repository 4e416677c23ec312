// macOS <fcntl.h> over Linux's: see README.md.
#pragma once
#include_next <fcntl.h>

// Linux only.
#undef O_PATH
#undef O_TMPFILE
#undef O_LARGEFILE
#undef O_NOATIME
#undef AT_EMPTY_PATH
#undef AT_NO_AUTOMOUNT
#undef RENAME_NOREPLACE
#undef RENAME_EXCHANGE
#undef RENAME_WHITEOUT

// macOS only (sys/fcntl.h in the SDK).
#define O_NOFOLLOW_ANY 0x20000000
#define O_EXEC 0x40000000
#undef O_SEARCH
#define O_SEARCH (O_EXEC | O_DIRECTORY)
#define F_GETPATH 50
#define F_FULLFSYNC 51
