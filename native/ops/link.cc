// PENDING: stubs until the real implementation lands (see ops.h for what this file holds).
#include "ops.h"

namespace pinnedfs::ops {

Result<Value> read_link(const Root&, const Request&) { return pending("readLink"); }
Result<Value> real_path(const Root&, const Request&) { return pending("realPath"); }
Result<Value> resolve(const Root&, const Request&) { return pending("resolve"); }

}  // namespace pinnedfs::ops
