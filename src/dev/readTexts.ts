/**
 * Reads many workspace files as text in one `PinnedRoot.batch` trip, and says of each whether it
 * can be admitted.
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
 * Reads `paths` (canonical, workspace-relative). One trip per `limits.batchMembers` paths, plus a
 * trip for files the shared answer budget could not carry.
 *
 * @since 0.1.0
 * @category reads
 */
export const readTexts = async (root: PinnedRoot, paths: ReadonlyArray<string>, limits: Limits): Promise<Map<string, ReadOutcome>> => {
  const out = new Map<string, ReadOutcome>()
  let pending = [...new Set(paths)]
  while (pending.length > 0) {
    const retry: Array<string> = []
    for (let start = 0; start < pending.length; start += limits.batchMembers) {
      const chunk = pending.slice(start, start + limits.batchMembers)
      const results = await root.batch(
        chunk.map((path) => ({ operation: "readFile" as const, path })),
        { size: chunk.length, response: limits.readBudgetBytes }
      )
      let left = limits.readBudgetBytes
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
    }
    pending = retry
  }
  return out
}
