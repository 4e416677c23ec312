/**
 * Pinning the root a kernel or a confined view resolves everything against: its canonical path and
 * its identity, once, at composition.
 *
 * @internal
 */
import { Effect, type FileSystem, Option, type PlatformError } from "effect"
import type { AtomicFileSystem } from "../../protocol/wire.ts"

/**
 * The identity of the directory `path` names: the executor's exact `"dev:ino"` when it offers
 * one (numeric file ids can exceed a double), else the host's `stat`, and `Option.none` when the
 * host reports no inode (an isolated volume, whose attestation is its boundary).
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
