/**
 * The batch algorithm behind {@link FileSystemBatch}.
 *
 * As the client's batch: the root's identity is checked; every member is resolved (a no-follow
 * executor answers all of them in one `resolve` batch, a link met costing one more request for
 * its target; another host is asked for `realPath` member by member); the grant store is asked
 * about each member in request order, so quota and one-shot grants go to the earliest request; the
 * root is checked again; and the admitted members, as the caller spelled them (normalized), are
 * executed in one executor batch.
 *
 * Where it differs, it is stricter or cheaper, never wider (docs/kernel.md):
 * - a malformed member fails alone with `BadArgument`, before anything is asked;
 * - after the client's questions, each member is asked about under its own path when that differs
 *   from what it resolved to, and a refused member is asked about under its own path before its
 *   refusal is reported (the same two rules as a single operation);
 * - a listing member's names are filtered as the single methods filter theirs;
 * - over a no-follow executor the members are not resolved a second time after the decisions:
 *   the executor acts on each member's own path and refuses any link on it, so a path changed
 *   during a decision cannot carry the read elsewhere, and a batch costs two executor trips where
 *   the client's costs three.
 *
 * @internal
 */
import { Effect, type PlatformError, Result } from "effect"
import { badArgument as platformBadArgument } from "../../protocol/errors.ts"
import type { AtomicBatchRequest, AtomicBatchValue } from "../../protocol/wire.ts"
import type { BatchEntry, BatchRequest, BatchValue, FileSystemBatch } from "../FileSystemBatch.ts"
import type { Authorizer, PhaseOneRefusal } from "./authorize.ts"
import { checkMember } from "./batchInput.ts"
import { readable, readableNames } from "./listing.ts"
import { childOf, globPrefix, isInside, logicalOf, plainlyBelowLogicalRoot, toBoundary, toLogical } from "./paths.ts"
import { follow, settledResolution } from "./resolve.ts"
import { unavailable } from "./refusing.ts"
import { copyData } from "./snapshot.ts"

type Outcome<A> = Result.Result<A, PlatformError.PlatformError>

/** Path order, then request order. */
const sorted = (entries: Array<BatchEntry>): Array<BatchEntry> =>
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.index - b.index))

const badArgument = (description: string) => platformBadArgument("batch", description)

const uninspectable = "path component could not be inspected without following it"

/** @internal */
export const makeBatch = (
  auth: Authorizer,
  limits: { readonly size: number; readonly response: number },
  verifyRoot: Effect.Effect<void, PlatformError.PlatformError>
): FileSystemBatch["Service"] => {
  const { path, root } = auth
  const noFollow = auth.atomic.noFollowAuthorization === true
  const resolveOne = (boundaryPath: string) => auth.run({ operation: "resolve", path: boundaryPath })
  const needOf = (request: BatchRequest) => ({ action: "fs:read" as const, value: request.path, glob: request.operation === "glob" })

  /** Phase 1's resolution of every member, the no-follow way: one `resolve` batch. */
  const resolveAll = (requests: ReadonlyArray<BatchRequest>): Effect.Effect<Array<Outcome<string>>, PlatformError.PlatformError> =>
    Effect.gen(function* () {
      const parts = requests.map((request) =>
        request.operation === "glob" ? globPrefix(path, root, request.path) : { prefix: request.path, rest: [] as ReadonlyArray<string> }
      )
      const boundaries = parts.map(({ prefix }) => toBoundary(path, root, prefix))
      const members: Array<AtomicBatchRequest> = []
      const slot = boundaries.map((boundary) =>
        boundary === undefined ? undefined : members.push({ operation: "resolve", path: boundary }) - 1
      )
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
      for (const [i, outcome] of outcomes.entries()) {
        if (outcome !== undefined) continue
        const boundary = boundaries[i]!
        const answer = byIndex.get(slot[i]!) as Result.Success<AtomicBatchValue, PlatformError.PlatformError>
        const resolution = (answer.success as Extract<AtomicBatchValue, { readonly operation: "resolve" }>).resolution
        const followed = yield* Effect.result(
          follow(path, root, resolveOne, boundary, resolution, 0).pipe(
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
  const verifiedWhileResolving = (requests: ReadonlyArray<BatchRequest>) =>
    Effect.flatMap(
      Effect.all([Effect.result(verifyRoot), Effect.result(resolveAll(requests))], { concurrency: 2 }),
      ([verified, resolved]) =>
        Result.isFailure(verified)
          ? Effect.fail(verified.failure)
          : Result.isFailure(resolved)
            ? Effect.fail(resolved.failure)
            : Effect.succeed(resolved.success)
    )

  /** Phase 1's resolution of every member over a host asked for `realPath`, a few at a time. */
  const resolveEach = (requests: ReadonlyArray<BatchRequest>) =>
    Effect.forEach(requests, (request) => Effect.result(auth.resolve(needOf(request))), { concurrency: 16 })

  const publicValue = (request: BatchRequest, answer: Outcome<AtomicBatchValue> | undefined): Outcome<BatchValue> => {
    if (answer === undefined) return Result.fail(auth.deny("fs:read", request.path, "executor gave no answer for this member"))
    if (Result.isFailure(answer)) return Result.fail(answer.failure)
    return answer.success.operation === request.operation
      ? Result.succeed(answer.success as BatchValue)
      : Result.fail(auth.deny("fs:read", request.path, "executor answered a batch read with another operation"))
  }

  /** A listing member's names, filtered as the single methods filter theirs. */
  const listedOnly = (request: BatchRequest, result: Outcome<BatchValue>): Effect.Effect<Outcome<BatchValue>> => {
    if (Result.isFailure(result)) return Effect.succeed(result)
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

  /** Copies and checks every member; normalizes the well-formed ones as the client frames them. */
  const capture = (requests: ReadonlyArray<unknown>) => {
    const failed: Array<BatchEntry> = []
    const members: Array<{ readonly index: number; readonly request: BatchRequest }> = []
    for (let index = 0; index < requests.length; index++) {
      const slot = Object.getOwnPropertyDescriptor(requests, index)
      if (slot === undefined || !("value" in slot)) return Result.fail(badArgument(`batch member ${index} is missing or an accessor`))
      const copied = copyData(slot.value)
      const checked = Result.isFailure(copied) ? Result.fail(badArgument(copied.failure)) : checkMember(copied.success)
      if (Result.isFailure(checked)) {
        const raw = (slot.value as { readonly path?: unknown } | null)?.path
        failed.push({ index, path: typeof raw === "string" ? raw : "", result: Result.fail(checked.failure) })
        continue
      }
      const request = checked.success
      if (request.operation !== "glob") {
        members.push({ index, request: { ...request, path: auth.normalize(request.path) } })
        continue
      }
      // A glob's pattern is read against its own root, itself read against the workspace root. An
      // exclude of the kind its pattern can never match (see `glob`) is not sent.
      const base = auth.normalize(request.root)
      const absolute = path.isAbsolute(request.path)
      const exclude = request.options?.exclude
      members.push({
        index,
        request: {
          ...request,
          root: base,
          path: auth.normalize(request.path, base),
          ...(exclude === undefined ? {} : { options: { exclude: exclude.filter((e) => e.startsWith("/") === absolute) } })
        }
      })
    }
    return Result.succeed({ failed, members })
  }

  const execute: FileSystemBatch["Service"]["execute"] = (requests) =>
    Effect.suspend(() => {
      if (!Array.isArray(requests) || requests.length === 0 || requests.length > limits.size) {
        return Effect.fail(badArgument(`batch must contain 1 to ${limits.size} operations`))
      }
      const rootIdentity = root.rootIdentity
      if (rootIdentity === undefined) return Effect.fail(unavailable("fs:read", "batch", root.logicalRoot))
      // Copied now, before any check can suspend: a caller mutating its array meanwhile changes nothing.
      const captured = capture(requests)
      if (Result.isFailure(captured)) return Effect.fail(captured.failure)
      const { failed, members } = captured.success
      return Effect.gen(function* () {
        const entries = [...failed]
        if (members.length === 0) return { rootIdentity, entries: sorted(entries) }
        const requests = members.map(({ request }) => request)
        if (!noFollow) yield* verifyRoot
        const resources = noFollow ? yield* verifiedWhileResolving(requests) : yield* resolveEach(requests)
        // The client's questions, in request order.
        const refused = new Map<number, PhaseOneRefusal>()
        for (const [i, request] of requests.entries()) {
          const resource = resources[i]!
          if (Result.isFailure(resource)) {
            refused.set(i, { error: resource.failure, ownAnswered: false })
            continue
          }
          const own = resource.success === auth.lexicalOf(needOf(request))
          const decided = yield* Effect.result(auth.check("fs:read", resource.success))
          if (Result.isFailure(decided)) refused.set(i, { error: decided.failure, ownAnswered: own })
        }
        if (!noFollow) {
          // The client resolves again once the decisions are in; over a host asked for realPath
          // that costs no executor trip.
          const pending = requests.map((request, i) => ({ request, i })).filter(({ i }) => !refused.has(i))
          const again = yield* resolveEach(pending.map(({ request }) => request))
          for (const [k, { i }] of pending.entries()) {
            const now = again[k]!
            const before = (resources[i] as Result.Success<string, PlatformError.PlatformError>).success
            const own = before === auth.lexicalOf(needOf(requests[i]!))
            if (Result.isFailure(now)) refused.set(i, { error: now.failure, ownAnswered: own })
            else if (now.success !== before) {
              refused.set(i, {
                error: auth.deny("fs:read", before, "path no longer names the resource that was authorized"),
                ownAnswered: own
              })
            }
          }
        }
        // pinnedfs's questions, in request order (see the module comment).
        const admitted: Array<number> = []
        for (const [i, request] of requests.entries()) {
          const need = needOf(request)
          const refusal = refused.get(i)
          const outcome = yield* Effect.result(
            refusal !== undefined
              ? auth.conceal(need, refusal)
              : auth.entry({
                  need,
                  resource: (resources[i] as Result.Success<string, PlatformError.PlatformError>).success,
                  lexical: auth.lexicalOf(need)
                })
          )
          if (Result.isFailure(outcome))
            entries.push({ index: members[i]!.index, path: request.path, result: Result.fail(outcome.failure) })
          else admitted.push(i)
        }
        // Decisions may have waited: the root must still be the pinned one before anything executes.
        yield* verifyRoot
        if (admitted.length > 0) {
          const out = yield* auth.run({ operation: "batch", requests: admitted.map((i) => requests[i]!) })
          const byIndex = new Map(out.entries.map((entry) => [entry.index, entry.result] as const))
          for (const [k, i] of admitted.entries()) {
            const request = requests[i]!
            const result = yield* listedOnly(request, publicValue(request, byIndex.get(k)))
            entries.push({ index: members[i]!.index, path: request.path, result })
          }
        }
        return { rootIdentity, entries: sorted(entries) }
      })
    })

  return { maxSize: limits.size, maxResponseBytes: limits.response, execute }
}
