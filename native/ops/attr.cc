// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> chmod(const Root&, const Request&) { return pending("chmod"); }
Result<Value> chown(const Root&, const Request&) { return pending("chown"); }

}  // namespace pinnedfs::ops
