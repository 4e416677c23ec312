/**
 * The questions of a batch, once every member is resolved: the client's (the grant store asked
 * about each resource in request order, then, over a host asked for `realPath`, each member
 * resolved again and refused if it now names another resource), then pinnedfs's (a member's own
 * path asked about when it differs from its resource, and a refused member's own path asked about
 * before its refusal is reported; see `authorize.ts`).
 *
 * @internal
 */
import { Effect, type PlatformError, Result } from "effect"
import type { BatchEntry, BatchRequest } from "../../FileSystemBatch.ts"
import type { PhaseOneRefusal } from "../authorize.ts"
import type { BatchContext, Outcome } from "./context.ts"
import { resolveEach } from "./resolution.ts"

/** Phase 1's refusals, by member position. @internal */
export type Refused = Map<number, PhaseOneRefusal>

const resourceAt = (resources: ReadonlyArray<Outcome<string>>, i: number): string =>
  (resources[i] as Result.Success<string, PlatformError.PlatformError>).success

/** The client's questions, in request order. */
const asked = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>, resources: ReadonlyArray<Outcome<string>>) =>
  Effect.gen(function* () {
    const { auth } = cx
    const refused: Refused = new Map()
    for (const [i, request] of requests.entries()) {
      const resource = resources[i]!
      if (Result.isFailure(resource)) {
        refused.set(i, { error: resource.failure, ownAnswered: false })
        continue
      }
      const own = resource.success === auth.lexicalOf(cx.needOf(request))
      const decided = yield* Effect.result(auth.check("fs:read", resource.success))
      if (Result.isFailure(decided)) refused.set(i, { error: decided.failure, ownAnswered: own })
    }
    return refused
  })

/**
 * The client resolves again once the decisions are in; over a host asked for `realPath` that costs
 * no executor trip. A member that now names another resource is refused.
 */
const confirmed = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>, resources: ReadonlyArray<Outcome<string>>, refused: Refused) =>
  Effect.gen(function* () {
    const { auth } = cx
    const pending = requests.map((request, i) => ({ request, i })).filter(({ i }) => !refused.has(i))
    const again = yield* resolveEach(
      cx,
      pending.map(({ request }) => request)
    )
    for (const [k, { i }] of pending.entries()) {
      const now = again[k]!
      const before = resourceAt(resources, i)
      const own = before === auth.lexicalOf(cx.needOf(requests[i]!))
      if (Result.isFailure(now)) refused.set(i, { error: now.failure, ownAnswered: own })
      else if (now.success !== before) {
        refused.set(i, {
          error: auth.deny("fs:read", before, "path no longer names the resource that was authorized"),
          ownAnswered: own
        })
      }
    }
  })

/**
 * Phase 1's questions for every member: the refusals, by member position.
 *
 * @internal
 */
export const phaseOne = (cx: BatchContext, requests: ReadonlyArray<BatchRequest>, resources: ReadonlyArray<Outcome<string>>) =>
  Effect.gen(function* () {
    const refused = yield* asked(cx, requests, resources)
    if (!cx.noFollow) yield* confirmed(cx, requests, resources, refused)
    return refused
  })

/**
 * pinnedfs's questions, in request order: the positions admitted, and an entry in `entries` for
 * each member refused (its index the caller's, from `indexOf`).
 *
 * @internal
 */
export const phaseTwo = (
  cx: BatchContext,
  requests: ReadonlyArray<BatchRequest>,
  resources: ReadonlyArray<Outcome<string>>,
  refused: Refused,
  indexOf: (i: number) => number,
  entries: Array<BatchEntry>
) =>
  Effect.gen(function* () {
    const { auth } = cx
    const admitted: Array<number> = []
    for (const [i, request] of requests.entries()) {
      const need = cx.needOf(request)
      const refusal = refused.get(i)
      const outcome = yield* Effect.result(
        refusal !== undefined
          ? auth.conceal(need, refusal)
          : auth.entry({ need, resource: resourceAt(resources, i), lexical: auth.lexicalOf(need) })
      )
      if (Result.isFailure(outcome)) entries.push({ index: indexOf(i), path: request.path, result: Result.fail(outcome.failure) })
      else admitted.push(i)
    }
    return admitted
  })
