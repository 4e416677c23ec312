/**
 * What `pinnedfs fix` prints about its steps: the report for people, or one JSON object.
 *
 * Every name is printed C-quoted (`quoted`: bare when plain, else `"a\nb.ts"`), and every message
 * with its control characters escaped, so a file name can neither reach the terminal as an escape
 * sequence nor forge a line of the report, and a comma-separated list can always be split back.
 *
 * @since 0.1.0
 */
import { type Diagnostic, ExternalFailure, type Plan } from "../dev/index.ts"
import { escaped, quoted } from "../dev/quote.ts"

/**
 * What became of the fixer's command in one step.
 *
 * @since 0.1.0
 * @category models
 */
export type FixerStatus =
  | { readonly status: "ok" }
  | { readonly status: "not-run"; readonly why: string }
  | { readonly status: "exited"; readonly exitCode: number }
  | { readonly status: "killed"; readonly signal: string | null; readonly why: "timeout" | "interrupted" | "signal" }
  | { readonly status: "failed"; readonly error: string }

/**
 * One step as `--json` prints it.
 *
 * @since 0.1.0
 * @category models
 */
export interface StepReport {
  readonly name: string
  readonly status: "ok" | "failed" | "skipped"
  readonly command: ReadonlyArray<string>
  readonly fixer: FixerStatus
  readonly files: number
  readonly changed: ReadonlyArray<string>
  readonly admitted: ReadonlyArray<string>
  readonly removed: ReadonlyArray<string>
  readonly withheld: ReadonlyArray<{ readonly path: string; readonly reason: string }>
  readonly unreadable: ReadonlyArray<{ readonly path: string; readonly reason: string }>
  /**
   * Entries of the scope whose names are not valid UTF-8, C-quoted (`"src/\377.ts"`): no string
   * can name them, so they were never given to the command.
   */
  readonly skipped: ReadonlyArray<{ readonly name: string; readonly reason: string }>
  readonly ignored: ReadonlyArray<string>
  readonly restored: ReadonlyArray<string>
  readonly notRestored: ReadonlyArray<{ readonly path: string; readonly why: string }>
  readonly warnings: ReadonlyArray<{ readonly path?: string | undefined; readonly code: string; readonly message: string }>
  readonly errors: ReadonlyArray<{ readonly path?: string | undefined; readonly code: string; readonly message: string }>
}

const fixerStatus = (step: Plan.StepResult): FixerStatus => {
  if (step.status === "skipped") return { status: "not-run", why: "an earlier step failed" }
  const c = step.capabilities[0]
  if (c === undefined) return { status: "not-run", why: step.diagnostics[0]?.message ?? "the step failed before the command" }
  const failure = c.failure
  if (failure instanceof ExternalFailure) {
    if (failure.stopped === "timeout") return { status: "killed", signal: failure.signal, why: "timeout" }
    if (failure.stopped === "aborted") return { status: "killed", signal: failure.signal, why: "interrupted" }
    if (failure.code === null) return { status: "killed", signal: failure.signal, why: "signal" }
    return { status: "exited", exitCode: failure.code }
  }
  if (c.error !== undefined) return { status: "failed", error: c.error }
  if (c.allowlist.length === 0) return { status: "not-run", why: "no file in scope to give it" }
  return { status: "ok" }
}

/**
 * A step's report. `before` holds the scope's files the acquisition could not take in as text
 * (`unreadable`) and the entries whose names are not UTF-8 (`skipped`): never given to the
 * command, so they belong to this step's account too.
 *
 * @since 0.1.0
 * @category reporting
 */
export const stepReport = (
  step: Plan.StepResult,
  command: ReadonlyArray<string>,
  before: {
    readonly unreadable: ReadonlyArray<{ readonly path: string; readonly reason: string }>
    readonly skipped: ReadonlyArray<{ readonly name: string; readonly reason: string }>
  }
): StepReport => {
  const c = step.capabilities[0]
  const r = c?.reread
  const unreadable = new Map(before.unreadable.map((u) => [u.path, u.reason]))
  for (const u of r?.unreadable ?? []) unreadable.set(u.path, u.reason)
  const skipped = new Map(before.skipped.map((u) => [u.name, u.reason]))
  for (const u of r?.unnamed ?? []) skipped.set(u.name, u.reason)
  const shown = (d: Diagnostic) => ({ ...(d.path === undefined ? {} : { path: d.path }), code: d.code, message: d.message })
  // Withheld, unreadable and skipped entries have lists of their own.
  const rest = step.diagnostics.filter((d) => d.code !== "withheld" && d.code !== "unreadable" && d.code !== "unnamed")
  // A file of the scope that could not be read as text, or named, was never given to the
  // command: the scope was not fixed, so the step does not count as a success.
  const status = step.status === "ok" && unreadable.size + skipped.size > 0 ? "failed" : step.status
  return {
    name: step.name,
    status,
    command,
    fixer: fixerStatus(step),
    files: c?.allowlist.length ?? 0,
    changed: r?.changed ?? [],
    admitted: r?.admitted ?? [],
    removed: r?.dropped ?? [],
    withheld: (c?.withheld ?? []).map((w) => ({ path: w.path, reason: w.reason })),
    unreadable: [...unreadable].sort(([a], [b]) => (a < b ? -1 : 1)).map(([path, reason]) => ({ path, reason })),
    skipped: [...skipped].sort(([a], [b]) => (a < b ? -1 : 1)).map(([name, reason]) => ({ name, reason })),
    ignored: r?.ignored ?? [],
    restored: step.restore?.restored ?? [],
    notRestored: step.restore?.kept ?? [],
    warnings: rest.filter((d) => d.severity === "WARNING").map(shown),
    errors: rest.filter((d) => d.severity === "ERROR").map(shown)
  }
}

/** A message's lines, each escaped; the lines after the first indented under it. */
const lines = (text: string): string =>
  text
    .split("\n")
    .map((l) => escaped(l, "\t"))
    .join("\n    ")

/**
 * The report for people, one line per list, then the warnings and errors, then the verdict.
 *
 * @since 0.1.0
 * @category reporting
 */
export const textReport = (report: StepReport, label: string): Array<string> => {
  const out: Array<string> = []
  const list = (title: string, items: ReadonlyArray<string>) => {
    if (items.length > 0) out.push(`${title.padEnd(13)} ${items.join(", ")}`)
  }
  list("changed:", report.changed.map(quoted))
  list("admitted:", report.admitted.map(quoted))
  list("removed:", report.removed.map(quoted))
  list(
    "withheld:",
    report.withheld.map((w) => `${quoted(w.path)} (${w.reason})`)
  )
  list(
    "unreadable:",
    report.unreadable.map((u) => `${quoted(u.path)} (${escaped(u.reason)})`)
  )
  // Already C-quoted: their bytes are not a string quoted() could take.
  list(
    "skipped:",
    report.skipped.map((u) => `${u.name} (${escaped(u.reason)})`)
  )
  list("ignored:", report.ignored.map(quoted))
  list("restored:", report.restored.map(quoted))
  list(
    "not restored:",
    report.notRestored.map((k) => `${quoted(k.path)} (${escaped(k.why)})`)
  )
  if (report.changed.length + report.admitted.length + report.removed.length === 0 && report.status !== "skipped") {
    out.push(report.restored.length > 0 ? "no file changed (after the restore)" : "no file changed")
  }
  for (const d of [...report.warnings.map((w) => ["warning", w] as const), ...report.errors.map((e) => ["error", e] as const)]) {
    const [severity, x] = d
    out.push(`${severity}: ${x.path === undefined ? "" : `${quoted(x.path)}: `}${lines(x.message)}`)
  }
  out.push(`${label}: ${verdict(report)}`)
  return out
}

/**
 * The step's status, with why when it failed only because files in its scope could not be read as
 * text or named.
 *
 * @since 0.1.0
 * @category reporting
 */
export const verdict = (report: StepReport): string => {
  const n = report.unreadable.length
  const k = report.skipped.length
  if (report.status !== "failed" || report.errors.length > 0 || n + k === 0) return report.status
  const files = (m: number) => `${m} file${m === 1 ? "" : "s"} in scope`
  const why = [
    ...(n > 0 ? [`${files(n)} could not be read as text`] : []),
    ...(k > 0 ? [`${files(k)} skipped: ${k === 1 ? "name" : "names"} not UTF-8`] : [])
  ]
  return `failed (${why.join("; ")})`
}

/** Whether the step counts as a success for the exit status. @since 0.1.0 @category reporting */
export const succeeded = (report: StepReport): boolean => report.status === "ok"
