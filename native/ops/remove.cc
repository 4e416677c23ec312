// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> remove(const Root&, const Request&) { return pending("remove"); }
Result<Value> rmdirs(const Root&, const Request&) { return pending("rmdirs"); }

}  // namespace pinnedfs::ops
