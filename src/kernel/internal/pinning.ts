/**
 * Pinning the root a kernel or a confined view resolves everything against: its canonical path and
 * its identity, once, at composition.
 *
 * @internal
 */
import { Effect, type FileSystem, Option, type PlatformError } from "effect"
import type { AtomicFileSystem } from "../../protocol/wire.ts"

/**
 * The identity of the directory `path` names: the executor's own when it offers one (pinnedfs's
 * carry the birth time or generation, so a directory that got a deleted workspace's inode number
 * is another identity, and numeric file ids can exceed a double), else the host's `stat` as
 * `"dev:ino"`, as the client's kernel makes it, and `Option.none` when the host reports no inode
 * (an isolated volume, whose attestation is its boundary). Compared as an opaque string, never
 * parsed.
 *
 * @internal
 */
export const identifyRoot = (
  atomic: AtomicFileSystem,
  host: FileSystem.FileSystem,
  path: string
): Effect.Effect<Option.Option<string>, PlatformError.PlatformError> =>
  atomic.identifyRoot === undefined
    ? Effect.map(host.stat(path), (info) => Option.map(info.ino, (ino) => `${info.dev}:${ino}`))
    : Effect.map(atomic.identifyRoot(path), Option.some)
