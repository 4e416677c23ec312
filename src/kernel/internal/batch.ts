/**
 * The batch algorithm behind {@link FileSystemBatch}: two executor batches for any number of reads
 * (plus one `resolve` per link met on the way).
 *
 * @internal
 */
import { Effect, PlatformError, Result } from "effect"
import type { AtomicBatchRequest, AtomicBatchValue } from "../../effect/wire.ts"
import type { BatchEntry, BatchRequest, BatchValue, FileSystemBatch } from "../FileSystemBatch.ts"
import type { Authorizer } from "./authorize.ts"
import { readable } from "./listing.ts"
import { globPrefix, isInside, logicalOf, toBoundary } from "./paths.ts"
import { follow } from "./resolve.ts"
import { checkMember } from "./batchInput.ts"
import { copyData } from "./snapshot.ts"

type Outcome<A> = Result.Result<A, PlatformError.PlatformError>

/** Path order, then request order. */
const sorted = (entries: Array<BatchEntry>): Array<BatchEntry> =>
  entries.sort((a, b) => a.path < b.path ? -1 : a.path > b.path ? 1 : a.index - b.index)

const badArgument = (description: string) =>
  PlatformError.badArgument({ module: "FileSystem", method: "batch", description })

/** @internal */
export const makeBatch = (
  auth: Authorizer,
  limits: { readonly size: number; readonly response: number },
  verifyRoot: Effect.Effect<void, PlatformError.PlatformError>
): FileSystemBatch["Service"] => {
  const { path, root } = auth
  const resolveOne = (boundaryPath: string) => auth.run({ operation: "resolve", path: boundaryPath })

  /**
   * Where a member's resource is found: the whole path; for `readLink` its parent, the leaf kept;
   * for a glob its literal prefix, the pattern segments kept as written.
   */
  const target = (request: BatchRequest): { readonly walk: string; readonly leaf: string | undefined } => {
    if (request.operation === "glob") {
      const { prefix, rest } = globPrefix(path, root, request.path)
      return { walk: prefix, leaf: rest.length === 0 ? undefined : rest.join("/") }
    }
    const whole = request.path === root.logicalRoot || request.operation !== "readLink"
    return whole
      ? { walk: request.path, leaf: undefined }
      : { walk: path.dirname(request.path), leaf: path.basename(request.path) }
  }

  /** Turns one executor answer about `walk` into the member's resource, following links lexically. */
  const settle = (
    request: BatchRequest,
    answer: Outcome<AtomicBatchValue> | undefined
  ): Effect.Effect<string, PlatformError.PlatformError> => {
    const { leaf, walk } = target(request)
    const boundary = toBoundary(path, root, walk)
    const deny = (resource: string, reason: string, cause?: unknown) =>
      Effect.fail(auth.deny("fs:read", "batch", resource, reason, cause))
    if (boundary === undefined) return deny(request.path, "path is outside the workspace")
    if (answer === undefined || Result.isFailure(answer) || answer.success.operation !== "resolve") {
      return deny(
        request.path,
        "path component could not be inspected without following it",
        answer !== undefined && Result.isFailure(answer) ? answer.failure : undefined
      )
    }
    return follow(path, root, resolveOne, boundary, answer.success.resolution, 0).pipe(
      Effect.mapError((refusal) => auth.deny("fs:read", "batch", refusal.resource, refusal.reason, refusal.cause)),
      Effect.map((resource) => leaf === undefined ? resource : `${resource}/${leaf}`),
      Effect.flatMap((resource) =>
        isInside(path, root.logicalRoot, resource) ? Effect.succeed(resource) : deny(resource, "path is outside the workspace")
      )
    )
  }

  const resolveMember = (request: BatchRequest): AtomicBatchRequest | undefined => {
    const boundary = toBoundary(path, root, target(request).walk)
    return boundary === undefined ? undefined : { operation: "resolve", path: boundary }
  }

  /** One executor batch of `resolve` members; answers aligned with `requests`. */
  const noFollow = auth.atomic.noFollowAuthorization === true

  const resolveAll = (requests: ReadonlyArray<BatchRequest>): Effect.Effect<Array<Outcome<string>>, PlatformError.PlatformError> =>
    // Over a host that does not resolve without following, each member is resolved through the
    // host's realPath, as a single operation is, a few at a time.
    !noFollow
      ? Effect.forEach(
        requests,
        (request) =>
          Effect.result(auth.resource(
            "fs:read",
            "batch",
            request.path,
            request.operation === "glob" ? "glob" : request.operation === "readLink" ? "leaf" : "follow"
          )),
        { concurrency: 16 }
      )
      : Effect.gen(function*() {
      const members: Array<AtomicBatchRequest> = []
      const slot = requests.map((request) => {
        const member = resolveMember(request)
        return member === undefined ? undefined : members.push(member) - 1
      })
      const answers = members.length === 0 ? [] : (yield* auth.run({ operation: "batch", requests: members })).entries
      const byIndex = new Map(answers.map((entry) => [entry.index, entry.result] as const))
      return yield* Effect.forEach(requests, (request, i) => {
        const at = slot[i]
        return Effect.result(settle(request, at === undefined ? undefined : byIndex.get(at)))
      })
    })

  const publicValue = (request: BatchRequest, answer: Outcome<AtomicBatchValue> | undefined): Outcome<BatchValue> => {
    if (answer === undefined) return Result.fail(auth.deny("fs:read", "batch", request.path, "executor gave no answer for this member"))
    if (Result.isFailure(answer)) return Result.fail(answer.failure)
    return answer.success.operation === request.operation
      ? Result.succeed(answer.success as BatchValue)
      : Result.fail(auth.deny("fs:read", "batch", request.path, "executor answered another operation"))
  }

  /**
   * A listing member's names (a `readDirectory` or a glob), filtered by the read grants exactly as
   * the single methods filter theirs. Another member is answered as it is.
   */
  const listedOnly = (request: BatchRequest, resource: string, result: Outcome<BatchValue>): Effect.Effect<Outcome<BatchValue>> => {
    if (Result.isFailure(result)) return Effect.succeed(result)
    const check = (action: "fs:read" | "fs:write", at: string) => auth.check(action, "batch", at)
    const inWorkspace = (absolutePath: string) => {
      const at = logicalOf(path, root, absolutePath)
      return isInside(path, root.logicalRoot, at) ? at : undefined
    }
    const value = result.success
    if (value.operation === "glob") {
      const base = logicalOf(path, root, globPrefix(path, root, request.path).prefix)
      const listed = value.value.map((entry) => ({ item: entry, resource: inWorkspace(entry) }))
      return Effect.result(Effect.map(readable({ path, base, listed, check }), (kept): BatchValue => ({ operation: "glob", value: kept })))
    }
    if (value.operation === "readDirectory") {
      const listed = value.value.map((name) => ({ item: name, resource: inWorkspace(path.join(resource, name)) }))
      return Effect.result(
        Effect.map(readable({ path, base: resource, listed, check }), (kept): BatchValue => ({ operation: "readDirectory", value: kept }))
      )
    }
    return Effect.succeed(result)
  }

  const execute: FileSystemBatch["Service"]["execute"] = (requests) => {
    if (!Array.isArray(requests) || requests.length === 0 || requests.length > limits.size) {
      return Effect.fail(badArgument(`a batch carries 1 to ${limits.size} reads`))
    }
    // Copied now, before any check can suspend: a caller mutating its array meanwhile changes nothing.
    const members: Array<unknown> = []
    for (let index = 0; index < requests.length; index++) {
      const slot = Object.getOwnPropertyDescriptor(requests, index)
      if (slot === undefined || !("value" in slot)) {
        return Effect.fail(badArgument(`batch member ${index} is missing or an accessor`))
      }
      members.push(slot.value)
    }
    const entries: Array<BatchEntry> = []
    const captured: Array<BatchRequest> = []
    /** Position in `captured` → index in the caller's batch. */
    const indexOf: Array<number> = []
    for (const [index, member] of members.entries()) {
      const copied = copyData(member)
      const checked = Result.isFailure(copied)
        ? Result.fail(badArgument(copied.failure))
        : checkMember(copied.success)
      if (Result.isFailure(checked)) {
        const raw = (member as { readonly path?: unknown } | null)?.path
        entries.push({ index, path: typeof raw === "string" ? raw : "", result: Result.fail(checked.failure) })
        continue
      }
      // A glob's pattern is read against its own root, itself read against the workspace root.
      const request = checked.success
      if (request.operation !== "glob") captured.push({ ...request, path: auth.normalize(request.path) })
      else {
        const base = auth.normalize(request.root)
        captured.push({ ...request, root: base, path: auth.normalize(request.path, base) })
      }
      indexOf.push(index)
    }
    if (captured.length === 0) return Effect.succeed({ rootIdentity: root.rootIdentity, entries: sorted(entries) })
    return Effect.gen(function*() {
      yield* verifyRoot
      const resources = yield* resolveAll(captured)
      const granted: Array<{ readonly index: number; readonly resource: string }> = []
      // Request order, one at a time: quota and one-shot grants go to the earliest request.
      for (const [index, request] of captured.entries()) {
        const resource = resources[index]!
        const decided = Result.isFailure(resource)
          ? resource
          : yield* Effect.result(Effect.as(auth.check("fs:read", "batch", resource.success), resource.success))
        if (Result.isFailure(decided)) {
          entries.push({ index: indexOf[index]!, path: request.path, result: Result.fail(decided.failure) })
        }
        else granted.push({ index, resource: decided.success })
      }
      // Decisions may have waited: the root must still be the pinned one before anything executes.
      yield* verifyRoot
      if (granted.length > 0) {
        const reads = granted.map(({ index, resource }) => ({ ...captured[index]!, path: resource }) as BatchRequest)
        const again = granted.map(({ index }) => captured[index]!)
        let now: Array<Outcome<string>>
        let answered: Array<Outcome<AtomicBatchValue> | undefined>
        if (noFollow && 2 * granted.length <= limits.size && again.every((request) => resolveMember(request) !== undefined)) {
          // Each read travels right after a fresh resolution of its path, in one trip.
          const members = again.flatMap((request, i) => [resolveMember(request)!, reads[i]!])
          const out = yield* auth.run({ operation: "batch", requests: members })
          const byIndex = new Map(out.entries.map((entry) => [entry.index, entry.result] as const))
          answered = granted.map((_, i) => byIndex.get(2 * i + 1))
          now = yield* Effect.forEach(again, (request, i) => Effect.result(settle(request, byIndex.get(2 * i))))
        } else {
          now = yield* resolveAll(again)
          const out = yield* auth.run({ operation: "batch", requests: reads })
          const byIndex = new Map(out.entries.map((entry) => [entry.index, entry.result] as const))
          answered = granted.map((_, i) => byIndex.get(i))
        }
        for (const [i, { index, resource }] of granted.entries()) {
          const request = captured[index]!
          const fresh = now[i]!
          const result = Result.isFailure(fresh)
            ? Result.fail(fresh.failure)
            : fresh.success !== resource
            ? Result.fail(auth.deny("fs:read", "batch", resource, "path no longer names the resource that was authorized"))
            : publicValue(request, answered[i])
          entries.push({ index: indexOf[index]!, path: request.path, result: yield* listedOnly(request, resource, result) })
        }
      }
      yield* verifyRoot
      return { rootIdentity: root.rootIdentity, entries: sorted(entries) }
    })
  }

  return { maxSize: limits.size, maxResponseBytes: limits.response, execute }
}
