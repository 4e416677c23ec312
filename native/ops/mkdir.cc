// makeDirectory and mkdirs. The program both use (plan, then create through pinned parents) is in
// mkdirs.cc.
#include <fcntl.h>
#include <sys/stat.h>

#include "../core/eintr.h"
#include "mkdirs.h"

namespace pinnedfs::ops {

namespace {
// Node's default for fs.mkdir, which Effect's makeDirectory passes through; the umask applies.
constexpr mode_t kDefaultMode = 0777;

Error refuse_mkdir(int err, int dir, const std::string& leaf, const LexedPath& path,
                   const std::string& shown) {
  if (err == EEXIST && path.must_be_dir) {
    // "ln/" names what the link points at: a link met on the way (contract), not a taken name.
    struct stat st;
    if (::fstatat(dir, leaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode)) {
      return symlink_refusal("mkdir", shown, leaf);
    }
  }
  return sys_error(err, "mkdir", shown);
}
}  // namespace

Result<Value> make_directory(const Root& root, const Request& request) {
  mode_t mode = request.has_mode ? static_cast<mode_t>(request.mode) : kDefaultMode;
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();

  if (!request.recursive) {
    if (path.value().is_root()) return sys_error(EEXIST, "mkdir", request.path);
    return in_parent(root, path.value(), "mkdir", request.path,
                     [&](int dir, const std::string& leaf) -> Result<Value> {
                       int rc = retry_eintr([&] { return ::mkdirat(dir, leaf.c_str(), mode); });
                       if (rc == 0) return Value(std::monostate{});
                       return refuse_mkdir(errno, dir, leaf, path.value(), request.path);
                     });
  }

  // mkdir -p. The usual case is a tree that already exists: one no-follow open of the whole path
  // settles it. Anything else (missing, a file, a link) goes through the program, which finds the
  // precise answer component by component.
  auto whole = open_beneath(root, path.value(), kDirHandleFlags);
  if (whole.ok()) return Value(std::monostate{});
  if (whole.error().refusal != Refusal::None) return whole.take_error();

  // Node applies the same mode, with the umask, to every directory mkdir -p creates; so do we.
  // Exact modes stay a mkdirs feature: makeDirectory must behave as Effect's Node file system does.
  std::vector<MkdirsEntry> plan{
      MkdirsEntry{path.value().joined(), static_cast<std::uint32_t>(mode)}};
  ProgramOptions options;
  options.exact_modes = false;
  options.tolerate_existing = true;
  auto outcome = run_mkdirs_program(root, plan, options);
  if (!outcome.ok()) return outcome.take_error();
  if (outcome.value().failed) {
    Error e = std::move(outcome.value().error);
    e.path = request.path;
    return e;
  }
  // As Node's mkdir -p: the first directory it created (root-relative here), or nothing.
  if (!outcome.value().created.empty()) return Value(Text{outcome.value().created.front().path});
  return Value(std::monostate{});
}

Result<Value> mkdirs(const Root& root, const Request& request) {
  ProgramOptions options;
  options.after_plan = &request.after_plan;
  auto outcome = run_mkdirs_program(root, request.plan, options);
  if (!outcome.ok()) return outcome.take_error();
  return Value(outcome.take());
}

}  // namespace pinnedfs::ops
