/**
 * A `batch` on one leased root: the members that decoded run in one native trip (path-only reads
 * through the addon's compact form, one array of op codes and one of paths, with no request object
 * per member), and every member answers alone, so one missing file fails alone. A root that changed
 * before or during the run fails the whole batch: its members' answers may describe another
 * directory.
 *
 * @since 0.1.0
 */
import { Effect, type PlatformError, Result } from "effect"
import { native, type NativeErrorInfo, type NativeRequest, type NativeRootHandle } from "../internal/native.ts"
import { fromNativeError } from "../protocol/errors.ts"
import type { Root } from "../protocol/root.ts"
import type { AtomicBatchResponse } from "../protocol/wire.ts"
import type { Settings } from "./options.ts"
import { changedRoot, nativeFailure, verifyOf } from "./pinning.ts"
import { type Member, type Planned, settle } from "./requests.ts"
import type { Lease, RootCache } from "./rootCache.ts"
import { isPathOnly, single } from "./single.ts"

/** What the addon answers for one batch member. */
type NativeEntry = Awaited<ReturnType<NativeRootHandle["batch"]>>[number]

/** A request that only re-checks the root (a batch with nothing runnable still vouches for it). */
const verification = (roots: Root): Planned => ({
  operation: "batch",
  path: roots.boundaryRoot,
  native: { op: native.ops.exists, path: "" },
  finish: () => undefined
})

const readMany = async (
  settings: Settings,
  handle: NativeRootHandle,
  roots: Root,
  requests: ReadonlyArray<NativeRequest>
): Promise<Array<NativeEntry>> => {
  const ops = Uint8Array.from(requests, (r) => r.op)
  const recursive = Uint8Array.from(requests, (r) => (r.recursive === true ? 1 : 0))
  const [failed, values] = await handle.readMany(
    ops,
    requests.map((r) => r.path as string),
    recursive,
    settings.batchLimits.size,
    settings.batchLimits.response,
    verifyOf(roots),
    settings.readLimit
  )
  return values.map((value, i) =>
    failed[i] === 1 ? { ok: false as const, error: value as NativeErrorInfo } : { ok: true as const, value }
  )
}

/**
 * Runs a decoded batch on a handle already leased and checked.
 *
 * @since 0.1.0
 * @category execution
 */
export const batch = (
  cache: RootCache,
  settings: Settings,
  handle: NativeRootHandle,
  lease: Lease,
  roots: Root,
  members: ReadonlyArray<Member>
): Effect.Effect<AtomicBatchResponse, PlatformError.PlatformError> => {
  const runnable = members.flatMap((m) => (m.ok ? [m.planned] : []))
  const failure = nativeFailure(cache, lease, roots, { operation: "batch", path: roots.boundaryRoot })
  const run: Effect.Effect<ReadonlyArray<NativeEntry>, PlatformError.PlatformError> = runnable.length === 0
    ? // Nothing to run, but the answer still vouches for the root: check it the same way.
      Effect.as(single(cache, settings.readLimit, handle, lease, roots, verification(roots)), [])
    : Effect.tryPromise({
        try: () =>
          runnable.every((p) => isPathOnly(p.native))
            ? readMany(
                settings,
                handle,
                roots,
                runnable.map((p) => p.native)
              )
            : handle.batch(
                runnable.map((p) => p.native),
                { ...settings.batchLimits, member: settings.readLimit },
                verifyOf(roots)
              ),
        catch: failure
      })
  return Effect.flatMap(run, (answers) => {
    const changed = answers.find((a) => !a.ok && changedRoot(a.error, roots) !== undefined)
    if (changed !== undefined && !changed.ok) return Effect.fail(failure(changed.error))
    let next = 0
    const entries = members.map((member, index) => {
      if (!member.ok) return { index, path: member.path, result: Result.fail(member.error) }
      const planned = member.planned
      const answer = answers[next++]!
      return {
        index,
        path: planned.path,
        result: answer.ok ? settle(planned, answer.value) : Result.fail(fromNativeError(answer.error, planned.operation, planned.path))
      }
    })
    return Effect.succeed({ rootIdentity: roots.rootIdentity, entries } as AtomicBatchResponse)
  })
}
