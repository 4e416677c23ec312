// symlink and link: new names beneath the root, made from held parents.
//
// symlink checks the text it is given: absolute text, or text whose lexical resolution from the
// link's own directory climbs above the root, is refused (Go's Root.Symlink writes any text). A
// link that pinnedfs refuses to follow anyway is still a trap for every other program in the
// workspace (an editor, a build), so none is ever made that points out.
//
// link makes a second name with linkat and no AT_SYMLINK_FOLLOW: a final link is linked itself, as
// Go's Root.Link does. The result has two names, so by the hard-link rule neither is read, written
// or copied through pinnedfs afterwards; a source that already has more than one name is refused
// (its other name may lie outside, and a new name inside would hand that object to the tools the
// root serves).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../core/eintr.h"
#include "../platform/platform.h"
#include "fileops.h"

namespace pinnedfs::ops {

Result<Value> symlink(const Root& root, const Request& request) {
  auto path = prepare_path(root, request.path);
  if (!path.ok()) return path.take_error();
  if (path.value().is_root()) return sys_error(EEXIST, "symlink", request.path);
  if (path.value().must_be_dir) {
    return bad_argument("a symbolic link's own path cannot end in '/'", request.path);
  }
  std::vector<std::string> dir(path.value().parts.begin(), path.value().parts.end() - 1);
  auto within = link_text_within(dir, request.target, "symlink", request.path);
  if (!within.ok()) return within.take_error();
  // The parent opened, proven beneath the root, and the link made through that proof.
  auto made = in_parent(root, path.value(), "symlink", request.path,
                        [&](int dir, const std::string& leaf) -> Status {
                          if (::symlinkat(request.target.c_str(), dir, leaf.c_str()) != 0) {
                            return sys_error(errno, "symlink", request.path);
                          }
                          return ok_status();
                        });
  if (!made.ok()) return made.take_error();
  return Value(std::monostate{});
}

Result<Value> link(const Root& root, const Request& request) {
  auto from = prepare_path(root, request.path);
  if (!from.ok()) return from.take_error();
  auto to = prepare_path(root, request.to);
  if (!to.ok()) return to.take_error();
  if (from.value().is_root()) return sys_error(EPERM, "link", request.path);
  if (to.value().is_root()) return sys_error(EEXIST, "link", request.to);
  if (from.value().must_be_dir || to.value().must_be_dir) {
    return bad_argument("a hard link's paths cannot end in '/'",
                        from.value().must_be_dir ? request.path : request.to);
  }
  auto source = held_parent(root, from.value(), "link", request.path);
  if (!source.ok()) return source.take_error();
  auto target = held_parent(root, to.value(), "link", request.to);
  if (!target.ok()) return target.take_error();
  // Looked at through the source's handle; acted through only once proven again below.
  int sdir = source.value().dir.look();
  const std::string& sleaf = source.value().leaf;
  struct stat st;
  if (::fstatat(sdir, sleaf.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
    return sys_error(errno, "link", request.path);
  }
  if (S_ISDIR(st.st_mode)) return sys_error(EPERM, "link", request.path);
  auto hard = refuse_hard_link(st, request.path, "link");
  if (!hard.ok()) return hard.take_error();
#if defined(O_PATH)
  // A file bind-mounted over the source name belongs to another mount: refused as the mount it is
  // (linkat would answer EXDEV).
  int raw = retry_eintr([&] { return ::openat(sdir, sleaf.c_str(), kObjectHandleFlags); });
  if (raw < 0) return explain_open_failure(sdir, sleaf, errno, "link", request.path);
  Fd object(raw);
  auto same = same_mount(root, object.get(), request.path);
  if (!same.ok()) return same.take_error();
#endif
  // Both handles proven again right before the act: the checks above took time.
  auto s_still = source.value().dir.prove(root, "link", request.path);
  if (!s_still.ok()) return s_still.take_error();
  auto t_still = target.value().dir.prove(root, "link", request.to);
  if (!t_still.ok()) return t_still.take_error();
  int rc = ::linkat(s_still.value().fd(), sleaf.c_str(), t_still.value().fd(),
                    target.value().leaf.c_str(), 0);
  if (rc != 0) return sys_error(errno, "link", request.path);
  return Value(std::monostate{});
}

}  // namespace pinnedfs::ops
