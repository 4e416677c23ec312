// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> rename(const Root&, const Request&) { return pending("rename"); }

}  // namespace pinnedfs::ops
