/**
 * The atomic host extension over the native addon: what a permission kernel finds on its
 * `FileSystem.FileSystem` service under `Symbol.for("@smthrs/kernel/AtomicFileSystem")` and sends
 * every file operation through, one serializable request at a time.
 *
 * Each request names its pinned root (`boundaryRoot`, `logicalRoot`, `rootIdentity`). The root is
 * pinned once at `boundaryRoot` (cached, see `rootCache.ts`), its handle's identity must be
 * `rootIdentity`, and every request re-checks in the worker that the root path still names that
 * handle, so a workspace renamed away and replaced answers `Busy` (`workspace_identity_changed`)
 * instead of working on the stranger. A `logicalRoot` spelled differently is checked the same way
 * in the same trip: paths are located under either spelling, so both must name the pinned root.
 * Every read is bounded by `contentLimit`, as every write payload is. Paths are resolved beneath the handle with no symbolic link
 * followed, no `..` above the root, and no hard-linked file touched.
 *
 * @since 0.1.0
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem, Layer, type PlatformError, Result } from "effect"
import { native } from "../internal/native.ts"
import { badArgument, fromNativeError } from "../protocol/errors.ts"
import type { PinnedAtomicFileSystem, PinnedRequest, PinnedResult } from "../protocol/extensions.ts"
import { type AtomicHostFileSystem, withAtomicFileSystem } from "../protocol/wire.ts"
import { batch } from "./batch.ts"
import { type Options, type Settings, settings } from "./options.ts"
import { withRoot } from "./pinning.ts"
import { makeOpen } from "./open.ts"
import { type Decoded, decodeRequest } from "./requests.ts"
import { RootCache } from "./rootCache.ts"
import type { PinnedFileHandle } from "../root/handle.ts"
import { isPathOnly, pathOnly, single } from "./single.ts"
import { Trips } from "./trips.ts"

export {
  /** @since 0.1.0 */
  defaults,
  /** @since 0.1.0 */
  type Options
} from "./options.ts"

/** Sends a decoded request that is not a path-only read (see `execute`) down its path: one request, or a batch. */
const run = (cache: RootCache, settings: Settings, decoded: Decoded): Effect.Effect<unknown, PlatformError.PlatformError> =>
  decoded._tag === "Single"
    ? withRoot(cache, decoded.roots, decoded.planned.operation, (handle, lease) =>
        single(cache, settings.readLimit, handle, lease, decoded.roots, decoded.planned)
      )
    : withRoot(cache, decoded.roots, "batch", (handle, lease) => batch(cache, settings, handle, lease, decoded.roots, decoded.members))

/**
 * `execute`: decode (a malformed request never reaches the addon), then run. Decoded when the
 * effect runs, not when it is built. One `Effect.callback` does both: a path-only read (the call
 * a kernel makes most) starts its native call in it, and anything else resumes with its effect, so
 * a read costs its fiber one primitive and no suspension of its own.
 */
const execute =
  (cache: RootCache, settings: Settings, trips: Trips) =>
  <R extends PinnedRequest>(request: R): Effect.Effect<PinnedResult<R>, PlatformError.PlatformError> =>
    Effect.callback<unknown, PlatformError.PlatformError>((resume) => {
      // Nothing is returned from here: what a callback's registration returns is its interruption.
      const decoded = decodeRequest(request, settings.limits)
      if (Result.isFailure(decoded)) resume(Effect.fail(decoded.failure))
      else if (decoded.success._tag === "Single" && isPathOnly(decoded.success.planned.native)) {
        pathOnly(cache, settings.readLimit, decoded.success.roots, decoded.success.planned, trips, resume)
      } else resume(run(cache, settings, decoded.success))
    }) as Effect.Effect<PinnedResult<R>, PlatformError.PlatformError>

/**
 * `identifyRoot`: the directory's root identity, `dev:ino` from the addon's 64-bit values and its
 * birth time or generation (see `rootIdentityPattern`): what a root pinned there will have.
 */
const identifyRoot = (path: string): Effect.Effect<string, PlatformError.PlatformError> =>
  Effect.suspend(() => {
    if (typeof path !== "string" || path.includes("\0") || !path.startsWith("/")) {
      return Effect.fail(badArgument("identifyRoot", "root path must be an absolute string without NUL bytes"))
    }
    return Effect.tryPromise({
      try: () => native.identifyRoot(path),
      catch: (u) => fromNativeError(u, "identifyRoot", path)
    })
  })

/**
 * Builds the extension. Options are checked here, synchronously: a bad option is a programming
 * error (`RangeError`), not a request failure. Each root the extension pins is kept in its own
 * cache, closed by `close`, as is every handle `open` answered that is still open.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): PinnedAtomicFileSystem => {
  const checked = settings(options)
  const cache = new RootCache(checked.rootCacheSize, checked.strategy)
  const live = new Set<PinnedFileHandle>()
  return {
    noFollowAuthorization: true,
    resolvesAsAsked: !native.spellingMayDiffer,
    identifyRoot,
    execute: execute(cache, checked, new Trips(checked.readLimit)),
    batchLimits: checked.batchLimits,
    contentLimit: checked.contentLimit,
    close: () => {
      cache.close()
      for (const handle of live) void handle.close()
      live.clear()
    },
    open: makeOpen(cache, checked.readLimit, live)
  }
}

/**
 * `FileSystem.FileSystem`: `@effect/platform-node`'s Node file system with the extension attached,
 * built from `options`. The extension's pinned roots are closed when the layer's scope closes.
 *
 * @since 0.1.0
 * @category layers
 */
export const layerWith = (options?: Options): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(FileSystem.FileSystem)(
    Effect.gen(function* () {
      const fileSystem = yield* FileSystem.FileSystem
      const atomic = yield* Effect.acquireRelease(
        Effect.sync(() => make(options)),
        (a) => Effect.sync(() => a.close())
      )
      // A copy: the Node service object is not ours to decorate.
      const host: AtomicHostFileSystem = withAtomicFileSystem({ ...fileSystem }, atomic)
      return host
    })
  ).pipe(Layer.provide(NodeFileSystem.layer))

/**
 * `FileSystem.FileSystem` with the extension attached, default options.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<FileSystem.FileSystem> = layerWith()
