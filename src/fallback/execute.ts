/**
 * The path-based executor itself: the request's shape checked, its root read and verified, then
 * the operation dispatched. `PathAtomicFileSystem.make` builds it with no window in the gap
 * between check and use; the test seam in `testing.ts` builds it with one.
 *
 * @internal
 */
import { Effect, type PlatformError } from "effect"
import * as fsp from "node:fs/promises"
import type { AtomicFileSystem, AtomicRequest, AtomicResult } from "../protocol/wire.ts"
import { batch, type BatchLimits } from "./batch.ts"
import { rootIdentityOf } from "../protocol/root.ts"
import { type CheckThenUseWindow, rootOf, verifyRoot } from "./confine.ts"
import { badArgumentFailure, sysError, toFailure, toPlatformError } from "./failure.ts"
import { glob } from "./glob.ts"
import { operations, type Writes } from "./operations.ts"

/** Every limit of the extension, filled in. @internal */
export interface Limits {
  readonly batchLimits: BatchLimits
  readonly contentLimit: number
  /** Whole-file writes fsync their data before the rename and the directory after. */
  readonly durable: boolean
}

/** The caller's limits, each one it left out taken from `defaults`. @internal */
export const limitsOf = (
  options: {
    readonly batchLimits?: { readonly size?: number | undefined; readonly response?: number | undefined } | undefined
    readonly contentLimit?: number | undefined
    readonly durable?: boolean | undefined
  },
  defaults: Limits
): Limits => ({
  batchLimits: {
    size: options.batchLimits?.size ?? defaults.batchLimits.size,
    response: options.batchLimits?.response ?? defaults.batchLimits.response
  },
  contentLimit: options.contentLimit ?? defaults.contentLimit,
  durable: options.durable ?? defaults.durable
})

const shownPath = (request: unknown): string => {
  const r = request as { path?: unknown; from?: unknown; pattern?: unknown; boundaryRoot?: unknown }
  const p = r?.path ?? r?.from ?? r?.pattern ?? r?.boundaryRoot
  return typeof p === "string" ? p : ""
}

const attempt = <A>(method: string, path: string, run: () => Promise<A>): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: run, catch: (u) => toPlatformError(toFailure(u, path), method) })

const identify = async (path: unknown): Promise<string> => {
  if (typeof path !== "string" || !path.startsWith("/") || path.includes("\0")) {
    throw badArgumentFailure("identifyRoot needs an absolute path without NUL bytes")
  }
  // Followed on purpose: a workspace given through a link is identified by the directory it names.
  const st = await fsp.stat(path, { bigint: true })
  if (!st.isDirectory()) throw sysError("ENOTDIR", "stat", path)
  return rootIdentityOf(st)
}

/** @internal */
export const executor = ({ batchLimits, contentLimit, durable }: Limits, window?: CheckThenUseWindow): AtomicFileSystem => {
  const execute = (request: unknown): Effect.Effect<unknown, PlatformError.PlatformError> => {
    const operation = (request as { operation?: unknown } | null)?.operation
    const method = typeof operation === "string" ? operation : "execute"
    const path = shownPath(request)
    if (typeof request !== "object" || request === null) {
      return Effect.fail(toPlatformError(badArgumentFailure("request must be an object"), method))
    }
    const fields = request as Record<string, unknown>
    if (operation === "glob") {
      return attempt(method, path, async () => {
        const root = rootOf(fields, window)
        await verifyRoot(root)
        return root
      }).pipe(Effect.flatMap((root) => glob(root, fields)))
    }
    if (operation === "batch") {
      return attempt(method, path, () => batch(rootOf(fields, window), fields, batchLimits))
    }
    if (typeof operation !== "string" || !Object.hasOwn(operations, operation)) {
      return Effect.fail(toPlatformError(badArgumentFailure(`unknown operation '${String(operation)}'`, path), method))
    }
    const run = operations[operation as keyof typeof operations] as (
      root: ReturnType<typeof rootOf>,
      request: Record<string, unknown>,
      budget: undefined,
      writes: Writes
    ) => Promise<unknown>
    return attempt(method, path, async () => {
      const root = rootOf(fields, window)
      await verifyRoot(root)
      return run(root, fields, undefined, { contentLimit, durable })
    })
  }
  // No `noFollowAuthorization`: that claim is for an executor that pins a root handle and refuses
  // links while traversing from it. This one resolves paths again at use, so a kernel must
  // authorize over it through the host's own realPath and hard-link guard, as over any path host.
  return {
    identifyRoot: (path) => attempt("identifyRoot", typeof path === "string" ? path : "", () => identify(path)),
    execute: execute as <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>,
    batchLimits,
    contentLimit
  }
}
