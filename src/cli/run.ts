/**
 * `pinnedfs run`: runs one command confined, with the workspace writable and the protected paths
 * read-only or hidden, and exits with the command's status. A launch that cannot be confined is
 * refused with status 125 and a message that says why; it is never run unconfined.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import type { Command } from "commander"
import {
  Confinement,
  ConfinementError,
  cleanupLeftovers,
  type GrantInput,
  GrantStore,
  type LaunchPlan,
  type ProtectedRule
} from "../confine/index.ts"
import { printable } from "../confine/raw.ts"

/** The exit status of a launch that could not be confined (as `env` and `timeout` use it). @since 0.1.0 */
export const CANNOT_CONFINE = 125

interface RunOptions {
  readonly workspace?: string
  readonly protect: Array<string>
  readonly grant: Array<string>
  readonly fullAccess?: boolean
  readonly verbose?: boolean
  readonly cleanup?: boolean
}

const collect = (value: string, previous: Array<string>) => [...previous, value]

const splitLast = (value: string, what: string): [string, string] => {
  const at = value.lastIndexOf("=")
  if (at <= 0)
    throw new ConfinementError(
      "invalid-policy",
      `${what} '${value}' must be written ${what === "--protect" ? "GLOB=read-only|inaccessible" : "PATH=read|write"}`
    )
  return [value.slice(0, at), value.slice(at + 1)]
}

const parseProtect = (value: string): ProtectedRule => {
  const [glob, access] = splitLast(value, "--protect")
  if (access !== "read-only" && access !== "inaccessible") {
    throw new ConfinementError("invalid-policy", `--protect '${value}': the protection must be read-only or inaccessible`)
  }
  // Named on the command line for this run: kept under --full-access too.
  return { glob, access, hard: true }
}

const parseGrant = (value: string): GrantInput => {
  const [file, spec] = splitLast(value, "--grant")
  const [access, scope] = spec.split(":") as [string, string | undefined]
  if ((access !== "read" && access !== "write") || (scope !== undefined && scope !== "recursive")) {
    throw new ConfinementError("invalid-grant", `--grant '${value}': write PATH=read or PATH=write (a directory: PATH=write:recursive)`)
  }
  return { path: path.resolve(file), access, scope: scope === "recursive" ? "recursive" : "exact", lifetime: "once" }
}

const describe = (plan: LaunchPlan): Array<string> => {
  const lines = [`pinnedfs run: ${plan.mode}; working directory ${plan.cwd}; TMPDIR ${plan.tempRoot}`]
  for (const w of plan.writableRoots) lines.push(`  writable      ${w}`)
  for (const r of plan.restrictions) lines.push(`  ${r.access.padEnd(13)} ${r.path}${r.rule ? `  (${r.rule})` : "  (unreadable tree)"}`)
  for (const c of plan.created) lines.push(`  made empty    ${c.path}  (${c.purpose}, removed after)`)
  for (const g of plan.grants.applied) lines.push(`  granted       ${g.path}  (${g.access}, ${g.scope})`)
  for (const d of plan.discovery) {
    lines.push(
      `  discovery     ${d.anchor}: ${d.directories} directories, ${d.entries} entries, ${d.matches} matches${d.walked ? "" : " (temporary root: not walked)"}`
    )
  }
  return lines
}

/**
 * Adds `run` to a commander program.
 *
 * @since 0.1.0
 */
export const registerRun = (program: Command): Command =>
  program
    // `run`'s own options end where COMMAND begins: `pinnedfs run ls -la` passes `-la` to ls.
    .enablePositionalOptions()
    .command("run")
    .description("run COMMAND confined: the workspace writable, protected paths read-only or hidden, everything else read-only")
    .usage("[options] -- COMMAND [ARGS...]")
    .option("--workspace <dir>", "the writable workspace (default: the current directory)")
    .option("--protect <glob=access>", "also protect GLOB: read-only or inaccessible (repeatable)", collect, [])
    .option(
      "--grant <path=access>",
      "allow PATH for this run: read or write; a directory needs write:recursive or read:recursive (repeatable)",
      collect,
      []
    )
    .option("--full-access", "drop the default protections (the --protect rules still apply)")
    .option("--verbose", "print what is protected before running")
    .option("--cleanup", "remove what killed launches left behind (empty protected directories, temporary roots), then exit")
    .argument("[command]", "the command to run")
    .argument("[args...]", "its arguments")
    .passThroughOptions()
    .action(async (command: string | undefined, args: Array<string>, options: RunOptions, self: Command) => {
      const stderr = (line: string) => process.stderr.write(`${line}\n`)
      if (options.cleanup === true) return void (await sweepLeftovers(stderr))
      if (command === undefined) return void self.error("error: missing required argument 'command'")
      let launch: Awaited<ReturnType<Confinement["prepare"]>> | undefined
      try {
        const workspace = path.resolve(options.workspace ?? process.cwd())
        const here = process.cwd()
        const inside = here === workspace || here.startsWith(`${workspace}/`)
        const confinement = new Confinement({
          target: { workspace, cwd: inside ? here : workspace },
          policy: { protected: options.protect.map(parseProtect) },
          mode: options.fullAccess === true ? "full-access" : "confined",
          grants: GrantStore.memory()
        })
        for (const g of options.grant) await confinement.grants.add(parseGrant(g))
        launch = await confinement.prepare()
        if (options.verbose === true) for (const l of describe(launch.plan)) stderr(l)
        for (const u of launch.plan.grants.unapplied)
          stderr(`pinnedfs run: grant ${u.grant.path} (${u.grant.access}) not applied: ${u.why}`)
        const forward = (signal: NodeJS.Signals) => () => child?.kill(signal)
        let child: Awaited<ReturnType<typeof launch.spawn>> | undefined
        const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map((s) => [s, forward(s)] as const)
        for (const [s, h] of handlers) process.on(s, h)
        try {
          child = await launch.spawn(command, args, { stdio: "inherit" })
          const spawned = child
          const { code, signal } = await new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve, reject) => {
            spawned.once("error", reject)
            spawned.once("exit", (code, signal) => resolve({ code, signal }))
          })
          if (!(await launch.started)) {
            throw new ConfinementError(
              "sandbox-unavailable",
              `bubblewrap could not set up the sandbox (exit ${code ?? signal}): ${command} was not run`
            )
          }
          process.exitCode = code ?? 128 + signalNumber(signal)
        } finally {
          for (const [s, h] of handlers) process.off(s, h)
        }
        const cleanup = await launch.cleanup()
        for (const r of cleanup.refused) stderr(`pinnedfs run: left ${r.path} in place: ${r.error.description || r.error.message}`)
      } catch (e) {
        await launch?.cleanup().catch(() => undefined)
        stderr(`pinnedfs run: cannot confine ${command}: ${(e as Error).message}`)
        process.exitCode = CANNOT_CONFINE
      }
    })

const signalNumber = (signal: NodeJS.Signals | null): number => (signal === null ? 0 : (os.constants.signals[signal] ?? 0))

/** `run --cleanup`: one line per thing a dead launch left, on stdout; a refusal exits 125. */
const sweepLeftovers = async (stderr: (line: string) => void): Promise<void> => {
  try {
    const report = await cleanupLeftovers()
    for (const i of report.items) process.stdout.write(`${i.status} ${printable(i.path)}${i.why === "" ? "" : `: ${printable(i.why)}`}\n`)
    if (report.live > 0) process.stdout.write(`${report.live} live launch(es) left alone\n`)
  } catch (e) {
    stderr(`pinnedfs run: cannot clean up: ${printable((e as Error).message)}`)
    process.exitCode = CANNOT_CONFINE
  }
}
