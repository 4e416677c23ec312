/**
 * Many reads in two executor trips: one to authorize them all, one to execute them all.
 *
 * A linter over a thousand files should not pay a thousand round trips, nor ask its grant store a
 * thousand times out of order. The batch resolves every member in one `resolve` batch, asks the
 * grant store about each member in request order (so a quota or a one-shot grant goes to the
 * earliest request), and sends the granted reads, each beside a fresh resolution of its path, in one
 * execution batch. A member whose path names another resource by then fails alone. The workspace
 * root's identity is checked before and after.
 *
 * @since 0.1.0
 */
import { Context, Effect, FileSystem, Layer, PlatformError, type Result } from "effect"
import type { BatchRequest, BatchValue } from "../protocol/wire.ts"

/**
 * One member of a batch: a public read, or a `glob` whose `path` is its pattern, read against its
 * `root` (itself read against the workspace root) as the client's batch frames it. A glob member is
 * authorized by its literal prefix and its results are filtered by the read grants exactly as
 * `glob`'s are.
 *
 * @since 0.1.0
 * @category models
 */
export type { BatchRequest, BatchValue }

/**
 * The symbol the guarded file system carries its batch service under.
 *
 * @since 0.1.0
 * @category symbols
 */
export const FileSystemBatchTypeId: unique symbol = Symbol.for("@smthrs/kernel/FileSystemBatch") as never

/**
 * One member's answer. `index` is its position in the request; `path` its absolute path.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchEntry {
  readonly index: number
  readonly path: string
  readonly result: Result.Result<BatchValue, PlatformError.PlatformError>
}

/**
 * A batch's answer: entries sorted by path (then by index), each with its own result.
 *
 * @since 0.1.0
 * @category models
 */
export interface BatchResponse {
  readonly rootIdentity: string
  readonly entries: ReadonlyArray<BatchEntry>
}

/**
 * The batch service.
 *
 * @since 0.1.0
 * @category services
 */
export class FileSystemBatch extends Context.Service<
  FileSystemBatch,
  {
    /** Most members one batch may carry. */
    readonly maxSize: number
    /** Most bytes of content one answer may carry; members past it fail alone. */
    readonly maxResponseBytes: number
    readonly execute: (requests: ReadonlyArray<BatchRequest>) => Effect.Effect<BatchResponse, PlatformError.PlatformError>
  }
>()("pinnedfs/kernel/FileSystemBatch") {}

/**
 * The batch service of a guarded file system, or `undefined` when its executor does not batch.
 *
 * @since 0.1.0
 * @category accessors
 */
export const fromFileSystem = (fileSystem: FileSystem.FileSystem): FileSystemBatch["Service"] | undefined =>
  (fileSystem as { readonly [FileSystemBatchTypeId]?: FileSystemBatch["Service"] })[FileSystemBatchTypeId]

/**
 * The batch service of the guarded `FileSystem` in context. Fails with `PermissionDenied` when that
 * file system is not the kernel's or its executor has no batch protocol.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileSystemBatch, PlatformError.PlatformError, FileSystem.FileSystem> = Layer.effect(
  FileSystemBatch,
  Effect.gen(function* () {
    const fileSystem = yield* FileSystem.FileSystem
    const batch = fromFileSystem(fileSystem)
    if (batch === undefined) {
      return yield* Effect.fail(
        PlatformError.systemError({
          _tag: "PermissionDenied",
          module: "FileSystem",
          method: "batch",
          description: "the file system in context is not a kernel-guarded file system over a batching executor"
        })
      )
    }
    return batch
  })
)
