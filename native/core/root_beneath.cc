// A root pinned at a directory beneath another root (PinnedRoot.openRoot): the new handle is opened
// from the parent's by the parent's own resolution, never by a path the kernel resolves afresh, so
// a link, a mount or a directory moved out on the way is refused exactly as any operation refuses
// it. From then on the new root is a root of its own: its operations resolve from its handle, and
// `..` above it is refused, so nothing reaches the parent.
#include <fcntl.h>

#include "../platform/platform.h"
#include "eintr.h"
#include "resolve.h"
#include "root.h"

namespace pinnedfs {

Result<std::shared_ptr<Root>> Root::pin_beneath(const Root& parent, const std::string& relative) {
  auto lexed = prepare_path(parent, relative);
  if (!lexed.ok()) return lexed.take_error();
  // O_RDONLY (not O_PATH): the new root lists and acts through this descriptor. O_NOFOLLOW refuses
  // a trailing link, the strategy's resolution any link on the way.
  auto opened = open_beneath(parent, lexed.value(), O_RDONLY | O_DIRECTORY | O_NONBLOCK);
  if (!opened.ok()) return opened.take_error();
  Held held = Held::from_lookup(parent, opened.take(), lexed.value().joined());
  // A mount point is a boundary the parent's operations never cross; neither does a root opened
  // through it.
  auto same = same_mount(parent, held.look(), relative);
  if (!same.ok()) return same.take_error();
  auto still = held.prove(parent, "openat", relative);
  if (!still.ok()) return still.take_error();
  int proven = still.value().fd();
  int raw = retry_eintr([&] { return ::fcntl(proven, F_DUPFD_CLOEXEC, 0); });
  if (raw < 0) return sys_error(errno, "fcntl", relative);
  Fd fd(raw);
  auto identity = identify_fd(fd.get(), relative);
  if (!identity.ok()) return identity.take_error();
  auto mount = platform::mount_of(fd.get());
  if (!mount.ok()) return mount.take_error();
  const std::string& joined = lexed.value().joined();
  std::string path = joined.empty() ? parent.path() : parent.path() + "/" + joined;
  // The parent's strategy (chosen, and probed, for this kernel already) and its treatment of links.
  return std::shared_ptr<Root>(new Root(std::move(fd), identity.value(), mount.value(),
                                        std::move(path), parent.strategy(), parent.links()));
}

}  // namespace pinnedfs
