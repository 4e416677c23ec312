/**
 * Runs a plan: steps in order over one workspace and one pinned root, stopping at the first step
 * that fails. A step fails when it raises an `ERROR` (a refused gate, a façade refusal, a
 * capability that threw or a tool that failed, a file the re-read could not admit); `WARNING`s
 * never fail a step.
 *
 * For a `fix` or `check` step: the policy must be in force (fail closed), then the gate is asked
 * once for the whole step, then each capability in turn gets a freshly computed allowlist, a
 * snapshot of its envelope, a façade of its own, and after it returns the authoritative re-read
 * and the comparison with its advisory delta.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import { PinnedFsError } from "../internal/errors.ts"
import type { Capability, Progress } from "./Capability.ts"
import { compare, parse } from "./Delta.ts"
import { DevFileAccess, type Journal } from "./DevFileAccess.ts"
import type { Diagnostic } from "./Diagnostic.ts"
import { withParents } from "./directories.ts"
import { allowlistOf, envelopeOf, type Envelope, type Withheld } from "./envelope.ts"
import type { Gate, GateRequest } from "./Gate.ts"
import { limitsOf, type Limits } from "./limits.ts"
import { workspacePath } from "./paths.ts"
import { decide, type Policy } from "./Policy.ts"
import { listEnvelope, reread, type RereadReport } from "./reread.ts"
import type { Step } from "./Step.ts"
import type { Workspace } from "./Workspace.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface PlanContext {
  readonly root: PinnedRoot
  readonly workspace: Workspace
  /** `undefined` is not "allow everything": every step that needs a decision fails. */
  readonly policy: Policy | undefined
  readonly gate: Gate
  readonly limits?: Partial<Limits> | undefined
  readonly onProgress?: ((event: Progress) => void) | undefined
}

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
}

/**
 * @since 0.1.0
 * @category models
 */
export interface StepResult {
  readonly name: string
  readonly kind: Step["kind"]
  readonly status: "ok" | "failed" | "skipped"
  readonly diagnostics: ReadonlyArray<Diagnostic>
  readonly capabilities: ReadonlyArray<CapabilityReport>
  /** For `write`: paths flushed and pending deletions carried out. */
  readonly written: ReadonlyArray<string>
  readonly deleted: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface PlanResult {
  readonly ok: boolean
  readonly steps: ReadonlyArray<StepResult>
}

interface Run {
  readonly ctx: PlanContext
  readonly limits: Limits
  readonly progress: (event: Progress) => void
}

/**
 * Runs `steps` in order.
 *
 * @since 0.1.0
 * @category running
 */
export const run = async (steps: ReadonlyArray<Step>, ctx: PlanContext): Promise<PlanResult> => {
  const limits = limitsOf(ctx.limits)
  const progress = (event: Progress): void => {
    try {
      ctx.onProgress?.(event)
    } catch {
      // A progress printer's failure is not the plan's.
    }
  }
  const r: Run = { ctx, limits, progress }
  const results: Array<StepResult> = []
  let failed = false
  for (const [index, step] of steps.entries()) {
    if (failed) {
      results.push(empty(step, "skipped", []))
      continue
    }
    progress({ type: "step", index, total: steps.length, name: step.name, kind: step.kind })
    const result = await runStep(r, step)
    for (const d of result.diagnostics) if (d.code !== "unreadable") ctx.workspace.report(d)
    results.push(result)
    failed = result.status === "failed"
  }
  return { ok: !failed, steps: results }
}

const empty = (step: Step, status: StepResult["status"], diagnostics: ReadonlyArray<Diagnostic>): StepResult => ({
  name: step.name,
  kind: step.kind,
  status,
  diagnostics,
  capabilities: [],
  written: [],
  deleted: []
})

const statusOf = (diagnostics: ReadonlyArray<Diagnostic>): "ok" | "failed" =>
  diagnostics.some((d) => d.severity === "ERROR") ? "failed" : "ok"

const message = (e: unknown): string => (e instanceof Error ? e.message : String(e))

const runStep = async (r: Run, step: Step): Promise<StepResult> => {
  switch (step.kind) {
    case "edit":
      try {
        await step.apply(r.ctx.workspace.editor())
        return empty(step, "ok", [])
      } catch (e) {
        return empty(step, "failed", [{ severity: "ERROR", code: "failed", source: step.name, message: `edit failed: ${message(e)}` }])
      }
    case "write":
      return writeStep(r, step)
    case "fix":
    case "check":
      return capabilityStep(r, step)
  }
}

const writeStep = async (r: Run, step: Step): Promise<StepResult> => {
  const { root, workspace: ws, policy } = r.ctx
  const dirty = ws.dirtyPaths()
  const deletions = [...ws.pendingDeletions].sort()
  const diagnostics: Array<Diagnostic> = []
  // Every decision before any write: a refused path fails the step with nothing written.
  for (const path of [...dirty, ...deletions]) {
    const refused = decide(policy, "write", path)
    if (refused) diagnostics.push({ severity: "ERROR", code: "refused", path, source: step.name, message: refused.description })
  }
  if (diagnostics.length > 0) return empty(step, "failed", diagnostics)
  const written: Array<string> = []
  const deleted: Array<string> = []
  try {
    for (const path of dirty) {
      const text = ws.get(path)!
      await withParents(
        root,
        path,
        (d) => decide(policy, "write", d),
        () => root.writeFileString(path, text, { atomic: true })
      )
      ws.flushed(path)
      written.push(path)
    }
    for (const path of deletions) {
      await root.remove(path, { force: true })
      ws.deleted(path)
      deleted.push(path)
    }
  } catch (e) {
    const path = e instanceof PinnedFsError ? e.path : undefined
    diagnostics.push({ severity: "ERROR", code: "failed", path, source: step.name, message: `write failed: ${message(e)}` })
  }
  return { ...empty(step, statusOf(diagnostics), diagnostics), written, deleted }
}

const capabilityStep = async (r: Run, step: Extract<Step, { kind: "fix" | "check" }>): Promise<StepResult> => {
  const fail = (message: string, code: Diagnostic["code"] = "failed") =>
    empty(step, "failed", [{ severity: "ERROR", code, source: step.name, message }])
  if (r.ctx.policy === undefined || r.ctx.policy === null) {
    return fail("no policy is in force: the step is refused (a missing policy never allows)", "refused")
  }
  const envelopes: Array<Envelope> = []
  for (const c of step.capabilities) {
    try {
      envelopes.push(envelopeOf(c))
    } catch (e) {
      return fail(`capability '${String(c?.name)}' is malformed: ${message(e)}`)
    }
    if (typeof c.run !== "function") return fail(`capability '${c.name}' has no run function`)
    if (step.kind === "check" && c.mayCreate.length > 0) {
      return fail(`inspection capability '${c.name}' declares mayCreate ${JSON.stringify(c.mayCreate)}: a check creates nothing`)
    }
  }
  const request: GateRequest = {
    step: step.name,
    kind: step.kind,
    capabilities: step.capabilities.map((c) => ({
      name: c.name,
      scope: [...c.scope],
      selectors: c.selectors === undefined ? undefined : [...c.selectors],
      mayCreate: [...c.mayCreate],
      external: c.external === true
    }))
  }
  let approved: unknown
  try {
    approved = await r.ctx.gate(request)
  } catch (e) {
    return fail(`the gate failed (${message(e)}): the step is refused`, "gate")
  }
  if (approved !== true) return fail("the gate refused the step: nothing ran", "gate")

  const diagnostics: Array<Diagnostic> = []
  const reports: Array<CapabilityReport> = []
  for (const [i, capability] of step.capabilities.entries()) {
    const out = await runCapability(r, step.kind, capability, envelopes[i]!)
    reports.push(out.report)
    diagnostics.push(...out.diagnostics)
    if (statusOf(out.diagnostics) === "failed") break
  }
  return { ...empty(step, statusOf(diagnostics), diagnostics), capabilities: reports }
}

const runCapability = async (
  r: Run,
  kind: "fix" | "check",
  capability: Capability,
  envelope: Envelope
): Promise<{ report: CapabilityReport; diagnostics: Array<Diagnostic> }> => {
  const { root, workspace: ws, policy } = r.ctx
  const source = capability.name
  const diagnostics: Array<Diagnostic> = []
  // Recomputed now, not when the step began: an earlier capability's re-read may have cleaned or
  // admitted paths.
  const allowlist = allowlistOf(ws, envelope, policy)
  const dirty = new Set(allowlist.withheld.filter((w) => w.reason === "dirty").map((w) => w.path))
  for (const w of allowlist.withheld) {
    diagnostics.push({
      severity: "WARNING",
      code: "withheld",
      path: w.path,
      source,
      message: `'${w.path}' withheld from ${source}: ${w.message}`
    })
  }
  r.progress({ type: "capability", name: source, files: allowlist.paths.length, withheld: allowlist.withheld.length })

  let snapshot: Set<string>
  try {
    snapshot = await listEnvelope(root, envelope, r.limits)
  } catch (e) {
    diagnostics.push({ severity: "ERROR", code: "failed", source, message: `listing the envelope before ${source} failed: ${message(e)}` })
    const journal: Journal = { written: [], created: [], deleted: [], renamed: [], directories: [], refusals: [] }
    return {
      report: { name: source, allowlist: allowlist.paths, withheld: allowlist.withheld, journal, reread: undefined, error: message(e) },
      diagnostics
    }
  }

  const access = DevFileAccess.make({
    root,
    policy,
    allowlist: allowlist.paths,
    mayCreate: envelope.mayCreate,
    withheld: [...dirty],
    readOnly: kind === "check",
    maxFileBytes: r.limits.maxFileBytes
  })
  let returned: unknown
  let error: unknown
  let threw = false
  try {
    returned = await capability.run(access, { workspaceDir: root.path, progress: r.progress })
  } catch (e) {
    threw = true
    error = e
  } finally {
    access.close()
  }
  const journal = access.journal()
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

  r.progress({ type: "reread", name: source })
  let report: RereadReport | undefined
  try {
    report = await reread(root, ws, {
      envelope,
      snapshot,
      withheld: dirty,
      extra: [...journal.created, ...journal.written, ...journal.renamed.map((x) => x.to)],
      mayCreate: envelope.mayCreate.matches,
      source,
      limits: r.limits
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
    diagnostics.push(...report.diagnostics)
    const delta = parse(returned, source)
    if (delta.kind === "parsed") diagnostics.push(...delta.diagnostics)
    const allowed = new Set(allowlist.paths)
    const authorized = (claimed: string): boolean => {
      let p: string
      try {
        p = workspacePath(claimed)
      } catch {
        return false
      }
      return allowed.has(p) || journal.created.includes(p) || envelope.mayCreate.matches(p)
    }
    diagnostics.push(...compare(delta, report.observed, authorized, source))
    const policyWithheld = new Set(allowlist.withheld.filter((w) => w.reason === "policy").map((w) => w.path))
    for (const path of report.observed) {
      if (policyWithheld.has(path)) {
        diagnostics.push({
          severity: "WARNING",
          code: "withheld",
          path,
          source,
          message: `'${path}' changed on disk although it was withheld from ${source} by policy`
        })
      }
      if (kind === "check") {
        diagnostics.push({
          severity: "WARNING",
          code: "inspection-changed",
          path,
          source,
          message: `inspection ${source} changed '${path}' (the re-read took the disk's version)`
        })
      }
    }
  }
  return {
    report: {
      name: source,
      allowlist: allowlist.paths,
      withheld: allowlist.withheld,
      journal,
      reread: report,
      error: threw ? message(error) : undefined
    },
    diagnostics
  }
}
