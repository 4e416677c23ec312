/**
 * One capability invocation inside a `fix` or `check` step: its allowlist computed now, a snapshot
 * of its envelope, its pre-step bytes kept for rollback, a façade of its own, the run, every façade
 * call it left running settled, and then the authoritative re-read and the comparison with its
 * advisory delta.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import type { Capability, Progress } from "./Capability.ts"
import { compare, parse } from "./Delta.ts"
import { DevFileAccess, type Journal } from "./DevFileAccess.ts"
import type { Diagnostic } from "./Diagnostic.ts"
import { allowlistOf, type Allowlist, type Envelope, type Withheld } from "./envelope.ts"
import type { Limits } from "./limits.ts"
import type { MandatorySet } from "./mandatory.ts"
import { workspacePath } from "./paths.ts"
import type { Policy } from "./Policy.ts"
import { escaped } from "./quote.ts"
import { listEnvelope, reread, type RereadReport } from "./reread.ts"
import type { Backup } from "./rollback.ts"
import type { Workspace } from "./Workspace.ts"

/**
 * What one capability was offered, did and was found to have done.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapabilityReport {
  readonly name: string
  readonly allowlist: ReadonlyArray<string>
  readonly withheld: ReadonlyArray<Withheld>
  readonly journal: Journal
  /** `undefined` when the re-read itself failed (the step then failed). */
  readonly reread: RereadReport | undefined
  readonly error: string | undefined
  /** What the capability threw, when it threw (an external fixer's `ExternalFailure` says how its command ended). */
  readonly failure?: unknown
}

/** What an invocation needs from the plan running it. */
export interface InvocationContext {
  readonly root: PinnedRoot
  readonly workspace: Workspace
  readonly policy: Policy
  readonly mandatory: MandatorySet
  readonly limits: Limits
  readonly progress: (event: Progress) => void
  /** The step's rollback, when it keeps one. */
  readonly backup: Backup | undefined
}

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const emptyJournal: Journal = { written: [], created: [], deleted: [], renamed: [], directories: [], refusals: [] }

const withheldDiagnostics = (allowlist: Allowlist, source: string): Array<Diagnostic> =>
  allowlist.withheld.map((w) => ({
    severity: "WARNING",
    code: "withheld",
    path: w.path,
    source,
    message: `'${escaped(w.path)}' withheld from ${source}: ${w.message}`
  }))

/** What the step's rollback must hold before the capability may change anything. */
const keepable = (ws: Workspace, envelope: Envelope, allowlist: Allowlist): Array<string> => [
  ...allowlist.paths,
  ...allowlist.withheld.filter((w) => w.reason === "policy").map((w) => w.path),
  ...[...ws.unreadable.keys()].filter(envelope.matches)
]

/**
 * Runs one capability and reconciles the workspace with what it did.
 *
 * @since 0.1.0
 * @category running
 */
export const invoke = async (
  c: InvocationContext,
  kind: "fix" | "check",
  capability: Capability,
  envelope: Envelope
): Promise<{ report: CapabilityReport; diagnostics: Array<Diagnostic> }> => {
  const { root, workspace: ws } = c
  const source = capability.name
  // Recomputed now, not when the step began: an earlier capability's re-read may have cleaned or
  // admitted paths.
  const allowlist = allowlistOf(ws, envelope, c.policy, c.mandatory)
  const dirty = new Set(allowlist.withheld.filter((w) => w.reason === "dirty").map((w) => w.path))
  const diagnostics = withheldDiagnostics(allowlist, source)
  c.progress({ type: "capability", name: source, files: allowlist.paths.length, withheld: allowlist.withheld.length })
  const early = (what: string, e: unknown) => {
    diagnostics.push({ severity: "ERROR", code: "failed", source, message: `${what} before ${source} failed: ${message(e)}` })
    const report = { name: source, allowlist: allowlist.paths, withheld: allowlist.withheld, journal: emptyJournal, reread: undefined }
    return { report: { ...report, error: message(e) }, diagnostics }
  }

  let snapshot: Set<string>
  try {
    snapshot = await listEnvelope(root, envelope, c.limits)
  } catch (e) {
    return early("listing the envelope", e)
  }
  try {
    await c.backup?.keep(keepable(ws, envelope, allowlist))
  } catch (e) {
    return early("keeping the pre-step bytes for rollback (nothing ran)", e)
  }

  const ran = await runThroughFacade(c, kind, capability, envelope, allowlist, dirty)
  diagnostics.push(...ran.diagnostics)
  const { journal } = ran

  c.progress({ type: "reread", name: source })
  let report: RereadReport | undefined
  try {
    report = await reread(root, ws, {
      envelope,
      snapshot,
      withheld: dirty,
      extra: [...journal.created, ...journal.written, ...journal.renamed.map((x) => x.to)],
      mayCreate: envelope.mayCreate.matches,
      source,
      limits: c.limits
    })
  } catch (e) {
    diagnostics.push({
      severity: "ERROR",
      code: "failed",
      source,
      message: `the re-read after ${source} failed, so the workspace may be stale: ${message(e)}`
    })
  }
  if (report) {
    for (const p of report.admitted) if (!snapshot.has(p)) c.backup?.absent(p)
    diagnostics.push(...report.diagnostics, ...judged(c, kind, source, envelope, allowlist, journal, report, ran.returned))
  }
  return {
    report: {
      name: source,
      allowlist: allowlist.paths,
      withheld: allowlist.withheld,
      journal,
      reread: report,
      error: ran.error,
      failure: ran.failure
    },
    diagnostics
  }
}

/** The run itself: a fresh façade, the capability, its unawaited calls settled, its refusals. */
const runThroughFacade = async (
  c: InvocationContext,
  kind: "fix" | "check",
  capability: Capability,
  envelope: Envelope,
  allowlist: Allowlist,
  dirty: ReadonlySet<string>
): Promise<{ journal: Journal; diagnostics: Array<Diagnostic>; returned: unknown; error: string | undefined; failure: unknown }> => {
  const source = capability.name
  const diagnostics: Array<Diagnostic> = []
  const access = DevFileAccess.make({
    root: c.root,
    policy: c.policy,
    mandatory: c.mandatory,
    allowlist: allowlist.paths,
    mayCreate: envelope.mayCreate,
    withheld: [...dirty],
    readOnly: kind === "check",
    maxFileBytes: c.limits.maxFileBytes,
    // The step is over: the only place left to say so is the workspace's own diagnostics.
    onLateCall: (method, path, error) =>
      c.workspace.report({
        severity: "ERROR",
        code: "refused",
        path,
        source,
        message: `${source}: ${method} after its step ended, refused: ${error.description || error.message}`
      })
  })
  let returned: unknown
  let error: unknown
  let threw = false
  try {
    returned = await capability.run(access, { workspaceDir: c.root.path, progress: c.progress })
  } catch (e) {
    threw = true
    error = e
  }
  // Every call the capability started is finished, or refused, before anything is re-read.
  const stillRunning = await access.settle()
  const journal = access.journal()
  access.close()
  if (stillRunning > 0) {
    diagnostics.push({
      severity: "WARNING",
      code: "not-awaited",
      source,
      message: `${source} returned with ${stillRunning} façade call(s) still running: waited for before the re-read (await them)`
    })
  }
  for (const f of journal.refusals) {
    diagnostics.push({
      severity: "ERROR",
      code: "refused",
      path: f.path,
      source,
      message: `${source}: ${f.method} refused: ${f.error.description || f.error.message}`
    })
  }
  if (threw && !journal.refusals.some((f) => f.error === error)) {
    diagnostics.push({ severity: "ERROR", code: "failed", source, message: `${source} failed: ${message(error)}` })
  }
  return { journal, diagnostics, returned, error: threw ? message(error) : undefined, failure: threw ? error : undefined }
}

/** The delta against the re-read, and what the re-read found that the capability may not do. */
const judged = (
  c: InvocationContext,
  kind: "fix" | "check",
  source: string,
  envelope: Envelope,
  allowlist: Allowlist,
  journal: Journal,
  report: RereadReport,
  returned: unknown
): Array<Diagnostic> => {
  const out: Array<Diagnostic> = []
  const delta = parse(returned, source)
  if (delta.kind === "parsed") out.push(...delta.diagnostics)
  const allowed = new Set(allowlist.paths)
  const created = new Set(journal.created)
  const authorized = (claimed: string): boolean => {
    let p: string
    try {
      p = workspacePath(claimed)
    } catch {
      return false
    }
    return allowed.has(p) || created.has(p) || envelope.mayCreate.matches(p)
  }
  out.push(...compare(delta, report.observed, authorized, source))
  const policyWithheld = new Set(allowlist.withheld.filter((w) => w.reason === "policy").map((w) => w.path))
  for (const path of report.observed) {
    const mandatory = c.mandatory.denies(path)
    if (mandatory !== undefined) {
      // Only a child process can get here (the façade refuses it): the tool wrote what nobody may.
      out.push({
        severity: "ERROR",
        code: "forbidden-change",
        path,
        source,
        message: `'${escaped(path)}' changed on disk, and it is in the mandatory deny set (${escaped(mandatory)}): the step fails`
      })
    } else if (policyWithheld.has(path)) {
      out.push({
        severity: "ERROR",
        code: "forbidden-change",
        path,
        source,
        message: `'${escaped(path)}' changed on disk although the policy withheld it from ${source}: the step fails`
      })
    }
    if (kind === "check") {
      out.push({
        severity: "WARNING",
        code: "inspection-changed",
        path,
        source,
        message: `inspection ${source} changed '${escaped(path)}' (the re-read took the disk's version)`
      })
    }
  }
  return out
}
