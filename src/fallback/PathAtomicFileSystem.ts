/**
 * `PathAtomicFileSystem`: the atomic host extension implemented the way path-based code does it,
 * in plain TypeScript over `node:fs/promises`. It is the baseline the benchmarks measure pinnedfs
 * against, and the thing pinnedfs exists to beat on safety.
 *
 * **It is racy. Do not use it to confine anything an adversary can write to.** Every operation is
 * check-then-use: the absolute request path is mapped into the root by its literal prefix, each
 * component is `lstat`ed from the root (refusing a symbolic link, a `..` above the root, a
 * hard-linked file, a FIFO or device), and then the *path* is handed to the ordinary `fs` call,
 * which resolves it again from the start. Between the check and the use:
 *
 * - any component can be swapped for a symbolic link (rename a directory away, put a link to `/`
 *   in its place), and the `fs` call follows it out of the root: the read, write, `chmod` or
 *   recursive `rm` lands on whatever the link names;
 * - a hard link to a file outside can appear under a name that was checked as absent or
 *   single-linked, and a write through that name changes the outside file;
 * - a FIFO can replace a checked regular file, and the read blocks a libuv thread;
 * - the root itself can be renamed and replaced after its identity was compared, so the whole
 *   operation happens in another directory.
 *
 * The checks narrow the window; they cannot close it, because the kernel resolves the path again
 * for the use and nothing ties that resolution to the one that was checked. The native executor
 * (`pinnedfs/effect`'s `NodeAtomicFileSystem`) is not racy in this way: it resolves from a
 * directory descriptor pinned once, with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` or a
 * component-by-component `openat(O_NOFOLLOW)` walk, so a link met at use time is refused by the
 * kernel itself, and it checks type and link count with `fstat` on the very descriptor it then
 * reads, writes or changes. There is no second resolution for a swap to win.
 *
 * It passes the same functional tests as the native extension on a quiet tree (nobody changing it
 * while an operation runs), with the same results and the same error tags.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem, Layer } from "effect"
import { type AtomicFileSystem, type AtomicHostFileSystem, withAtomicFileSystem } from "../protocol/wire.ts"
import type { BatchLimits } from "./batch.ts"
import { executor, limitsOf } from "./execute.ts"

/**
 * Limits the extension advertises to a kernel.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /** Most members in one batch, and most bytes of file content one batch answer carries. */
  readonly batchLimits?: { readonly size?: number | undefined; readonly response?: number | undefined } | undefined
  /** Most bytes of one `writeFile` payload. */
  readonly contentLimit?: number | undefined
  /**
   * Whole-file writes survive a crash of the machine, not only of the process: the data is fsynced
   * before the rename, the directory after (default false: crash-safe, not durable).
   */
  readonly durable?: boolean | undefined
}

/**
 * Defaults: 256 members and 64 MiB of content per batch answer, 64 MiB per write, writes not
 * fsynced.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults: { readonly batchLimits: BatchLimits; readonly contentLimit: number; readonly durable: boolean } = {
  batchLimits: { size: 256, response: 64 * 1024 * 1024 },
  contentLimit: 64 * 1024 * 1024,
  durable: false
}

/**
 * Builds the path-based extension. Pure: nothing is opened or pinned; every request names its root
 * and is checked against it afresh.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options: Options = {}): AtomicFileSystem => executor(limitsOf(options, defaults))

/**
 * Effect's Node `FileSystem` with the path-based extension attached (to a copy: the shared
 * `NodeFileSystem` service is left as it was).
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options?: Options): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(FileSystem.FileSystem)(
    Effect.gen(function* () {
      const fileSystem = yield* FileSystem.FileSystem
      return withAtomicFileSystem({ ...fileSystem }, make(options)) satisfies AtomicHostFileSystem
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

/**
 * {@link layerWith} the {@link defaults}.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileSystem.FileSystem> = layerWith()
