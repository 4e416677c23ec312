// Huge-page advice (declared in platform.h): macOS has no madvise for it, so nothing is done.
#include "../platform.h"

namespace pinnedfs::platform {

void advise_huge_pages(void*, std::size_t) {}

}  // namespace pinnedfs::platform
