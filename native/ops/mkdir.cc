// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> make_directory(const Root&, const Request&) { return pending("makeDirectory"); }
Result<Value> mkdirs(const Root&, const Request&) { return pending("mkdirs"); }

}  // namespace pinnedfs::ops
