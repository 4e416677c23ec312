/**
 * `batch` for the path-based executor: the root checked once, then every member run in order, each
 * failing alone, and file content counted against the answer budget so an oversized member fails
 * by itself rather than the batch.
 *
 * @internal
 */
import { Cause, Effect, Exit, Option, PlatformError, Result } from "effect"
import { isOneOf, pathReads } from "../protocol/operations.ts"
import type { AtomicBatchResponse, AtomicBatchValue } from "../protocol/wire.ts"
import { type RootWithWindow, verifyRoot } from "./confine.ts"
import { badArgumentFailure, toFailure, toPlatformError } from "./failure.ts"
import { glob } from "./glob.ts"
import { type Budget, operations } from "./operations.ts"

/**
 * How much one `batch` may ask for: `size` members at most, and `response` bytes of file content
 * in its answer. Part of `PathAtomicFileSystem.defaults`, so published with it.
 *
 * @since 0.1.0
 */
export interface BatchLimits {
  readonly size: number
  readonly response: number
}

const isRead = isOneOf(pathReads)

const member = async (root: RootWithWindow, request: unknown, budget: Budget): Promise<AtomicBatchValue> => {
  if (typeof request !== "object" || request === null) throw badArgumentFailure("batch member must be an object")
  const fields = request as Record<string, unknown>
  const operation = fields.operation
  if (operation === "resolve") return { operation, resolution: await operations.resolve(root, fields) }
  if (operation === "glob") {
    // A pinnedfs extension, as the native executor has it: the shape a kernel's batch framing gives
    // a glob read, its absolute pattern in `path`.
    const exit = await Effect.runPromiseExit(glob(root, { ...fields, pattern: fields.path }))
    if (Exit.isSuccess(exit)) return { operation, value: exit.value } as unknown as AtomicBatchValue
    throw Option.getOrElse(Cause.findErrorOption(exit.cause), () => Cause.squash(exit.cause))
  }
  if (typeof operation !== "string" || !isRead(operation)) {
    throw badArgumentFailure(`batch member operation '${String(operation)}' is not a read`)
  }
  const run = operations[operation as "exists"] as (r: RootWithWindow, f: Record<string, unknown>, b: Budget) => Promise<unknown>
  return { operation, value: await run(root, fields, budget) } as AtomicBatchValue
}

/** @internal */
export const batch = async (root: RootWithWindow, request: Record<string, unknown>, limits: BatchLimits): Promise<AtomicBatchResponse> => {
  const requests = request.requests
  if (!Array.isArray(requests)) throw badArgumentFailure("batch requests must be an array")
  if (requests.length > limits.size) {
    throw badArgumentFailure(`batch of ${requests.length} members exceeds the limit of ${limits.size}`)
  }
  await verifyRoot(root)
  const budget: Budget = { remaining: limits.response }
  const entries: Array<AtomicBatchResponse["entries"][number]> = []
  for (const [index, r] of requests.entries()) {
    const path = typeof (r as { path?: unknown })?.path === "string" ? (r as { path: string }).path : ""
    const method = typeof (r as { operation?: unknown })?.operation === "string" ? (r as { operation: string }).operation : "batch"
    let result: Result.Result<AtomicBatchValue, PlatformError.PlatformError>
    try {
      result = Result.succeed(await member(root, r, budget))
    } catch (u) {
      result = Result.fail(u instanceof PlatformError.PlatformError ? u : toPlatformError(toFailure(u, path), method))
    }
    entries.push({ index, path, result })
  }
  return { rootIdentity: root.rootIdentity, entries }
}
