// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> write_file(const Root&, const Request&) { return pending("writeFile"); }

}  // namespace pinnedfs::ops
