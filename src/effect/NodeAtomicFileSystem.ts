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
import type { Strategy } from "../PinnedRoot.ts"
import { native, type NativeErrorInfo, type NativeRequest, type NativeRootHandle } from "../internal/native.ts"
import { badArgument, fromNativeError, identityChanged, isRootChanged } from "../protocol/errors.ts"
import type { PinnedAtomicFileSystem, PinnedRequest, PinnedResult } from "../protocol/extensions.ts"
import { decodeRequest, type Decoded, type Limits, type Member, type Planned, settle } from "./requests.ts"
import { type Lease, RootCache } from "./rootCache.ts"
import type { Root } from "../protocol/root.ts"
import { type AtomicBatchResponse, type AtomicHostFileSystem, withAtomicFileSystem } from "../protocol/wire.ts"

/**
 * How the extension is built.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How paths are resolved beneath a root: `"auto"` (default) uses the kernel's confined lookup
   * where it exists (Linux `openat2`) and the portable walk elsewhere; tests force each.
   */
  readonly strategy?: Strategy | undefined
  /** Most members in one batch (default 256) and most bytes of file content one answer carries (default 64 MiB). */
  readonly batchLimits?: { readonly size?: number | undefined; readonly response?: number | undefined } | undefined
  /**
   * Most bytes of one `writeFile` payload and of one file read (`readFile`, `readFileString`, each
   * batch member); default 64 MiB, at most 2^31. A larger file, or one that grows past it while it
   * is read, fails with `BadArgument` (`toolarge`) before its content is held in memory.
   */
  readonly contentLimit?: number | undefined
  /** Most roots kept pinned at once (default 32); the least recently used is closed first. */
  readonly rootCacheSize?: number | undefined
}

/**
 * Defaults: 256 members and 64 MiB of content a batch, 64 MiB a `writeFile`, 32 pinned roots.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  batchSize: 256,
  batchResponse: 64 * 1024 * 1024,
  contentLimit: 64 * 1024 * 1024,
  rootCacheSize: 32
} as const

const positive = (name: string, value: number | undefined, fallback: number, max: number): number => {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`pinnedfs: ${name} must be an integer between 1 and ${max}, got ${String(value)}`)
  }
  return value
}

/** A request that only re-checks the root (a batch with nothing runnable still vouches for it). */
const verification = (roots: Root): Planned => ({
  operation: "batch",
  path: roots.boundaryRoot,
  native: { op: native.ops.exists, path: "" },
  finish: () => undefined
})

/** What the addon answers for one batch member. */
type NativeEntry = Awaited<ReturnType<NativeRootHandle["batch"]>>[number]

/** Operations `readMany` carries: a path and, for readDirectory, `recursive`; nothing else. */
const pathOnlyOps = new Set<number>([
  native.ops.exists,
  native.ops.stat,
  native.ops.readFile,
  native.ops.readDirectory,
  native.ops.readLink,
  native.ops.realPath,
  native.ops.resolve
])

const isPathOnly = (request: NativeRequest): boolean =>
  pathOnlyOps.has(request.op) && typeof request.path === "string" &&
  Object.keys(request).every((k) => k === "op" || k === "path" || k === "recursive")

/**
 * A batch of path-only reads through the addon's compact form (one array of op codes, one of
 * paths): the same core batch and the same one trip, without a request object per member.
 */
/**
 * What the worker re-checks before (and, for a batch, after) the work: the boundary root path, and
 * the logical root too when it is spelled differently. A request locates its paths under either
 * spelling, so a `logicalRoot` naming another directory would have an outside path answered from
 * inside the root (and a write land there). Checked in the same trip, on every request, like the
 * boundary root: an identity remembered from an earlier request says nothing about where a link
 * in the logical spelling points now.
 */
const verifyOf = (roots: Root): true | string => roots.logicalRoot === roots.boundaryRoot ? true : roots.logicalRoot

/** A root that could not be pinned. */
const pinFailure = (u: unknown, roots: Root, method: string): PlatformError.PlatformError => {
  // The trusted root path no longer names a directory: the workspace is gone or replaced.
  const code = typeof u === "object" && u !== null ? (u as { code?: unknown }).code : undefined
  return code === "ENOENT" || code === "ENOTDIR"
    ? identityChanged(method, roots.boundaryRoot, "the root path no longer names a directory", u)
    : fromNativeError(u, method, roots.boundaryRoot)
}

/** The root spelling a native `identity` refusal names, if it names one of this request's roots. */
const changedRoot = (u: unknown, roots: Root): "boundary" | "logical" | undefined =>
  isRootChanged(u, roots.boundaryRoot) ? "boundary" : isRootChanged(u, roots.logicalRoot) ? "logical" : undefined

const readManyWith = (batchLimits: { readonly size: number; readonly response: number }, contentLimit: number) =>
async (handle: NativeRootHandle, roots: Root, requests: ReadonlyArray<NativeRequest>): Promise<Array<NativeEntry>> => {
  const ops = Uint8Array.from(requests, (r) => r.op)
  const recursive = Uint8Array.from(requests, (r) => (r.recursive === true ? 1 : 0))
  const [failed, values] = await handle.readMany(
    ops,
    requests.map((r) => r.path as string),
    recursive,
    batchLimits.size,
    batchLimits.response,
    verifyOf(roots),
    contentLimit
  )
  return values.map((value, i) =>
    failed[i] === 1 ? { ok: false as const, error: value as NativeErrorInfo } : { ok: true as const, value }
  )
}

/**
 * Builds the extension. Options are checked here, synchronously: a bad option is a programming
 * error (`RangeError`), not a request failure.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (options?: Options): PinnedAtomicFileSystem => {
  const strategy = options?.strategy ?? "auto"
  if (strategy !== "auto" && strategy !== "openat2" && strategy !== "walk") {
    throw new RangeError(`pinnedfs: strategy must be 'auto', 'openat2' or 'walk', got '${String(strategy)}'`)
  }
  const batchLimits = {
    // The addon refuses more than 2^20 members and more than 2^53 bytes whatever we ask.
    size: positive("batchLimits.size", options?.batchLimits?.size, defaults.batchSize, 1 << 20),
    response: positive("batchLimits.response", options?.batchLimits?.response, defaults.batchResponse, 2 ** 53)
  }
  const contentLimit = positive("contentLimit", options?.contentLimit, defaults.contentLimit, 2 ** 31)
  const limits: Limits = { batchSize: batchLimits.size, contentLimit }
  const cacheSize = positive("rootCacheSize", options?.rootCacheSize, defaults.rootCacheSize, 4096)
  const cache = new RootCache(cacheSize, strategy)
  // The native core's ceiling for one file is 2^31 - 1 bytes, one less than contentLimit may be.
  const readLimit = Math.min(contentLimit, 2 ** 31 - 1)
  const readMany = readManyWith(batchLimits, readLimit)

  /** The pinned handle of a lease, checked against the identity the caller authorized. */
  const pinned = (
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
        return Effect.fail(identityChanged(
          method,
          roots.boundaryRoot,
          `the root path names ${handle.identity}, not the authorized ${roots.rootIdentity}`
        ))
      })
    )

  /** Runs `use` on the root a request names, leased for exactly as long as it runs. */
  const withRoot = <A>(
    roots: Root,
    method: string,
    use: (handle: NativeRootHandle, lease: Lease) => Effect.Effect<A, PlatformError.PlatformError>
  ): Effect.Effect<A, PlatformError.PlatformError> =>
    Effect.acquireUseRelease(
      Effect.sync(() => cache.acquire(roots.boundaryRoot, roots.rootIdentity)),
      (lease) => Effect.flatMap(pinned(lease, roots, method), (handle) => use(handle, lease)),
      (lease) => Effect.sync(() => cache.release(lease))
    )

  /**
   * A native rejection as a PlatformError. The root found changed also drops the cached root, and
   * names the root, not the path the request was about.
   */
  const failure = (lease: Lease, roots: Root, planned: Pick<Planned, "operation" | "path">) => (u: unknown) => {
    const changed = changedRoot(u, roots)
    if (changed === undefined) return fromNativeError(u, planned.operation, planned.path)
    // A replaced boundary root makes the pinned handle useless; a logical root that names another
    // directory says nothing against the handle, only against this request's triple.
    if (changed === "boundary") cache.evict(lease)
    return fromNativeError(u, planned.operation, changed === "boundary" ? roots.boundaryRoot : roots.logicalRoot)
  }

  /** A read is bounded by `contentLimit`, as a write's payload is: no file is held whole past it. */
  const bounded = (request: NativeRequest): NativeRequest =>
    request.op === native.ops.readFile ? { ...request, maxBytes: readLimit } : request

  const single = (handle: NativeRootHandle, lease: Lease, roots: Root, planned: Planned) =>
    Effect.tryPromise({ try: () => handle.execute(bounded(planned.native), verifyOf(roots)), catch: failure(lease, roots, planned) }).pipe(
      Effect.flatMap((value) => Effect.fromResult(settle(planned, value)))
    )

  const batch = (
    handle: NativeRootHandle,
    lease: Lease,
    roots: Root,
    members: ReadonlyArray<Member>
  ): Effect.Effect<AtomicBatchResponse, PlatformError.PlatformError> => {
    const runnable = members.flatMap((m) => (m.ok ? [m.planned] : []))
    const run: Effect.Effect<ReadonlyArray<NativeEntry>, PlatformError.PlatformError> = runnable.length === 0
      // Nothing to run, but the answer still vouches for the root: check it the same way.
      ? Effect.as(single(handle, lease, roots, verification(roots)), [])
      : Effect.tryPromise({
        try: () =>
          runnable.every((p) => isPathOnly(p.native))
            ? readMany(handle, roots, runnable.map((p) => p.native))
            : handle.batch(runnable.map((p) => p.native), { ...batchLimits, member: readLimit }, verifyOf(roots)),
        catch: failure(lease, roots, { operation: "batch", path: roots.boundaryRoot })
      })
    return Effect.flatMap(run, (answers) => {
      // A root that changed before or during the run fails every member the same way: that is the
      // batch's failure, not N member failures (their answers may describe another directory).
      const changed = answers.find((a) => !a.ok && changedRoot(a.error, roots) !== undefined)
      if (changed !== undefined && !changed.ok) {
        return Effect.fail(failure(lease, roots, { operation: "batch", path: roots.boundaryRoot })(changed.error))
      }
      let next = 0
      const entries = members.map((member, index) => {
        if (!member.ok) return { index, path: member.path, result: Result.fail(member.error) }
        const planned = member.planned
        const answer = answers[next++]!
        return {
          index,
          path: planned.path,
          result: answer.ok
            ? settle(planned, answer.value)
            : Result.fail(fromNativeError(answer.error, planned.operation, planned.path))
        }
      })
      return Effect.succeed({ rootIdentity: roots.rootIdentity, entries } as AtomicBatchResponse)
    })
  }

  /**
   * A path-only read (every `readFile`, `stat`, `exists`, and authorization's `resolve`): the same
   * lease, identity check, in-worker root re-check and answer as `withRoot` + `single`, in one
   * callback and one native promise. The lease is released when the native work settles, so an
   * interrupted request still holds its root until the worker is done with it.
   */
  const pathOnly = (roots: Root, planned: Planned): Effect.Effect<unknown, PlatformError.PlatformError> =>
    Effect.callback<unknown, PlatformError.PlatformError>((resume) => {
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
        resume(Effect.fail(failure(lease, roots, planned)(u)))
      }
      const use = (handle: NativeRootHandle) => {
        if (handle.identity !== roots.rootIdentity) {
          cache.evict(lease)
          cache.release(lease)
          return resume(Effect.fail(identityChanged(
            planned.operation,
            roots.boundaryRoot,
            `the root path names ${handle.identity}, not the authorized ${roots.rootIdentity}`
          )))
        }
        const limit = request.op === native.ops.readFile ? readLimit : undefined
        handle.call(request.op, request.path!, request.recursive === true, limit, verifyOf(roots)).then(answer, refuse)
      }
      // A cached root is used as it is; only the first request against a root waits for the pin.
      if (lease.handle !== undefined) return use(lease.handle)
      lease.pinned.then(use, (u) => {
        cache.evict(lease)
        cache.release(lease)
        resume(Effect.fail(pinFailure(u, roots, planned.operation)))
      })
    })

  const run = (decoded: Decoded): Effect.Effect<unknown, PlatformError.PlatformError> =>
    decoded._tag === "Single"
      ? isPathOnly(decoded.planned.native)
        ? pathOnly(decoded.roots, decoded.planned)
        : withRoot(decoded.roots, decoded.planned.operation, (handle, lease) =>
          single(handle, lease, decoded.roots, decoded.planned))
      : withRoot(decoded.roots, "batch", (handle, lease) => batch(handle, lease, decoded.roots, decoded.members))

  const execute = <R extends PinnedRequest>(request: R): Effect.Effect<PinnedResult<R>, PlatformError.PlatformError> =>
    Effect.suspend(() => {
      const decoded = decodeRequest(request, limits)
      return Result.isFailure(decoded) ? Effect.fail(decoded.failure) : run(decoded.success)
    }) as Effect.Effect<PinnedResult<R>, PlatformError.PlatformError>

  const identifyRoot = (path: string): Effect.Effect<string, PlatformError.PlatformError> =>
    Effect.suspend(() => {
      if (typeof path !== "string" || path.includes("\0") || !path.startsWith("/")) {
        return Effect.fail(badArgument("identifyRoot", "root path must be an absolute string without NUL bytes"))
      }
      return Effect.tryPromise({
        try: () => native.identify(path),
        catch: (u) => fromNativeError(u, "identifyRoot", path)
      })
    })

  return {
    noFollowAuthorization: true,
    identifyRoot,
    execute,
    batchLimits,
    contentLimit,
    close: () => cache.close()
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
    Effect.gen(function*() {
      const fileSystem = yield* FileSystem.FileSystem
      const atomic = yield* Effect.acquireRelease(Effect.sync(() => make(options)), (a) => Effect.sync(() => a.close()))
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
