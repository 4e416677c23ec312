/**
 * `pinnedfs fix`: in-place fixer steps from the command line, over the same plan API a program
 * uses. Either one step given on the command line (`--scope … -- COMMAND`), or the named steps of
 * the workspace's configuration file (`pinnedfs.config.{json,js}`, or `"pinnedfs"` in
 * `package.json`), all in order or those `--step` names. For each step the workspace is pinned,
 * the scope acquired, the command run with the allowlisted files appended (in as many runs as the
 * argument limit needs), the scope re-read, a failed step rolled back, and what happened printed.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { type Command, InvalidArgumentError } from "commander"
import { Confinement, type ProtectedRule, sandboxAvailable } from "../confine/index.ts"
import {
  acquire,
  type ConfiguredStep,
  ConfigurationError,
  escaped,
  externalFixer,
  loadConfiguration,
  Plan,
  Policy,
  type Progress,
  Step
} from "../dev/index.ts"
import { globList } from "../dev/globs.ts"
import { PinnedFsError } from "../internal/errors.ts"
import { PinnedRoot } from "../PinnedRoot.ts"
import { collect } from "./collect.ts"
import { type StepReport, stepReport, succeeded, textReport } from "./fixReport.ts"
import { holdWorkspace } from "./hold.ts"
import { CANNOT_CONFINE } from "./run.ts"

/**
 * Where `fix` writes: `out` for the report, `err` for progress. A test or an embedding program
 * passes its own.
 *
 * @since 0.1.0
 * @category models
 */
export interface Io {
  readonly out: (line: string) => void
  readonly err: (text: string) => void
}

/** @since 0.1.0 @category models */
export interface FixOptions {
  readonly workspace?: string | undefined
  readonly scope: ReadonlyArray<string>
  readonly mayCreate: ReadonlyArray<string>
  readonly deny: ReadonlyArray<string>
  readonly maxFileBytes?: number | undefined
  readonly timeout?: number | undefined
  readonly progressInterval: number
  readonly quiet?: boolean | undefined
  /** Run the command under `pinnedfs/confine` (see {@link confinedRules}). */
  readonly confine?: boolean | undefined
  /** Put a failed step's files back (default true). */
  readonly restore?: boolean | undefined
  /** Print one JSON object instead of the report. */
  readonly json?: boolean | undefined
  /** Configured steps to run, by name (default: all, in order). */
  readonly step?: ReadonlyArray<string> | undefined
}

/** The exit statuses, as `--help` states them. @since 0.1.0 @category constants */
export const exitStatus = { ok: 0, failed: 1, usage: 2, busy: 75, cannotConfine: CANNOT_CONFINE } as const

/**
 * What a confined fixer may not write besides confine's defaults (`.git` read-only, `~/.ssh` and
 * `~/.gnupg` hidden): the rest of the mandatory deny set, so that the sandbox holds the child to
 * what the façade holds an engine to, even where a launch scope would allow more.
 *
 * @since 0.1.0
 */
export const confinedRules: ReadonlyArray<ProtectedRule> = Policy.mandatoryEntries
  .filter((e) => e.segments.join("/") !== ".git")
  .map((e) => ({ glob: `**/${e.segments.join("/")}`, access: "read-only", missing: "ignore" }))

const positiveInt = (value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer")
  return n
}

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (text) => process.stderr.write(text)
}

/** A usage error: printed, exit status 2. */
class UsageError extends Error {}

const help =
  "Run a fixer in place on the files matched by --scope, with those files appended to its arguments " +
  "(split over several runs when they do not fit one argument list), then re-read the scope and " +
  "report what changed, what was admitted, withheld, removed or could not be read as text, and any " +
  "warnings. Without a command, run the steps of the workspace's pinnedfs.config.json, " +
  'pinnedfs.config.js or package.json "pinnedfs" key, all in order or those named by --step. ' +
  "A step that fails is rolled back: its files are put back as they were (--no-restore keeps them)."

/** Printed after the options, unwrapped. */
const exitHelp =
  "\nExit status:\n" +
  "  0    every step succeeded\n" +
  "  1    a step failed: the command exited non-zero, was killed (--timeout) or interrupted, could not\n" +
  "       be started or confined; it changed a file it must never write; or a file in scope could not\n" +
  "       be read as text (binary, a link, not a regular file, too large), before or after the command,\n" +
  "       or has a name that is not UTF-8 (listed as skipped: no fixer can be given it)\n" +
  "  2    usage: a bad option or glob, no --scope or no command, a bad configuration file, an unknown\n" +
  "       --step, a workspace that does not exist or cannot be opened\n" +
  "  75   another pinnedfs fix is running on the workspace: nothing done (try again when it ends)\n" +
  "  125  --confine, and this machine cannot confine a command\n"

/**
 * Registers `fix` on `program` (the `pinnedfs` bin's dispatcher calls this).
 *
 * @since 0.1.0
 * @category commands
 */
export const registerFix = (program: Command, io: Io = defaultIo): Command =>
  program
    .command("fix")
    .summary("run a formatter, linter or codemod in place, then re-read what it was given")
    .description(help)
    .usage("[options] --scope <glob> [--scope <glob>]... -- <command> [args...]\n       pinnedfs fix [options] [--step <name>]...")
    .argument("[command...]", "the fixer and its arguments, after --")
    .option("-w, --workspace <dir>", "the workspace directory (default: the current directory)")
    .option("-s, --scope <glob>", "files the fixer works on; repeat for more (required with a command)", collect)
    .option("--may-create <glob>", "files the fixer may create; repeat for more (with --confine: file names)", collect)
    .option("--deny <glob>", "paths never given to the fixer, beyond the mandatory set (.git, .vscode, shell start-up files, ...)", collect)
    .option("--max-file-bytes <n>", "largest file admitted as text (default: 4194304)", positiveInt)
    .option("--timeout <ms>", "stop the command and every process it started after this long (it returns within 2.5 s more)", positiveInt)
    .option("--progress-interval <ms>", "how often to report a command still running", positiveInt, 2000)
    .option("--step <name>", "run this configured step; repeat for more (default: every step, in order)", collect)
    .option("--no-restore", "keep a failed step's changes instead of putting its files back")
    .option("--json", "print one JSON object (the report) on stdout")
    .option("-q, --quiet", "print only the report: no progress, no output from the command")
    .option(
      "--confine",
      "run the command in a sandbox (bubblewrap): only the files in scope and the --may-create names writable; the rest of the workspace, .git and the mandatory set read-only; ~/.ssh and ~/.gnupg hidden"
    )
    .passThroughOptions()
    .addHelpText(
      "after",
      `${exitHelp}\nExamples:\n` +
        "  pinnedfs fix --scope 'src/**/*.ts' -- npx eslint --fix\n" +
        "  pinnedfs fix -w ~/project -s 'src/**/*.{ts,tsx}' -s '*.md' -- npx prettier --write\n" +
        "  pinnedfs fix --confine --scope 'src/**/*.ts' --may-create CHANGELOG.md -- npx eslint --fix\n" +
        "  pinnedfs fix --step lint --json\n\n" +
        "Every file access of pinnedfs itself is made relative to the pinned workspace directory and\n" +
        "follows no symbolic link. The command is a child process: pinnedfs re-reads what it was given,\n" +
        "but it cannot stop or see what the command does outside that, unless --confine runs it in a\n" +
        "sandbox (Linux, bubblewrap), where writing anything but the files in scope fails.\n"
    )
    .action(async (command: Array<string>, parsed: Partial<FixOptions> & { restore?: boolean }, cmd: Command) => {
      const options: FixOptions = {
        ...parsed,
        scope: parsed.scope ?? [],
        mayCreate: parsed.mayCreate ?? [],
        deny: parsed.deny ?? [],
        progressInterval: parsed.progressInterval ?? 2000
      }
      try {
        checkUsage(command, options)
      } catch (e) {
        cmd.error(`error: ${(e as Error).message}`, { exitCode: exitStatus.usage })
      }
      process.exitCode = await runFix(command, options, io)
    })

/** The usage rules commander does not know: what goes with what, and globs that compile. */
const checkUsage = (command: ReadonlyArray<string>, o: FixOptions): void => {
  if (command.length === 0) {
    if (o.scope.length > 0 || o.mayCreate.length > 0) {
      throw new UsageError("--scope and --may-create go with a command after --; configured steps carry their own")
    }
    return
  }
  if (o.step !== undefined) throw new UsageError("--step runs configured steps: give it without a command")
  if (o.scope.length === 0) throw new UsageError("at least one --scope <glob> is required with a command")
  for (const [what, globs] of [
    ["--scope", o.scope],
    ["--may-create", o.mayCreate],
    ["--deny", o.deny]
  ] as const) {
    try {
      globList(globs, what)
    } catch (e) {
      throw new UsageError(e instanceof PinnedFsError ? e.description : (e as Error).message)
    }
  }
  if (o.confine === true) {
    for (const g of o.mayCreate) {
      if (globList([g], "--may-create").patterns.length > 0) {
        throw new UsageError(`--may-create '${escaped(g)}' is a glob: with --confine, name each file the command may create`)
      }
    }
  }
}

/**
 * Runs the step given on the command line (`command`), or the configured steps, and prints the
 * report; answers the exit status.
 *
 * @since 0.1.0
 * @category commands
 */
export const runFix = async (command: ReadonlyArray<string>, options: FixOptions, io: Io = defaultIo): Promise<number> => {
  const progress = (text: string): void => {
    if (!options.quiet) io.err(`${text}\n`)
  }
  const workspace = path.resolve(options.workspace ?? process.cwd())
  let root: PinnedRoot
  try {
    root = await PinnedRoot.open(workspace)
  } catch (e) {
    io.err(`pinnedfs fix: cannot open the workspace ${escaped(workspace)}: ${escaped(e instanceof Error ? e.message : String(e))}\n`)
    return exitStatus.usage
  }
  // Held before anything is read; released when the run ends (or the process does).
  let release: (() => void) | undefined
  try {
    release = await holdWorkspace(root.identity)
  } catch (e) {
    root.close()
    io.err(`pinnedfs fix: cannot hold the workspace ${escaped(root.path)}: ${escaped(e instanceof Error ? e.message : String(e))}\n`)
    return exitStatus.failed
  }
  if (release === undefined) {
    root.close()
    io.err(`pinnedfs fix: another pinnedfs fix is running on the workspace ${escaped(root.path)}: nothing done\n`)
    return exitStatus.busy
  }
  try {
    let specs: ReadonlyArray<ConfiguredStep>
    try {
      specs = command.length > 0 ? [commandLineStep(command, options)] : await configuredSteps(root, options)
    } catch (e) {
      if (!(e instanceof ConfigurationError || e instanceof UsageError)) throw e
      io.err(`pinnedfs fix: ${e.message}\n`)
      return exitStatus.usage
    }
    if (specs.some((s) => s.confine)) {
      // Asked once, before anything is read: a missing sandbox is a refusal, never an unconfined run.
      const sandbox = await sandboxAvailable()
      if (!sandbox.available) {
        io.err(`pinnedfs fix: cannot confine ${escaped(specs.find((s) => s.confine)!.command[0]!)}: ${sandbox.reason}\n`)
        return exitStatus.cannotConfine
      }
    }
    return await runSteps(root, specs, command.length === 0, options, io, progress)
  } catch (e) {
    io.err(`pinnedfs fix: ${escaped(e instanceof Error ? e.message : String(e))}\n`)
    return exitStatus.failed
  } finally {
    release()
    root.close()
  }
}

const commandLineStep = (command: ReadonlyArray<string>, o: FixOptions): ConfiguredStep => ({
  name: "fix",
  scope: o.scope,
  command,
  mayCreate: o.mayCreate,
  deny: o.deny,
  confine: o.confine === true,
  timeout: o.timeout
})

const configuredSteps = async (root: PinnedRoot, o: FixOptions): Promise<ReadonlyArray<ConfiguredStep>> => {
  const config = await loadConfiguration(root)
  if (config === undefined) {
    throw new UsageError(
      'no command given after --, and the workspace has no pinnedfs.config.json, pinnedfs.config.js or "pinnedfs" key in package.json'
    )
  }
  const steps = config.steps.map((s) => ({
    ...s,
    // The command line's own settings apply to configured steps too, where the step has none.
    confine: s.confine || o.confine === true,
    timeout: s.timeout ?? o.timeout,
    deny: [...s.deny, ...o.deny]
  }))
  if (o.step === undefined) return steps
  for (const name of o.step) {
    if (!steps.some((s) => s.name === name)) {
      throw new UsageError(`--step '${escaped(name)}': ${config.source} has no such step (it has ${steps.map((s) => s.name).join(", ")})`)
    }
  }
  return steps.filter((s) => o.step!.includes(s.name))
}

/** Stops the running command on Ctrl-C and the like; a second signal is left to its default. */
const interrupts = (abort: AbortController): (() => void) => {
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const
  const handler = (signal: NodeJS.Signals) => {
    if (!abort.signal.aborted) return abort.abort()
    remove()
    process.kill(process.pid, signal)
  }
  const remove = () => {
    for (const s of signals) process.off(s, handler)
  }
  for (const s of signals) process.on(s, handler)
  return remove
}

const runSteps = async (
  root: PinnedRoot,
  specs: ReadonlyArray<ConfiguredStep>,
  configured: boolean,
  o: FixOptions,
  io: Io,
  progress: (text: string) => void
): Promise<number> => {
  const abort = new AbortController()
  const stopListening = interrupts(abort)
  const reports: Array<StepReport> = []
  try {
    for (const spec of specs) {
      if (reports.some((r) => !succeeded(r))) {
        reports.push(skipped(spec))
        continue
      }
      reports.push(await runStep(root, spec, configured, o, io, progress, abort.signal))
    }
  } finally {
    stopListening()
  }
  const ok = reports.every(succeeded)
  if (o.json === true) {
    io.out(
      JSON.stringify({ workspace: root.path, status: ok ? "ok" : "failed", exitCode: ok ? 0 : 1, ...aggregate(reports), steps: reports })
    )
  } else {
    for (const r of reports) {
      if (specs.length > 1) io.out(`step ${escaped(r.name)}:`)
      for (const line of textReport(r, configured ? r.name : "fix")) io.out(specs.length > 1 ? `  ${line}` : line)
    }
  }
  return ok ? exitStatus.ok : exitStatus.failed
}

const skipped = (spec: ConfiguredStep): StepReport => ({
  ...stepReport(
    { name: spec.name, kind: "fix", status: "skipped", diagnostics: [], capabilities: [], written: [], deleted: [] },
    spec.command,
    { unreadable: [], skipped: [] }
  ),
  fixer: { status: "not-run", why: "an earlier step failed" }
})

/** Every step's lists together, so that a one-step run reads as one object. */
const aggregate = (reports: ReadonlyArray<StepReport>) => {
  const all = <K extends keyof StepReport>(k: K) => reports.flatMap((r) => r[k] as ReadonlyArray<unknown>)
  return {
    fixer: reports.length === 1 ? reports[0]!.fixer : undefined,
    changed: all("changed"),
    admitted: all("admitted"),
    removed: all("removed"),
    withheld: all("withheld"),
    unreadable: all("unreadable"),
    skipped: all("skipped"),
    ignored: all("ignored"),
    restored: all("restored"),
    notRestored: all("notRestored"),
    warnings: all("warnings"),
    errors: all("errors")
  }
}

const runStep = async (
  root: PinnedRoot,
  spec: ConfiguredStep,
  configured: boolean,
  o: FixOptions,
  io: Io,
  progress: (text: string) => void,
  signal: AbortSignal
): Promise<StepReport> => {
  const policy = Policy.fromRules({ read: ["**"], write: ["**"], deny: spec.deny })
  const limits = o.maxFileBytes === undefined ? undefined : { maxFileBytes: o.maxFileBytes }
  progress(
    `pinnedfs fix${configured ? ` ${escaped(spec.name)}` : ""}: workspace ${escaped(root.path)}, scope ${escaped(spec.scope.join(" "))}`
  )
  const ws = await acquire(root, { scope: spec.scope, limits })
  const before = {
    unreadable: [...ws.unreadable].map(([p, reason]) => ({ path: p, reason })),
    skipped: [...ws.unnamed].map(([name, reason]) => ({ name, reason }))
  }
  const left = [
    ...(before.unreadable.length ? [`${before.unreadable.length} unreadable`] : []),
    ...(before.skipped.length ? [`${before.skipped.length} skipped (names not UTF-8)`] : [])
  ]
  progress(`acquired ${ws.paths().length} file(s)${left.length ? `, ${left.join(", ")} (not given to the command)` : ""}`)
  if (spec.confine)
    progress("confined: only the files in scope and the --may-create names writable; the rest read-only; ~/.ssh, ~/.gnupg hidden")
  const [executable, ...args] = spec.command
  // A configured step names its tools as a package script does: the workspace's own come first.
  const env = configured
    ? { ...process.env, PATH: `${path.join(root.path, "node_modules", ".bin")}${path.delimiter}${process.env["PATH"] ?? ""}` }
    : undefined
  const fixer = externalFixer({
    name: spec.command.join(" "),
    command: executable!,
    args,
    scope: spec.scope,
    mayCreate: spec.mayCreate,
    timeoutMs: spec.timeout,
    heartbeatMs: o.progressInterval,
    signal,
    env,
    confine: spec.confine ? new Confinement({ target: { workspace: root.path }, policy: { protected: confinedRules } }) : undefined
  })
  const result = await Plan.run([Step.fix(spec.name, fixer)], {
    root,
    workspace: ws,
    policy,
    limits,
    restore: o.restore !== false,
    // The invocation is the approval; say what it approved.
    gate: (request) => {
      for (const c of request.capabilities) {
        progress(
          `approved by this invocation: ${escaped(c.name)} on ${escaped(c.scope.join(" "))}, may create ${c.mayCreate.length ? escaped(c.mayCreate.join(" ")) : "nothing"}`
        )
      }
      return true
    },
    onProgress: (event) => {
      const line = describe(event)
      if (line !== undefined) progress(line)
      else if (event.type === "output" && !o.quiet) io.err(escaped(event.text, "\n\t"))
    }
  })
  return stepReport(result.steps[0]!, spec.command, before)
}

const describe = (event: Progress): string | undefined => {
  switch (event.type) {
    case "capability":
      return event.files === 0
        ? "no file in scope to give the command: not run"
        : `running ${escaped(event.name)} on ${event.files} file(s)${event.withheld ? ` (${event.withheld} withheld)` : ""}…`
    case "runs":
      return `the ${event.files} files do not fit one argument list: ${event.runs} runs, one after another`
    case "running":
      return `… ${escaped(event.name)} still running (${Math.round(event.elapsedMs / 1000)} s)`
    case "reread":
      return "re-reading the scope…"
    case "restore":
      return "the step failed: putting its files back as they were…"
    default:
      return undefined
  }
}
