/**
 * TEST DOUBLE of the atomic host extension: the path-based executor (`PathAtomicFileSystem`, the
 * one path-based executor pinnedfs has) with every request it receives logged, for counting
 * executor trips, and claiming `noFollowAuthorization` so the kernel resolves through it as it does
 * through the native extension.
 *
 * It is NOT confinement: the path-based executor checks with `lstat` and then uses the path, so it
 * has every race the native executor exists to close. On a quiet tree it answers as the native one.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem, Layer } from "effect"
import { PathAtomicFileSystem } from "../../../src/fallback/index.ts"
import { type AtomicFileSystem, type AtomicRequest, withAtomicFileSystem } from "../../../src/protocol/wire.ts"

/** Every request the double received, for trip-counting tests. */
export interface Trips {
  readonly log: Array<AtomicRequest>
}

/** Builds the double's extension; `options.contentLimit` is advertised as is. */
export const makeFakeAtomic = (options: { readonly contentLimit?: number } = {}): { atomic: AtomicFileSystem; trips: Trips } => {
  const trips: Trips = { log: [] }
  const inner = PathAtomicFileSystem.make({
    batchLimits: { size: 64, response: 1 << 20 },
    contentLimit: options.contentLimit ?? 1 << 20
  })
  const atomic: AtomicFileSystem = {
    ...inner,
    noFollowAuthorization: true,
    execute: (request) =>
      Effect.suspend(() => {
        trips.log.push(request)
        return inner.execute(request)
      })
  }
  return { atomic, trips }
}

/** Node's file system carrying the double's extension. */
export const layerFakeAtomic = (atomic: AtomicFileSystem): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(Effect.service(FileSystem.FileSystem), (fs) => withAtomicFileSystem({ ...fs }, atomic))
  ).pipe(Layer.provide(NodeFileSystem.layer))
