/**
 * One `pinnedfs fix` at a time per workspace. Two runs at once cannot tell their fixers' writes
 * apart: each re-read takes in the other's changes as its own, and a run that fails rolls back
 * what it saw change, the other run's reported, successful fix included. So a run holds its
 * workspace, and a second run on it is refused with nothing done.
 *
 * The hold is a listening Unix socket in Linux's abstract namespace, named by the pinned
 * workspace's identity (`PinnedRoot.identity`: device, inode and birth time, taken from the pinned
 * handle, so the hold names the directory the run works in, not whatever its path names a moment
 * later): binding it is atomic (`EADDRINUSE` for the second run), it is no
 * file (nothing in the workspace or in a temporary directory to leave behind, plant a link at, or
 * clean up), and the kernel drops it when the process ends, however it ends (`SIGKILL`
 * included), so no hold is ever stale. It is per network namespace and per machine, like every
 * lock on a local file system. Elsewhere (no abstract namespace) runs are not held.
 *
 * @since 0.1.0
 */
import * as net from "node:net"

/**
 * Holds the workspace whose pinned identity is `identity` for this process: answers a release,
 * or `undefined` when another run holds it.
 *
 * @since 0.1.0
 */
export const holdWorkspace = async (identity: string): Promise<(() => void) | undefined> => {
  if (process.platform !== "linux") return () => undefined
  return new Promise((resolve, reject) => {
    // Nothing is ever accepted: a connection is closed at once.
    const server = net.createServer((c) => c.destroy())
    server.once("error", (e: NodeJS.ErrnoException) => (e.code === "EADDRINUSE" ? resolve(undefined) : reject(e)))
    server.listen({ path: `\0pinnedfs-fix:${identity}` }, () => {
      // The hold never keeps the process alive by itself.
      server.unref()
      resolve(() => void server.close())
    })
  })
}
