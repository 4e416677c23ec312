/**
 * Holding a request's root: lease it from the cache, wait for its pin, check that the pinned
 * handle is the directory the caller authorized (`rootIdentity`), and turn a native rejection into
 * a `PlatformError` that names the root when the root is what changed. A root found replaced is
 * evicted here, so the next request pins afresh instead of working on the stranger.
 *
 * @since 0.1.0
 */
import { Effect, type PlatformError } from "effect"
import type { NativeRootHandle } from "../internal/native.ts"
import { fromNativeError, identityChanged, isRootChanged } from "../protocol/errors.ts"
import type { Root } from "../protocol/root.ts"
import type { Planned } from "./requests.ts"
import type { Lease, RootCache } from "./rootCache.ts"

/**
 * What the worker re-checks before (and, for a batch, after) the work: the boundary root path, and
 * the logical root too when it is spelled differently. A request locates its paths under either
 * spelling, so a `logicalRoot` naming another directory would have an outside path answered from
 * inside the root (and a write land there). Checked in the same trip, on every request, like the
 * boundary root: an identity remembered from an earlier request says nothing about where a link
 * in the logical spelling points now.
 *
 * @since 0.1.0
 * @category roots
 */
export const verifyOf = (roots: Root): true | string => (roots.logicalRoot === roots.boundaryRoot ? true : roots.logicalRoot)

/**
 * A root that could not be pinned: the trusted root path no longer naming a directory is the
 * workspace gone or replaced (`Busy`, `workspace_identity_changed`), anything else the addon's own
 * error.
 *
 * @since 0.1.0
 * @category errors
 */
export const pinFailure = (u: unknown, roots: Root, method: string): PlatformError.PlatformError => {
  const code = typeof u === "object" && u !== null ? (u as { code?: unknown }).code : undefined
  return code === "ENOENT" || code === "ENOTDIR"
    ? identityChanged(method, roots.boundaryRoot, "the root path no longer names a directory", u)
    : fromNativeError(u, method, roots.boundaryRoot)
}

/**
 * The pinned handle is not the directory the caller authorized.
 *
 * @since 0.1.0
 * @category errors
 */
export const wrongIdentity = (method: string, roots: Root, handle: NativeRootHandle): PlatformError.PlatformError =>
  identityChanged(method, roots.boundaryRoot, `the root path names ${handle.identity}, not the authorized ${roots.rootIdentity}`)

/**
 * The root spelling a native `identity` refusal names, if it names one of this request's roots.
 *
 * @since 0.1.0
 * @category roots
 */
export const changedRoot = (u: unknown, roots: Root): "boundary" | "logical" | undefined =>
  isRootChanged(u, roots.boundaryRoot) ? "boundary" : isRootChanged(u, roots.logicalRoot) ? "logical" : undefined

/**
 * A native rejection as a PlatformError. The root found changed also drops the cached root, and
 * names the root, not the path the request was about: a replaced boundary root makes the pinned
 * handle useless, while a logical root naming another directory says nothing against the handle,
 * only against this request's triple.
 *
 * @since 0.1.0
 * @category errors
 */
export const nativeFailure =
  (cache: RootCache, lease: Lease, roots: Root, planned: Pick<Planned, "operation" | "path">) => (u: unknown) => {
    const changed = changedRoot(u, roots)
    if (changed === undefined) return fromNativeError(u, planned.operation, planned.path)
    if (changed === "boundary") cache.evict(lease)
    return fromNativeError(u, planned.operation, changed === "boundary" ? roots.boundaryRoot : roots.logicalRoot)
  }

/** The pinned handle of a lease, checked against the identity the caller authorized. */
const pinned = (
  cache: RootCache,
  lease: Lease,
  roots: Root,
  method: string
): Effect.Effect<NativeRootHandle, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: () => lease.pinned, catch: (u) => u }).pipe(
    Effect.mapError((u) => {
      cache.evict(lease)
      return pinFailure(u, roots, method)
    }),
    Effect.flatMap((handle) => {
      if (handle.identity === roots.rootIdentity) return Effect.succeed(handle)
      cache.evict(lease)
      return Effect.fail(wrongIdentity(method, roots, handle))
    })
  )

/**
 * Runs `use` on the root a request names, leased for exactly as long as it runs.
 *
 * @since 0.1.0
 * @category roots
 */
export const withRoot = <A>(
  cache: RootCache,
  roots: Root,
  method: string,
  use: (handle: NativeRootHandle, lease: Lease) => Effect.Effect<A, PlatformError.PlatformError>
): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.acquireUseRelease(
    Effect.sync(() => cache.acquire(roots.boundaryRoot, roots.rootIdentity)),
    (lease) => Effect.flatMap(pinned(cache, lease, roots, method), (handle) => use(handle, lease)),
    (lease) => Effect.sync(() => cache.release(lease))
  )
