// Operations not yet written. Each answers ENOSYS with a description, never a wrong result; every
// function here is removed as its real implementation lands in the file ops.h names for it.
#include "ops.h"

namespace pinnedfs::ops {

namespace {
Result<Value> pending(const char* name) {
  Error e = sys_error(ENOSYS, name);
  e.description = std::string(name) + " is not implemented yet";
  return e;
}
}  // namespace

Result<Value> read_link(const Root&, const Request&) { return pending("readLink"); }
Result<Value> real_path(const Root&, const Request&) { return pending("realPath"); }
Result<Value> resolve(const Root&, const Request&) { return pending("resolve"); }
Result<Value> read_directory(const Root&, const Request&) { return pending("readDirectory"); }
Result<Value> glob(const Root&, const Request&) { return pending("glob"); }
Result<Value> write_file(const Root&, const Request&) { return pending("writeFile"); }
Result<Value> make_directory(const Root&, const Request&) { return pending("makeDirectory"); }
Result<Value> mkdirs(const Root&, const Request&) { return pending("mkdirs"); }
Result<Value> remove(const Root&, const Request&) { return pending("remove"); }
Result<Value> rmdirs(const Root&, const Request&) { return pending("rmdirs"); }
Result<Value> rename(const Root&, const Request&) { return pending("rename"); }
Result<Value> chmod(const Root&, const Request&) { return pending("chmod"); }
Result<Value> chown(const Root&, const Request&) { return pending("chown"); }

}  // namespace pinnedfs::ops
