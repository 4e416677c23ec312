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
 * This file is the pipeline; each phase lives in its own module under `batch/`: the members
 * captured (`batchInput.ts`), resolved (`batch/resolution.ts`), decided (`batch/decisions.ts`) and
 * executed (`batch/results.ts`).
 *
 * @internal
 */
import { Effect, type PlatformError, Result } from "effect"
import { badArgument } from "../../protocol/errors.ts"
import type { BatchEntry, FileSystemBatch } from "../FileSystemBatch.ts"
import type { Authorizer } from "./authorize.ts"
import { captureMembers } from "./batchInput.ts"
import { makeBatchContext } from "./batch/context.ts"
import { phaseOne, phaseTwo } from "./batch/decisions.ts"
import { verifiedResources } from "./batch/resolution.ts"
import { executeAdmitted } from "./batch/results.ts"
import { unavailable } from "./refusing.ts"

/** Path order, then request order. */
const sorted = (entries: Array<BatchEntry>): Array<BatchEntry> =>
  entries.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.index - b.index))

/** @internal */
export const makeBatch = (
  auth: Authorizer,
  limits: { readonly size: number; readonly response: number },
  verifyRoot: Effect.Effect<void, PlatformError.PlatformError>
): FileSystemBatch["Service"] => {
  const cx = makeBatchContext(auth, verifyRoot)
  const { root } = auth

  const execute: FileSystemBatch["Service"]["execute"] = (requests) =>
    Effect.suspend(() => {
      if (!Array.isArray(requests) || requests.length === 0 || requests.length > limits.size) {
        return Effect.fail(badArgument("batch", `batch must contain 1 to ${limits.size} operations`))
      }
      const rootIdentity = root.rootIdentity
      if (rootIdentity === undefined) return Effect.fail(unavailable("fs:read", "batch", root.logicalRoot))
      // Copied now, before any check can suspend: a caller mutating its array meanwhile changes nothing.
      const captured = captureMembers(requests, auth.path, auth.normalize)
      if (Result.isFailure(captured)) return Effect.fail(captured.failure)
      const { failed, members } = captured.success
      return Effect.gen(function* () {
        const entries = [...failed]
        if (members.length === 0) return { rootIdentity, entries: sorted(entries) }
        const requests = members.map(({ request }) => request)
        const indexOf = (i: number) => members[i]!.index
        const resources = yield* verifiedResources(cx, requests)
        const refused = yield* phaseOne(cx, requests, resources)
        const admitted = yield* phaseTwo(cx, requests, resources, refused, indexOf, entries)
        // Decisions may have waited: the root must still be the pinned one before anything executes.
        yield* verifyRoot
        yield* executeAdmitted(cx, requests, admitted, indexOf, entries)
        return { rootIdentity, entries: sorted(entries) }
      })
    })

  return { maxSize: limits.size, maxResponseBytes: limits.response, execute }
}
