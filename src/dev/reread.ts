/**
 * The authoritative re-read: after an in-place capability, the disk is read back and the
 * workspace made to agree with it. The capability's own account of what it did (its delta) is
 * only compared with this, never applied.
 *
 * It reads exactly the envelope (what the scope and selectors name, listed on disk with one
 * native glob per pattern, plus the tracked paths in it and whatever the façade saw the capability
 * create or rename into), never the whole workspace, and reads their contents in one
 * `PinnedRoot.batch` trip. Paths withheld as dirty are not read: memory holds their newer text.
 * Each path read is:
 *
 * - **still present**: its text replaces memory's, and it is clean;
 * - **now absent**: dropped from the workspace, and not added to the pending deletions (the disk
 *   has nothing left to delete);
 * - **newly present**: admitted only if it was absent from the snapshot taken just before the
 *   capability ran. A file that was already there but never part of the workspace was not made by
 *   the capability and was not asked for, so it is ignored (with a warning). The one exception is
 *   a path already in `unreadable`: the workspace was tracking it.
 *
 * A tracked or newly present file that cannot be admitted (read error, binary, too large, a link,
 * not a file) becomes `unreadable` with an `ERROR`: its old text is dropped, never kept stale.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import type { Diagnostic } from "./Diagnostic.ts"
import type { Envelope } from "./envelope.ts"
import type { Limits } from "./limits.ts"
import { readTexts } from "./readTexts.ts"
import type { Workspace } from "./Workspace.ts"
import { quotedBytes } from "./quote.ts"
import { emptyTally, reconcile } from "./reconcile.ts"

/**
 * The paths of the envelope present on disk: one native glob per pattern (no link is entered) and,
 * unless `literals` is false, one batched `exists` for the paths named outright.
 *
 * @since 0.1.0
 * @category re-read
 */
export const listEnvelope = async (
  root: PinnedRoot,
  envelope: Envelope,
  limits: Limits,
  options?: {
    readonly literals?: boolean | undefined
    /** Collects the entries whose names are not valid UTF-8 (printed name → reason). */
    readonly unnamed?: Map<string, string> | undefined
  }
): Promise<Set<string>> => {
  const found = new Set<string>()
  for (const pattern of envelope.patterns) {
    const listing = await root.globListing(pattern, { dot: true })
    for (const p of listing.paths) if (envelope.matches(p)) found.add(p)
    // Matched by the native walk alone (each invalid byte read as U+FFFD): the envelope's own
    // matcher takes strings, and a name that may be in scope is reported rather than dropped.
    for (const u of listing.unnamed) options?.unnamed?.set(quotedBytes(u.bytes), unnamedReason(u.directory))
  }
  if (options?.literals === false) return found
  const literals = envelope.literals
  for (let start = 0; start < literals.length; start += limits.batchMembers) {
    const chunk = literals.slice(start, start + limits.batchMembers)
    const answers = await root.batch(
      chunk.map((path) => ({ operation: "exists" as const, path })),
      { size: chunk.length }
    )
    chunk.forEach((path, i) => {
      const a = answers[i]!
      // A link on the way is refused rather than answered: the path is there in some form.
      if (!a.ok || a.value === true) found.add(path)
    })
  }
  return found
}

const unnamedReason = (directory: boolean): string =>
  directory
    ? "a directory whose name is not valid UTF-8: not entered, so nothing beneath it was listed or given to a fixer"
    : "its name is not valid UTF-8: no path string can name it, so it was neither read nor given to a fixer"

/**
 * @since 0.1.0
 * @category models
 */
export interface RereadInput {
  readonly envelope: Envelope
  /** {@link listEnvelope} just before the capability ran. */
  readonly snapshot: ReadonlySet<string>
  /** Dirty paths: not read, memory's text stands. */
  readonly withheld: ReadonlySet<string>
  /** Paths the façade saw created or renamed into, read even outside the envelope. */
  readonly extra: ReadonlyArray<string>
  /** Whether a newly present path was declared creatable. */
  readonly mayCreate: (path: string) => boolean
  readonly source: string
  readonly limits: Limits
}

/**
 * @since 0.1.0
 * @category models
 */
export interface RereadReport {
  /** Every file path read (directories a glob listed are left out). */
  readonly paths: ReadonlyArray<string>
  /** Tracked paths whose text changed on disk. */
  readonly changed: ReadonlyArray<string>
  /** Paths that came into the workspace with text (newly present, or unreadable and now good). */
  readonly admitted: ReadonlyArray<string>
  readonly dropped: ReadonlyArray<string>
  /** Paths that became (or stayed, for a new reason) unreadable. */
  readonly unreadable: ReadonlyArray<{ readonly path: string; readonly reason: string }>
  /** Present before the capability ran, not in the workspace: not admitted. */
  readonly ignored: ReadonlyArray<string>
  /** Entries of the envelope newly found with names that are not valid UTF-8, by printed name. */
  readonly unnamed: ReadonlyArray<{ readonly name: string; readonly reason: string }>
  /** Every path whose state in the workspace changed: what the delta is compared with. */
  readonly observed: ReadonlySet<string>
  readonly diagnostics: ReadonlyArray<Diagnostic>
}

/**
 * The paths to read back: what the envelope names outright or matches (in the workspace, tracked
 * as unreadable, or listed on disk now), and what the façade saw made, less the paths memory owns.
 */
const candidatesOf = (ws: Workspace, input: RereadInput, after: ReadonlySet<string>): Array<string> => {
  const { envelope } = input
  const candidates = new Set<string>(envelope.literals)
  for (const p of ws.paths()) if (envelope.matches(p)) candidates.add(p)
  for (const p of ws.unreadable.keys()) if (envelope.matches(p)) candidates.add(p)
  for (const p of after) candidates.add(p)
  for (const p of input.extra) candidates.add(p)
  for (const p of input.withheld) candidates.delete(p)
  // Removed in memory on purpose; the coming write deletes them. Not the fixer's to bring back.
  for (const p of ws.pendingDeletions) candidates.delete(p)
  return [...candidates].sort()
}

/**
 * Re-reads the envelope and reconciles the workspace with it.
 *
 * @since 0.1.0
 * @category re-read
 */
export const reread = async (root: PinnedRoot, ws: Workspace, input: RereadInput): Promise<RereadReport> => {
  const { envelope, snapshot, source } = input
  // Paths named outright need no listing: the read itself says whether each is there.
  const unnamedFound = new Map<string, string>()
  const after = await listEnvelope(root, envelope, input.limits, { literals: false, unnamed: unnamedFound })
  const unnamed = ws.markUnnamed(envelope.patterns.join("\0"), unnamedFound, (name, reason) => ({
    severity: "ERROR",
    code: "unnamed",
    source,
    message: `${name} was skipped: ${reason}`
  }))
  const paths = candidatesOf(ws, input, after)
  const outcomes = await readTexts(root, paths, input.limits)
  const tally = emptyTally(unnamed.map((u) => u.diagnostic))
  const cx = { ws, snapshot, mayCreate: input.mayCreate, source, tally }
  for (const path of paths) reconcile(cx, path, outcomes.get(path)!)
  const { listed, ...found } = tally
  return { paths: listed, ...found, unnamed: unnamed.map(({ name, reason }) => ({ name, reason })) }
}
