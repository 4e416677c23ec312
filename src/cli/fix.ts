/**
 * `pinnedfs fix`: one in-place fixer step from the command line, over the same plan API a program
 * uses. The workspace is pinned, the scope acquired, the command run with the allowlisted files
 * appended to its arguments, the scope re-read, and what happened printed.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import { type Command, InvalidArgumentError } from "commander"
import { Confinement, type ProtectedRule, sandboxAvailable } from "../confine/index.ts"
import { PinnedRoot } from "../PinnedRoot.ts"
import { acquire, type Diagnostic, externalFixer, Plan, Policy, type Progress, Step } from "../dev/index.ts"
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
}

/**
 * What a confined fixer may not write besides confine's defaults (`.git` read-only, `~/.ssh` and
 * `~/.gnupg` hidden): the rest of the mandatory deny set, so that the sandbox holds the child to
 * what the façade holds an engine to.
 *
 * @since 0.1.0
 */
export const confinedRules: ReadonlyArray<ProtectedRule> = [
  { glob: "**/.vscode", access: "read-only" },
  { glob: "**/.bashrc", access: "read-only" }
]

const collect = (value: string, previous: ReadonlyArray<string> | undefined): Array<string> => [...(previous ?? []), value]

const positiveInt = (value: string): number => {
  const n = Number(value)
  if (!Number.isSafeInteger(n) || n < 1) throw new InvalidArgumentError("expected a positive integer")
  return n
}

const defaultIo: Io = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (text) => process.stderr.write(text)
}

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
    .description(
      "Run COMMAND as an in-place fixer on the files matched by --scope, with those files appended to " +
        "its arguments, then re-read the scope and report what changed, what was admitted, withheld or " +
        "made unreadable, and any warnings. Exits 1 when the step fails (the command failed, a file " +
        "could not be re-read as text, a confined launch was refused), 2 on a usage error, 125 when " +
        "--confine was asked for and this machine cannot confine a command."
    )
    .usage("[options] --scope <glob> [--scope <glob>]... -- <command> [args...]")
    .argument("<command...>", "the fixer and its arguments, after --")
    .option("-w, --workspace <dir>", "the workspace directory (default: the current directory)")
    .option("-s, --scope <glob>", "files the fixer works on; repeat for more (required)", collect)
    .option("--may-create <glob>", "files the fixer may create; repeat for more (default: none)", collect)
    .option("--deny <glob>", "paths never given to the fixer, on top of .bashrc, .git/hooks and .vscode", collect)
    .option("--max-file-bytes <n>", "largest file admitted as text (default: 4194304)", positiveInt)
    .option("--timeout <ms>", "kill the command after this many milliseconds", positiveInt)
    .option("--progress-interval <ms>", "how often to report a command still running", positiveInt, 2000)
    .option("-q, --quiet", "print only the report: no progress, no output from the command")
    .option(
      "--confine",
      "run the command in a sandbox (bubblewrap): only the files in scope writable (and --may-create's directories), the rest of the workspace, .git, .vscode and .bashrc read-only, ~/.ssh and ~/.gnupg hidden"
    )
    .passThroughOptions()
    .addHelpText(
      "after",
      "\nExamples:\n" +
        "  pinnedfs fix --scope 'src/**/*.ts' -- npx eslint --fix\n" +
        "  pinnedfs fix -w ~/project -s 'src/**/*.{ts,tsx}' -s '*.md' -- npx prettier --write\n" +
        "  pinnedfs fix --scope 'src/**' -- npx biome check --write\n" +
        "  pinnedfs fix --confine --scope 'src/**/*.ts' -- npx eslint --fix\n\n" +
        "Every file access of pinnedfs itself is made relative to the pinned workspace directory and\n" +
        "follows no symbolic link. The command is a child process: pinnedfs re-reads what it was given,\n" +
        "but it cannot stop or see what the command does outside that, unless --confine runs it in a\n" +
        "sandbox (Linux, bubblewrap), where writing anything but the files in scope fails.\n"
    )
    .action(async (command: Array<string>, parsed: Partial<FixOptions>, cmd: Command) => {
      if (!parsed.scope?.length) cmd.error("error: at least one --scope <glob> is required", { exitCode: 2 })
      const options: FixOptions = {
        ...parsed,
        scope: parsed.scope ?? [],
        mayCreate: parsed.mayCreate ?? [],
        deny: parsed.deny ?? [],
        progressInterval: parsed.progressInterval ?? 2000
      }
      process.exitCode = await runFix(command, options, io)
    })

/**
 * Runs the step and prints its report; answers the exit code.
 *
 * @since 0.1.0
 * @category commands
 */
export const runFix = async (command: ReadonlyArray<string>, options: FixOptions, io: Io = defaultIo): Promise<number> => {
  const progress = (text: string): void => {
    if (!options.quiet) io.err(`${text}\n`)
  }
  const workspace = path.resolve(options.workspace ?? process.cwd())
  if (options.confine === true) {
    // Asked once, before anything is read: a missing sandbox is a refusal, never an unconfined run.
    const sandbox = await sandboxAvailable()
    if (!sandbox.available) {
      io.err(`pinnedfs fix: cannot confine ${command[0]}: ${sandbox.reason}\n`)
      return CANNOT_CONFINE
    }
  }
  let root: PinnedRoot
  try {
    root = await PinnedRoot.open(workspace)
  } catch (e) {
    io.err(`pinnedfs fix: cannot open the workspace ${workspace}: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  }
  try {
    const policy = Policy.fromRules({ read: ["**"], write: ["**"], deny: options.deny })
    const limits = options.maxFileBytes === undefined ? undefined : { maxFileBytes: options.maxFileBytes }
    progress(`pinnedfs fix: workspace ${root.path}, scope ${options.scope.join(" ")}`)
    const ws = await acquire(root, { scope: options.scope, limits })
    progress(`acquired ${ws.paths().length} file(s)${ws.unreadable.size ? `, ${ws.unreadable.size} unreadable` : ""}`)
    if (options.confine === true)
      progress(
        "confined: only the files in scope writable; the rest of the workspace, .git, .vscode, .bashrc read-only; ~/.ssh, ~/.gnupg hidden"
      )
    const [executable, ...args] = command
    const fixer = externalFixer({
      name: command.join(" "),
      command: executable!,
      args,
      scope: options.scope,
      mayCreate: options.mayCreate,
      timeoutMs: options.timeout,
      heartbeatMs: options.progressInterval,
      confine:
        options.confine === true ? new Confinement({ target: { workspace: root.path }, policy: { protected: confinedRules } }) : undefined
    })
    const result = await Plan.run([Step.fix("fix", fixer)], {
      root,
      workspace: ws,
      policy,
      limits,
      // The invocation is the approval; say what it approved.
      gate: (request) => {
        for (const c of request.capabilities) {
          progress(
            `approved by this invocation: ${c.name} on ${c.scope.join(" ")}, may create ${c.mayCreate.length ? c.mayCreate.join(" ") : "nothing"}`
          )
        }
        return true
      },
      onProgress: (event) => {
        const line = describe(event)
        if (line !== undefined) progress(line)
        else if (event.type === "output" && !options.quiet) io.err(event.text)
      }
    })
    report(io, result)
    return result.ok ? 0 : 1
  } catch (e) {
    io.err(`pinnedfs fix: ${e instanceof Error ? e.message : String(e)}\n`)
    return 1
  } finally {
    root.close()
  }
}

const describe = (event: Progress): string | undefined => {
  switch (event.type) {
    case "capability":
      return event.files === 0
        ? "no file in scope to give the command: not run"
        : `running ${event.name} on ${event.files} file(s)${event.withheld ? ` (${event.withheld} withheld)` : ""}…`
    case "running":
      return `… ${event.name} still running (${Math.round(event.elapsedMs / 1000)} s)`
    case "reread":
      return "re-reading the scope…"
    default:
      return undefined
  }
}

const list = (io: Io, label: string, items: ReadonlyArray<string>): void => {
  if (items.length > 0) io.out(`${label.padEnd(11)} ${items.join(", ")}`)
}

const report = (io: Io, result: Plan.PlanResult): void => {
  const step = result.steps[0]!
  for (const c of step.capabilities) {
    const r = c.reread
    list(io, "changed:", r?.changed ?? [])
    list(io, "admitted:", r?.admitted ?? [])
    list(io, "removed:", r?.dropped ?? [])
    list(
      io,
      "withheld:",
      c.withheld.map((w) => `${w.path} (${w.reason})`)
    )
    list(
      io,
      "unreadable:",
      (r?.unreadable ?? []).map((u) => `${u.path} (${u.reason})`)
    )
    list(io, "ignored:", r?.ignored ?? [])
    if (r && r.changed.length + r.admitted.length + r.dropped.length + r.unreadable.length === 0) io.out("no file changed")
  }
  const shown = (d: Diagnostic) => `${d.severity.toLowerCase()}: ${d.path ? `${d.path}: ` : ""}${d.message}`
  // Withheld and unreadable paths are listed above; the rest of the diagnostics are printed whole.
  for (const d of step.diagnostics) if (d.code !== "withheld" && d.code !== "unreadable") io.out(shown(d))
  io.out(step.status === "ok" ? "fix: ok" : "fix: failed")
}
