/**
 * The reconciliation phase of the re-read: each path read back is set against what the workspace
 * held, one outcome at a time, and the tally of what changed is kept for the report (see
 * `reread.ts` for the rules).
 *
 * @since 0.1.0
 */
import type { Diagnostic } from "./Diagnostic.ts"
import { escaped } from "./quote.ts"
import type { ReadOutcome } from "./readTexts.ts"
import type { Workspace } from "./Workspace.ts"

/**
 * What the reconciliation found, path by path.
 *
 * @since 0.1.0
 * @category re-read
 */
export interface Tally {
  readonly listed: Array<string>
  readonly changed: Array<string>
  readonly admitted: Array<string>
  readonly dropped: Array<string>
  readonly unreadable: Array<{ path: string; reason: string }>
  readonly ignored: Array<string>
  readonly diagnostics: Array<Diagnostic>
  readonly observed: Set<string>
}

/**
 * What one path's reconciliation needs to know besides its outcome.
 *
 * @since 0.1.0
 * @category re-read
 */
export interface ReconcileContext {
  readonly ws: Workspace
  readonly snapshot: ReadonlySet<string>
  readonly mayCreate: (path: string) => boolean
  readonly source: string
  readonly tally: Tally
}

/**
 * An empty tally, its diagnostics starting with `diagnostics`.
 *
 * @since 0.1.0
 * @category re-read
 */
export const emptyTally = (diagnostics: ReadonlyArray<Diagnostic>): Tally => ({
  listed: [],
  changed: [],
  admitted: [],
  dropped: [],
  unreadable: [],
  ignored: [],
  diagnostics: [...diagnostics],
  observed: new Set()
})

/** Where one path stood in the workspace before the read. */
interface Standing {
  readonly path: string
  readonly hadText: boolean
  readonly before: string | undefined
  readonly wasUnreadable: string | undefined
  /** Text in memory, or tracked as unreadable. */
  readonly tracked: boolean
  /** Neither tracked nor present just before the capability ran: the capability made it. */
  readonly isNew: boolean
}

/** A path found on disk that the workspace never held and the capability did not make. */
const ignore = (cx: ReconcileContext, path: string, detail?: string): void => {
  cx.tally.ignored.push(path)
  cx.tally.diagnostics.push({
    severity: "WARNING",
    code: "untracked",
    path,
    source: cx.source,
    message: `'${escaped(path)}' was on disk before ${cx.source} ran and is not part of the workspace: not admitted${detail === undefined ? "" : ` (${detail})`}`
  })
}

const text = (cx: ReconcileContext, at: Standing, content: string): void => {
  const { path, hadText, before, tracked, isNew } = at
  if (!tracked && !isNew) {
    ignore(cx, path)
    return
  }
  const { tally, source } = cx
  cx.ws.admit(path, content)
  if (hadText) {
    if (before !== content) tally.changed.push(path)
  } else {
    tally.admitted.push(path)
    if (isNew && !cx.mayCreate(path)) {
      tally.diagnostics.push({
        severity: "WARNING",
        code: "outside-may-create",
        path,
        source,
        message: `'${escaped(path)}' was created, but no mayCreate glob of ${source} allows it: admitted, since the disk is authoritative`
      })
    }
  }
  if (!hadText || before !== content) tally.observed.add(path)
}

const absent = (cx: ReconcileContext, at: Standing): void => {
  if (!at.tracked) return
  cx.ws.drop(at.path)
  cx.tally.dropped.push(at.path)
  cx.tally.observed.add(at.path)
}

const cannotAdmit = (cx: ReconcileContext, at: Standing, reason: string): void => {
  const { path, tracked, isNew, wasUnreadable } = at
  if (!tracked && !isNew) {
    ignore(cx, path, reason)
    return
  }
  if (wasUnreadable === reason) return
  const diagnostic: Diagnostic = {
    severity: "ERROR",
    code: "unreadable",
    path,
    source: cx.source,
    message: `'${escaped(path)}' cannot be admitted: ${reason}`
  }
  cx.ws.markUnreadable(path, reason, diagnostic)
  cx.tally.unreadable.push({ path, reason })
  cx.tally.diagnostics.push(diagnostic)
  cx.tally.observed.add(path)
}

/**
 * One path read back, reconciled with the workspace.
 *
 * @since 0.1.0
 * @category re-read
 */
export const reconcile = (cx: ReconcileContext, path: string, outcome: ReadOutcome): void => {
  const { ws, snapshot } = cx
  if (outcome.kind !== "directory" || ws.tracks(path)) cx.tally.listed.push(path)
  const hadText = ws.has(path)
  const wasUnreadable = ws.unreadable.get(path)
  const tracked = hadText || wasUnreadable !== undefined
  const at: Standing = { path, hadText, before: ws.get(path), wasUnreadable, tracked, isNew: !tracked && !snapshot.has(path) }
  switch (outcome.kind) {
    case "text":
      text(cx, at, outcome.text)
      break
    case "absent":
      absent(cx, at)
      break
    case "directory":
      // A directory the listing found is not a file the workspace wants; one where a tracked file
      // was is a file that can no longer be read.
      if (tracked) cannotAdmit(cx, at, "now a directory, not a file")
      break
    case "unreadable":
      cannotAdmit(cx, at, outcome.reason)
      break
  }
}
