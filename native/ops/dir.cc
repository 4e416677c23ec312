// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> read_directory(const Root&, const Request&) { return pending("readDirectory"); }

}  // namespace pinnedfs::ops
