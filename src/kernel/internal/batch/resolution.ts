/**
 * Phase 1's resolution of every member of a batch: a no-follow executor answers all of them in one
 * `resolve` batch (a link met costing one more request for its target), overlapped with the root
 * check; another host is asked for `realPath` member by member, a few at a time.
 *
 * @internal
 */
import { Effect, type PlatformError, Result } from "effect"
import type { AtomicBatchRequest, AtomicBatchValue } from "../../../protocol/wire.ts"
import type { BatchRequest } from "../../FileSystemBatch.ts"
import { globPrefix, isInside, toBoundary, toLogical } from "../paths.ts"
import { follow, settledResolution } from "../resolve.ts"
import type { BatchContext, Outcome } from "./context.ts"

const uninspectable = "path component could not be inspected without following it"

type ResolveAnswer = Extract<AtomicBatchValue, { readonly operation: "resolve" }>

/** Each member's path as the executor is asked about it: its boundary spelling, if it has one. */
const boundariesOf = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>) => {
  const { path, root } = cx.auth
  const parts = requests.map((request) =>
    request.operation === "glob" ? globPrefix(path, root, request.path) : { prefix: request.path, rest: [] as ReadonlyArray<string> }
  )
  const boundaries = parts.map(({ prefix }) => toBoundary(path, root, prefix))
  const members: Array<AtomicBatchRequest> = []
  const slot = boundaries.map((boundary) =>
    boundary === undefined ? undefined : members.push({ operation: "resolve", path: boundary }) - 1
  )
  return { parts, boundaries, members, slot }
}

/** The no-follow way: one `resolve` batch, then one request per link met. */
const resolveAll = (
  cx: BatchContext,
  requests: ReadonlyArray<BatchRequest>
): Effect.Effect<Array<Outcome<string>>, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    const { auth } = cx
    const { path, root } = auth
    const { parts, boundaries, members, slot } = boundariesOf(cx, requests)
    const answers = members.length === 0 ? [] : (yield* auth.run({ operation: "batch", requests: members })).entries
    const byIndex = new Map(answers.map((entry) => [entry.index, entry.result] as const))
    const deny = (resource: string, reason: string, cause?: unknown) => Result.fail(auth.deny("fs:read", resource, reason, cause))
    const finish = (i: number, resolved: Outcome<string>): Outcome<string> => {
      if (Result.isFailure(resolved)) return resolved
      const rest = parts[i]!.rest
      const resource = rest.length === 0 ? resolved.success : `${resolved.success}/${rest.join("/")}`
      return isInside(path, root.logicalRoot, resource) ? Result.succeed(resource) : deny(resource, "path is outside the workspace")
    }
    // Settled here without an effect each: every member whose answer met no link (nearly all).
    const outcomes: Array<Outcome<string> | undefined> = requests.map((_request, i) => {
      const boundary = boundaries[i]
      if (boundary === undefined) return finish(i, Result.succeed(path.normalize(parts[i]!.prefix)))
      const at = slot[i]
      const answer = at === undefined ? undefined : byIndex.get(at)
      if (answer === undefined || Result.isFailure(answer) || answer.success.operation !== "resolve") {
        return deny(
          toLogical(path, root, boundary),
          uninspectable,
          answer !== undefined && Result.isFailure(answer) ? answer.failure : undefined
        )
      }
      const settled = settledResolution(path, root, boundary, answer.success.resolution)
      if (settled === undefined) return undefined
      return finish(
        i,
        Result.mapError(settled, (refusal) => auth.deny("fs:read", refusal.resource, refusal.reason, refusal.cause))
      )
    })
    // A member that met a link: its target is followed, one request at a time, in request order.
    const resolveOne = (boundaryPath: string) => auth.run({ operation: "resolve", path: boundaryPath })
    for (const [i, outcome] of outcomes.entries()) {
      if (outcome !== undefined) continue
      const answer = byIndex.get(slot[i]!) as Result.Success<AtomicBatchValue, PlatformError.PlatformError>
      const followed = yield* Effect.result(
        follow(path, root, resolveOne, boundaries[i]!, (answer.success as ResolveAnswer).resolution, 0).pipe(
          Effect.mapError((refusal) => auth.deny("fs:read", refusal.resource, refusal.reason, refusal.cause))
        )
      )
      outcomes[i] = finish(i, followed)
    }
    return outcomes as Array<Outcome<string>>
  })

/**
 * The root checked while every member is resolved the no-follow way: a resolution has no effect
 * and nothing is asked until both are in, and a root found changed fails the batch before any
 * resolution is looked at, as when the check came first. Two trips overlapped instead of queued.
 */
const verifiedWhileResolving = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>) =>
  Effect.flatMap(
    Effect.all([Effect.result(cx.verifyRoot), Effect.result(resolveAll(cx, requests))], { concurrency: 2 }),
    ([verified, resolved]) =>
      Result.isFailure(verified)
        ? Effect.fail(verified.failure)
        : Result.isFailure(resolved)
          ? Effect.fail(resolved.failure)
          : Effect.succeed(resolved.success)
  )

/**
 * Phase 1's resolution of every member over a host asked for `realPath`, a few at a time.
 *
 * @internal
 */
export const resolveEach = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>) =>
  Effect.forEach(requests, (request) => Effect.result(cx.auth.resolve(cx.needOf(request))), { concurrency: 16 })

/**
 * The root checked and every member resolved, the way the executor allows: the resource each
 * member names, or its refusal.
 *
 * @internal
 */
export const verifiedResources = (
  cx: BatchContext,
  requests: ReadonlyArray<BatchRequest>
): Effect.Effect<Array<Outcome<string>>, PlatformError.PlatformError> =>
  cx.noFollow ? verifiedWhileResolving(cx, requests) : Effect.andThen(cx.verifyRoot, resolveEach(cx, requests))
