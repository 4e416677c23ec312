/**
 * Reads many workspace files as text in `PinnedRoot.batch` trips (one for a few files, four at
 * once for many), and says of each whether it can be admitted.
 *
 * No link is followed: a link at the path, or anywhere on the way to it, is refused by the native
 * read on the descriptor it opened, so a link a fixer planted is reported, never read through.
 *
 * The size rule: the batch's answer budget makes the native read refuse, before reading a byte, a
 * file larger than what is left of the budget. When more than one file is large the budget can
 * run out for a file that is within `maxFileBytes`; such members are read again in a further trip
 * with a fresh budget, so only the common case is one trip, but no file is misjudged. A file
 * within the budget but over `maxFileBytes` is read and then refused by its length. (`PinnedRoot`
 * is gaining a per-read size limit; with it, that read will be refused before it happens.)
 *
 * @since 0.1.0
 */
import { TextDecoder } from "node:util"
import type { PinnedRoot } from "../PinnedRoot.ts"
import type { PinnedFsError } from "../internal/errors.ts"
import type { Limits } from "./limits.ts"

/**
 * What the disk holds at a path, as far as a text workspace is concerned.
 *
 * @since 0.1.0
 * @category models
 */
export type ReadOutcome =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "absent" }
  | { readonly kind: "directory" }
  | { readonly kind: "unreadable"; readonly reason: string }

// fatal: bytes that are not UTF-8 are refused, not replaced (a lossy decode would write back
// damage). ignoreBOM: a byte-order mark stays in the text, so writing the text back reproduces it.
const utf8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true })

/**
 * Whether bytes can be held as text: within `maxFileBytes`, no NUL byte (the mark of a binary
 * file), valid UTF-8.
 *
 * @since 0.1.0
 * @category admission
 */
export const admitBytes = (bytes: Uint8Array, maxFileBytes: number): ReadOutcome => {
  if (bytes.length > maxFileBytes) {
    return { kind: "unreadable", reason: `too large: ${bytes.length} bytes, over the ${maxFileBytes}-byte limit` }
  }
  if (bytes.includes(0)) return { kind: "unreadable", reason: "binary: contains NUL bytes" }
  try {
    return { kind: "text", text: utf8.decode(bytes) }
  } catch {
    return { kind: "unreadable", reason: "not text: invalid UTF-8" }
  }
}

/**
 * The reason a failed read gives, in words for a diagnostic.
 *
 * @since 0.1.0
 * @category admission
 */
export const outcomeOfError = (e: PinnedFsError, maxFileBytes: number): ReadOutcome => {
  if (e.reason === "NotFound" || e.code === "ENOTDIR") return { kind: "absent" }
  if (e.code === "EISDIR") return { kind: "directory" }
  switch (e.refusal) {
    case "symlink":
      return { kind: "unreadable", reason: `a symbolic link: not followed (${e.description || e.message})` }
    case "hardlink":
      return { kind: "unreadable", reason: "a hard-linked file: its other name may be outside the workspace, so it is not read" }
    case "notregular":
      return { kind: "unreadable", reason: "not a regular file (FIFO, socket or device): not read" }
    case "toolarge":
      return { kind: "unreadable", reason: `too large: over the ${maxFileBytes}-byte limit` }
    default:
      return { kind: "unreadable", reason: `read failed: ${e.message}` }
  }
}

const isResult = (u: unknown): u is Uint8Array => u instanceof Uint8Array

/**
 * Trips read at once. One trip runs on one thread of libuv's pool, which has four by default:
 * split four ways, a large re-read uses the machine's cores as `fs.promises` does, where one trip
 * would read every file on a single thread.
 */
const lanes = 4
/** Below this many paths one trip is quicker than several (each costs a hop and a wake-up). */
const splitFrom = 256

/** One trip: reads `chunk`, records each outcome, and answers those the budget could not carry. */
const readChunk = async (
  root: PinnedRoot,
  chunk: ReadonlyArray<string>,
  budget: number,
  limits: Limits,
  out: Map<string, ReadOutcome>
): Promise<Array<string>> => {
  const results = await root.batch(
    chunk.map((path) => ({ operation: "readFile" as const, path })),
    { size: chunk.length, response: budget }
  )
  const retry: Array<string> = []
  let left = budget
  for (let i = 0; i < chunk.length; i++) {
    const path = chunk[i]!
    const r = results[i]!
    if (r.ok && isResult(r.value)) {
      left = Math.max(0, left - r.value.length)
      out.set(path, admitBytes(r.value, limits.maxFileBytes))
    } else if (!r.ok && r.error.refusal === "toolarge" && left < limits.maxFileBytes) {
      // Refused for want of what was left of the shared budget, not for its own size.
      retry.push(path)
    } else if (!r.ok) {
      out.set(path, outcomeOfError(r.error, limits.maxFileBytes))
    } else {
      out.set(path, { kind: "unreadable", reason: "read failed: unexpected answer" })
    }
  }
  return retry
}

/**
 * Reads `paths` (canonical, workspace-relative). From 256 paths on, in up to four trips at once,
 * each with a quarter of the answer budget (so what is in flight stays within
 * `readBudgetBytes`, and each trip can still carry a file of `maxFileBytes`); at most
 * `limits.batchMembers` paths a trip; then a round for files a trip's budget could not carry.
 *
 * @since 0.1.0
 * @category reads
 */
export const readTexts = async (root: PinnedRoot, paths: ReadonlyArray<string>, limits: Limits): Promise<Map<string, ReadOutcome>> => {
  const out = new Map<string, ReadOutcome>()
  let pending = [...new Set(paths)]
  const parallel = pending.length < splitFrom ? 1 : Math.max(1, Math.min(lanes, Math.floor(limits.readBudgetBytes / limits.maxFileBytes)))
  const budget = Math.floor(limits.readBudgetBytes / parallel)
  while (pending.length > 0) {
    const size = Math.min(limits.batchMembers, Math.ceil(pending.length / parallel))
    const chunks: Array<ReadonlyArray<string>> = []
    for (let start = 0; start < pending.length; start += size) chunks.push(pending.slice(start, start + size))
    const retry: Array<string> = []
    for (let k = 0; k < chunks.length; k += parallel) {
      const rounds = await Promise.all(chunks.slice(k, k + parallel).map((chunk) => readChunk(root, chunk, budget, limits, out)))
      for (const r of rounds) retry.push(...r)
    }
    pending = retry
  }
  return out
}
