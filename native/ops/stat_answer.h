// What a confine probe (discover) and a hold answer alike from an object's stat: the object's kind
// and identity, or the stat's error. One place, so the two programs cannot come to describe the
// same object differently.
#pragma once
#include <sys/stat.h>

#include <cerrno>
#include <string>

#include "../core/entry_kind.h"
#include "../core/error.h"
#include "../core/root.h"

namespace pinnedfs::confine {

// Fills `out` from a stat that returned `rc` (errno still its error): `found`, the kind and the
// identity of `st`; or `refused` and the error of `syscall` on `path`.
template <typename Out, typename Status>
void answer_stat(Out* out, int rc, const struct stat& st, Status found, Status refused,
                 const char* syscall, const std::string& path) {
  if (rc != 0) {
    out->status = refused;
    out->error = sys_error(errno, syscall, path);
    return;
  }
  out->status = found;
  out->type = entry_kind_of_mode(st.st_mode);
  out->identity = identity_of(st);
}

}  // namespace pinnedfs::confine
