/**
 * Runs a plan: steps in order over one workspace and one pinned root, stopping at the first step
 * that fails. A step fails when it raises an `ERROR` (a refused gate, a façade refusal, a
 * capability that threw or a tool that failed, a file the re-read could not admit); `WARNING`s
 * never fail a step.
 *
 * For a `fix` or `check` step: the policy must be in force (fail closed), then the gate is asked
 * once for the whole step, then each capability in turn is invoked (`invocation.ts`: a freshly
 * computed allowlist, a snapshot, its pre-step bytes kept, a façade of its own, the authoritative
 * re-read). A step that fails is rolled back (`rollback.ts`) unless `restore` is `false`.
 *
 * The mandatory deny set is the workspace's own: its fixed entries and the directories the
 * workspace points git at, read once when the plan starts (`mandatorySetOf`). The pipeline can
 * never write a `.git` name, so only an outside process could add a pointer while it runs.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import { PinnedFsError } from "../internal/errors.ts"
import type { Progress } from "./Capability.ts"
import type { Diagnostic } from "./Diagnostic.ts"
import { withParents } from "./directories.ts"
import { envelopeOf, type Envelope } from "./envelope.ts"
import type { Gate, GateRequest } from "./Gate.ts"
import { type CapabilityReport, invoke } from "./invocation.ts"
import { limitsOf, type Limits } from "./limits.ts"
import { type MandatorySet, mandatorySetOf } from "./mandatory.ts"
import { decide, type Policy } from "./Policy.ts"
import { escaped } from "./quote.ts"
import { Backup, type RestoreReport } from "./rollback.ts"
import type { Step } from "./Step.ts"
import type { Workspace } from "./Workspace.ts"

export type { CapabilityReport } from "./invocation.ts"

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
  /**
   * Put a failed `fix` or `check` step's files back as they were before it (default `true`). See
   * `rollback.ts`: compare-and-swap per path, so a file changed since the re-read is left alone.
   */
  readonly restore?: boolean | undefined
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
  /** For a failed `fix` or `check` step: what the rollback put back and what it left. */
  readonly restore?: RestoreReport | undefined
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
  /** The workspace's mandatory deny set, read at the first step that needs it. */
  readonly mandatory: () => Promise<MandatorySet>
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
  let mandatory: Promise<MandatorySet> | undefined
  const r: Run = { ctx, limits, progress, mandatory: () => (mandatory ??= mandatorySetOf(ctx.root)) }
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
  let mandatory: MandatorySet
  try {
    mandatory = await r.mandatory()
  } catch (e) {
    return empty(step, "failed", [
      { severity: "ERROR", code: "failed", source: step.name, message: `reading the workspace's git pointers failed: ${message(e)}` }
    ])
  }
  // Every decision before any write: a refused path fails the step with nothing written.
  for (const path of [...dirty, ...deletions]) {
    const refused = decide(policy, "write", path, mandatory)
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
        (d) => decide(policy, "write", d, mandatory),
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

  return runCapabilities(r, step, envelopes)
}

const runCapabilities = async (
  r: Run,
  step: Extract<Step, { kind: "fix" | "check" }>,
  envelopes: ReadonlyArray<Envelope>
): Promise<StepResult> => {
  const diagnostics: Array<Diagnostic> = []
  let mandatory: MandatorySet
  try {
    mandatory = await r.mandatory()
  } catch (e) {
    const failure = `reading the workspace's git pointers failed, so nothing ran: ${message(e)}`
    return empty(step, "failed", [{ severity: "ERROR", code: "failed", source: step.name, message: failure }])
  }
  const { root, workspace, policy } = r.ctx
  const backup = r.ctx.restore === false ? undefined : new Backup(root, r.limits, r.limits.backupMemoryBytes)
  const c = { root, workspace, policy: policy!, mandatory, limits: r.limits, progress: r.progress, backup }
  const reports: Array<CapabilityReport> = []
  try {
    for (const [i, capability] of step.capabilities.entries()) {
      const out = await invoke(c, step.kind, capability, envelopes[i]!)
      reports.push(out.report)
      diagnostics.push(...out.diagnostics)
      if (statusOf(out.diagnostics) === "failed") break
    }
    const status = statusOf(diagnostics)
    const result = { ...empty(step, status, diagnostics), capabilities: reports }
    if (status === "ok" || backup === undefined) return result
    r.progress({ type: "restore", name: step.name })
    return { ...result, restore: await restoreStep(r, step, backup, reports, mandatory, diagnostics) }
  } finally {
    await backup?.dispose().catch(() => undefined)
  }
}

/**
 * What the failed step's capabilities changed, put back. An in-process engine's changes are known
 * exactly (its façade journal), so only those are restored and a file someone else edited while it
 * ran is not touched; a child process's are whatever the re-read saw change in its envelope.
 */
const restoreStep = async (
  r: Run,
  step: Step,
  backup: Backup,
  reports: ReadonlyArray<CapabilityReport>,
  mandatory: MandatorySet,
  diagnostics: Array<Diagnostic>
): Promise<RestoreReport> => {
  const paths = new Set<string>()
  const external = new Map(
    step.kind === "fix" || step.kind === "check" ? step.capabilities.map((c) => [c.name, c.external === true] as const) : []
  )
  for (const report of reports) {
    const j = report.journal
    const engine = new Set([...j.written, ...j.created, ...j.deleted, ...j.renamed.flatMap((x) => [x.from, x.to])])
    for (const p of report.reread?.observed ?? []) if (external.get(report.name) === true || engine.has(p)) paths.add(p)
  }
  try {
    const restored = await backup.restore(r.ctx.workspace, paths, (d) => decide(r.ctx.policy, "write", d, mandatory))
    for (const k of restored.kept) {
      diagnostics.push({
        severity: "WARNING",
        code: "not-restored",
        path: k.path,
        source: step.name,
        message: `'${escaped(k.path)}' not restored: ${k.why}`
      })
    }
    return restored
  } catch (e) {
    diagnostics.push({ severity: "ERROR", code: "failed", source: step.name, message: `restoring the step's files failed: ${message(e)}` })
    return { restored: [], kept: [...paths].map((path) => ({ path, why: `the restore failed: ${message(e)}` })) }
  }
}
