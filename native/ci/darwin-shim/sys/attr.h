// macOS <sys/attr.h>: the getattrlist(2) family's types and the constants the sources use.
#pragma once
#include <stdint.h>
#include <sys/types.h>

typedef uint32_t attrgroup_t;

struct attrlist {
  unsigned short bitmapcount;
  uint16_t reserved;
  attrgroup_t commonattr;
  attrgroup_t volattr;
  attrgroup_t dirattr;
  attrgroup_t fileattr;
  attrgroup_t forkattr;
};

typedef struct attrreference {
  int32_t attr_dataoffset;
  uint32_t attr_length;
} attrreference_t;

#define ATTR_BIT_MAP_COUNT 5
#define ATTR_CMN_NAME 0x00000001
#define FSOPT_NOFOLLOW 0x00000001
