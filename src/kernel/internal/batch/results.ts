/**
 * The last phase of a batch: the admitted members executed in one executor batch, each answer
 * checked to be the operation asked for, and a listing member's names filtered as the single
 * methods filter theirs.
 *
 * @internal
 */
import { Effect, Result } from "effect"
import type { AtomicBatchValue } from "../../../protocol/wire.ts"
import type { BatchEntry, BatchRequest, BatchValue } from "../../FileSystemBatch.ts"
import { readable, readableNames } from "../listing.ts"
import { childOf, globPrefix, isInside, logicalOf, plainlyBelowLogicalRoot } from "../paths.ts"
import type { BatchContext, Outcome } from "./context.ts"

const publicValue = (cx: BatchContext, request: BatchRequest, answer: Outcome<AtomicBatchValue> | undefined): Outcome<BatchValue> => {
  const { auth } = cx
  if (answer === undefined) return Result.fail(auth.deny("fs:read", request.path, "executor gave no answer for this member"))
  if (Result.isFailure(answer)) return Result.fail(answer.failure)
  return answer.success.operation === request.operation
    ? Result.succeed(answer.success as BatchValue)
    : Result.fail(auth.deny("fs:read", request.path, "executor answered a batch read with another operation"))
}

/** A listing member's names, filtered as the single methods filter theirs. */
const listedOnly = (cx: BatchContext, request: BatchRequest, result: Outcome<BatchValue>): Effect.Effect<Outcome<BatchValue>> => {
  if (Result.isFailure(result)) return Effect.succeed(result)
  const { auth } = cx
  const { path, root } = auth
  const decide = (at: string) => auth.decide("fs:read", at)
  const grantsBelow = (at: string) => auth.grantsBelow("fs:read", at)
  const inWorkspace = (absolutePath: string) => {
    if (plainlyBelowLogicalRoot(root, absolutePath)) return absolutePath
    const at = logicalOf(path, root, absolutePath)
    return isInside(path, root.logicalRoot, at) ? at : undefined
  }
  const value = result.success
  if (value.operation === "glob") {
    const base = logicalOf(path, root, globPrefix(path, root, request.path).prefix)
    return Effect.result(
      Effect.map(
        readable({ path, base, items: value.value, resourceOf: inWorkspace, decide, grantsBelow }),
        (kept): BatchValue => ({ operation: "glob", value: kept })
      )
    )
  }
  if (value.operation === "readDirectory") {
    const base = logicalOf(path, root, request.path)
    const resourceOf = (name: string) => inWorkspace(childOf(path, request.path, name))
    const inside = inWorkspace(request.path)
    return Effect.result(
      Effect.map(
        readableNames({ path, inside, base, names: value.value, resourceOf, decide, grantsBelow }),
        (kept): BatchValue => ({ operation: "readDirectory", value: kept })
      )
    )
  }
  return Effect.succeed(result)
}

/**
 * The admitted members (positions in `requests`) in one executor batch, an entry in `entries` for
 * each (its index the caller's, from `indexOf`).
 *
 * @internal
 */
export const executeAdmitted = (
  cx: BatchContext,
  requests: ReadonlyArray<BatchRequest>,
  admitted: ReadonlyArray<number>,
  indexOf: (i: number) => number,
  entries: Array<BatchEntry>
) =>
  Effect.gen(function* () {
    if (admitted.length === 0) return
    const out = yield* cx.auth.run({ operation: "batch", requests: admitted.map((i) => requests[i]!) })
    const byIndex = new Map(out.entries.map((entry) => [entry.index, entry.result] as const))
    for (const [k, i] of admitted.entries()) {
      const request = requests[i]!
      const result = yield* listedOnly(cx, request, publicValue(cx, request, byIndex.get(k)))
      entries.push({ index: indexOf(i), path: request.path, result })
    }
  })
