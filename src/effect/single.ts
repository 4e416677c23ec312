/**
 * One request, one native trip. Every read is bounded by the read limit, as a write's payload is,
 * so no file is held whole past it. A path-only read (every `readFile`, `stat`, `exists`, and
 * authorization's `resolve`) takes the short way: the same lease, identity check, in-worker root
 * re-check and answer as {@link single}, in one callback and one native promise, because it is the
 * call a kernel makes most.
 *
 * @since 0.1.0
 */
import { Effect, type PlatformError, Result } from "effect"
import { native, type NativeRequest, type NativeRootHandle } from "../internal/native.ts"
import type { Root } from "../protocol/root.ts"
import { nativeFailure, pinFailure, verifyOf, wrongIdentity } from "./pinning.ts"
import { type Planned, settle } from "./requests.ts"
import type { Lease, RootCache } from "./rootCache.ts"
import type { Trips } from "./trips.ts"

/**
 * Operations the compact native calls carry: a path and, for readDirectory, `recursive`; nothing
 * else. The addon's operation table says which (its `pathOnly` column).
 */
const pathOnlyOps: ReadonlySet<number> = new Set(native.opTable.filter((r) => r.pathOnly).map((r) => r.code))

/**
 * Whether a native request is a path and nothing else (so it may travel in the compact forms).
 *
 * @since 0.1.0
 * @category requests
 */
export const isPathOnly = (request: NativeRequest): boolean => {
  if (!pathOnlyOps.has(request.op) || typeof request.path !== "string") return false
  // A loop, not `Object.keys(...).every`: every read passes here, and needs no array of its keys.
  for (const k in request) if (k !== "op" && k !== "path" && k !== "recursive") return false
  return true
}

const bounded = (request: NativeRequest, readLimit: number): NativeRequest =>
  request.op === native.ops.readFile ? { ...request, maxBytes: readLimit } : request

/**
 * Runs one planned request on a handle already leased and checked.
 *
 * @since 0.1.0
 * @category execution
 */
export const single = (cache: RootCache, readLimit: number, handle: NativeRootHandle, lease: Lease, roots: Root, planned: Planned) =>
  Effect.tryPromise({
    try: () => handle.execute(bounded(planned.native, readLimit), verifyOf(roots)),
    catch: nativeFailure(cache, lease, roots, planned)
  }).pipe(Effect.flatMap((value) => Effect.fromResult(settle(planned, value))))

/**
 * A path-only read, leased, checked and submitted to `trips` (one native trip for the reads of a
 * turn), for a caller inside an `Effect.callback` (`execute` decodes and starts the read in one
 * callback, so a read costs its fiber one primitive): `resume` gets the answer. The lease is released when the native work settles, so an interrupted request
 * still holds its root until the worker is done with it.
 *
 * @since 0.1.0
 * @category execution
 */
export const pathOnly = (
  cache: RootCache,
  readLimit: number,
  roots: Root,
  planned: Planned,
  trips: Trips,
  resume: (effect: Effect.Effect<unknown, PlatformError.PlatformError>) => void
): void => {
  const lease = cache.acquire(roots.boundaryRoot, roots.rootIdentity)
  const request = planned.native
  const answer = (value: unknown) => {
    cache.release(lease)
    let result: ReturnType<typeof settle>
    try {
      result = settle(planned, value)
    } catch (defect) {
      return resume(Effect.die(defect))
    }
    resume(Result.isSuccess(result) ? Effect.succeed(result.success) : Effect.fail(result.failure))
  }
  const refuse = (u: unknown) => {
    cache.release(lease)
    resume(Effect.fail(nativeFailure(cache, lease, roots, planned)(u)))
  }
  const use = (handle: NativeRootHandle) => {
    if (handle.identity !== roots.rootIdentity) {
      cache.evict(lease)
      cache.release(lease)
      return resume(Effect.fail(wrongIdentity(planned.operation, roots, handle)))
    }
    const limit = request.op === native.ops.readFile ? readLimit : undefined
    trips.submit(handle, verifyOf(roots), request.op, request.path!, request.recursive === true, limit, answer, refuse)
  }
  // A cached root is used as it is; only the first request against a root waits for the pin.
  if (lease.handle !== undefined) {
    use(lease.handle)
    return
  }
  lease.pinned.then(use, (u) => {
    cache.evict(lease)
    cache.release(lease)
    resume(Effect.fail(pinFailure(u, roots, planned.operation)))
  })
}
