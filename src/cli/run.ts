/**
 * `pinnedfs run`: runs one command confined, with the workspace writable and the protected paths
 * read-only or hidden, and exits with the command's status. Statuses of its own, as `env`,
 * `timeout` and shells use them: 2 for a usage error (a bad option value, a workspace that does not
 * exist), 125 for a launch that cannot be confined (with a message that says why; it is never run
 * unconfined), 126 for a command that cannot be executed and 127 for one that is not found. A
 * command's own 125 passes through without a message; `--status-fd` tells the two apart for a
 * program.
 *
 * @since 0.1.0
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Command } from "commander"
import {
  type AgentName,
  agentNames,
  Confinement,
  ConfinementError,
  cleanupLeftovers,
  type GrantInput,
  GrantStore,
  type LaunchPlan,
  type Network,
  type PreparedLaunch,
  type ProtectedRule,
  type UnixSockets
} from "../confine/index.ts"
import { printable } from "../confine/raw.ts"
import { collect } from "./collect.ts"

/** The exit status of a launch that could not be confined (as `env` and `timeout` use it). @since 0.1.0 */
export const CANNOT_CONFINE = 125

/** The exit status of a usage error: a bad option value, a workspace that does not exist. @since 0.1.0 */
export const USAGE_ERROR = 2

interface RunOptions {
  readonly workspace?: string
  readonly protect?: Array<string>
  readonly unprotect?: Array<string>
  readonly grant?: Array<string>
  readonly allowAgent?: Array<string>
  readonly network?: string
  readonly unixSockets?: string
  readonly gitWrite?: boolean
  readonly fullAccess?: boolean
  readonly verbose?: boolean
  readonly statusFd?: string
  readonly cleanup?: boolean
}

/** A mistake in how `run` was called: exit 2, never 125 (nothing was tried). */
class UsageError extends Error {}

const splitLast = (value: string, what: string): [string, string] => {
  const at = value.lastIndexOf("=")
  if (at <= 0)
    throw new UsageError(`${what} '${value}' must be written ${what === "--protect" ? "GLOB=read-only|inaccessible" : "PATH=read|write"}`)
  return [value.slice(0, at), value.slice(at + 1)]
}

const parseProtect = (value: string): ProtectedRule => {
  const [glob, access] = splitLast(value, "--protect")
  if (access !== "read-only" && access !== "inaccessible") {
    throw new UsageError(`--protect '${value}': the protection must be read-only or inaccessible`)
  }
  // Named on the command line for this run: kept under --full-access too.
  return { glob, access, hard: true }
}

const parseGrant = (value: string): GrantInput => {
  const [file, spec] = splitLast(value, "--grant")
  const [access, scope] = spec.split(":") as [string, string | undefined]
  if ((access !== "read" && access !== "write") || (scope !== undefined && scope !== "recursive")) {
    throw new UsageError(`--grant '${value}': write PATH=read or PATH=write (a directory: PATH=write:recursive)`)
  }
  return { path: path.resolve(file), access, scope: scope === "recursive" ? "recursive" : "exact", lifetime: "once" }
}

const parseNetwork = (value: string | undefined): Network | undefined => {
  if (value === undefined || value === "none" || value === "host") return value
  throw new UsageError(`--network '${value}': none or host`)
}

const parseUnixSockets = (value: string | undefined): UnixSockets | undefined => {
  if (value === undefined || value === "none" || value === "host") return value
  throw new UsageError(`--unix-sockets '${value}': none or host`)
}

const parseAgent = (value: string): AgentName => {
  if ((agentNames as ReadonlyArray<string>).includes(value)) return value as AgentName
  throw new UsageError(`--allow-agent: unknown agent '${value}' (one of ${agentNames.join(", ")})`)
}

const parseStatusFd = (value: string | undefined): number | undefined => {
  if (value === undefined) return undefined
  if (/^\d+$/.test(value) && Number(value) > 2) return Number(value)
  throw new UsageError(`--status-fd '${value}': a descriptor number above 2`)
}

const describe = (plan: LaunchPlan): Array<string> => {
  const why = new Map(plan.credentials.map((c) => [c.glob, c.why]))
  const lines = [`pinnedfs run: ${plan.mode}; working directory ${plan.cwd}; TMPDIR ${plan.tempRoot}`]
  lines.push(`  network       ${plan.network === "none" ? "none (loopback only)" : "host"}`)
  lines.push(
    `  unix sockets  ${plan.unixSockets === "none" ? "none (the command cannot make one)" : "host (as the file system shows them)"}`
  )
  for (const w of plan.writableRoots) lines.push(`  writable      ${w}`)
  for (const r of plan.restrictions) {
    const rule = r.rule === null ? "unreadable tree" : why.has(r.rule) ? `${r.rule}: ${why.get(r.rule)}` : r.rule
    lines.push(`  ${r.access.padEnd(13)} ${r.path}  (${rule})`)
  }
  for (const a of plan.agents) {
    lines.push(`  agent ${a.name.padEnd(8)}${a.allowed ? "allowed" : `masked (${a.sockets.join(", ")})`}`)
  }
  if (plan.environment.dropped.length > 0) lines.push(`  environment   without ${plan.environment.dropped.join(", ")}`)
  for (const c of plan.created) lines.push(`  made empty    ${c.path}  (${c.purpose}, removed after)`)
  for (const g of plan.grants.applied) lines.push(`  granted       ${g.path}  (${g.access}, ${g.scope})`)
  for (const d of plan.discovery) {
    lines.push(
      `  discovery     ${d.anchor}: ${d.directories} directories, ${d.entries} entries, ${d.matches} matches${d.walked ? "" : " (temporary root: not walked)"}`
    )
  }
  return lines
}

/** The session `options` ask for; a bad value, or a workspace that does not exist, is a usage error. */
const sessionOf = async (options: RunOptions) => {
  const workspace = path.resolve(options.workspace ?? process.cwd())
  const st = await fs.promises.stat(workspace).catch(() => null)
  if (st === null || !st.isDirectory()) throw new UsageError(`the workspace '${workspace}' does not exist or is not a directory`)
  const here = process.cwd()
  const inside = here === workspace || here.startsWith(`${workspace}/`)
  try {
    const confinement = new Confinement({
      target: { workspace, cwd: inside ? here : workspace },
      policy: {
        protected: (options.protect ?? []).map(parseProtect),
        exclude: options.unprotect ?? [],
        agents: (options.allowAgent ?? []).map(parseAgent),
        network: parseNetwork(options.network),
        unixSockets: parseUnixSockets(options.unixSockets)
      },
      mode: options.fullAccess === true ? "full-access" : "confined",
      grants: GrantStore.memory()
    })
    for (const g of options.grant ?? []) await confinement.grants.add(parseGrant(g))
    return confinement
  } catch (e) {
    // A rule or grant the user wrote that cannot be applied faithfully is how `run` was called.
    if (e instanceof ConfinementError && (e.reason === "invalid-policy" || e.reason === "invalid-grant")) throw new UsageError(e.message)
    throw e
  }
}

/**
 * Signals for pinnedfs while it runs: forwarded to the command once it runs; before that they
 * cancel the launch (nothing starts, and what was made is cleaned up) and pinnedfs exits as if the
 * signal had ended it.
 */
const signals = (abort: AbortController) => {
  let child: { kill(signal: NodeJS.Signals): boolean } | undefined
  let received: NodeJS.Signals | undefined
  const handlers = (["SIGINT", "SIGTERM", "SIGHUP"] as const).map(
    (s) =>
      [
        s,
        () => {
          if (child !== undefined) return void child.kill(s)
          received ??= s
          abort.abort(new Error(`${s} before the command started`))
        }
      ] as const
  )
  for (const [s, h] of handlers) process.on(s, h)
  return {
    running: (c: { kill(signal: NodeJS.Signals): boolean }) => {
      child = c
    },
    received: () => received,
    stop: () => {
      for (const [s, h] of handlers) process.off(s, h)
    }
  }
}

/** One JSON line on `fd` saying whether the command ran, and how it ended or why it was refused. */
const report = (fd: number | undefined, outcome: Record<string, unknown>) => {
  if (fd === undefined) return
  try {
    fs.writeSync(fd, `${JSON.stringify(outcome)}\n`)
  } catch (e) {
    process.stderr.write(`pinnedfs run: --status-fd ${fd}: ${(e as Error).message}\n`)
  }
}

const signalNumber = (signal: NodeJS.Signals | null): number => (signal === null ? 0 : (os.constants.signals[signal] ?? 0))

/** The whole of `run`: the status to exit with. */
const run = async (command: string, args: Array<string>, options: RunOptions): Promise<number> => {
  // Each line names paths a checkout or a child chose: a control character in one must not
  // repaint the terminal or forge a line.
  const stderr = (line: string) => process.stderr.write(`${printable(line)}\n`)
  const abort = new AbortController()
  const signal = signals(abort)
  let statusFd: number | undefined
  let launch: PreparedLaunch | undefined
  try {
    statusFd = parseStatusFd(options.statusFd)
    const confinement = await sessionOf(options)
    launch = await confinement.prepare({ git: options.gitWrite === true ? "write" : undefined, signal: abort.signal })
    if (options.verbose === true) for (const l of describe(launch.plan)) stderr(l)
    for (const u of launch.plan.grants.unapplied) stderr(`pinnedfs run: grant ${u.grant.path} (${u.grant.access}) not applied: ${u.why}`)
    signal.running(await launch.spawn(command, args, { stdio: "inherit" }))
    const { code, signal: killed } = await launch.exit
    const cleanup = await launch.cleanup()
    for (const r of cleanup.refused) stderr(`pinnedfs run: left ${r.path} in place: ${r.error.description || r.error.message}`)
    const status = code ?? 128 + signalNumber(killed)
    report(statusFd, { ran: true, status, code, signal: killed })
    return status
  } catch (e) {
    await launch?.cleanup().catch(() => undefined)
    const interrupted = signal.received()
    if (interrupted !== undefined) {
      stderr(`pinnedfs run: ${interrupted} before ${command} started: it was not run`)
      report(statusFd, { ran: false, status: 128 + signalNumber(interrupted), reason: "cancelled", message: `${interrupted}` })
      return 128 + signalNumber(interrupted)
    }
    if (e instanceof UsageError) {
      stderr(`pinnedfs run: ${e.message} (see pinnedfs run --help)`)
      report(statusFd, { ran: false, status: USAGE_ERROR, reason: "usage", message: e.message })
      return USAGE_ERROR
    }
    const reason = e instanceof ConfinementError ? e.reason : "internal"
    stderr(`pinnedfs run: cannot confine ${command}: ${(e as Error).message}`)
    report(statusFd, { ran: false, status: CANNOT_CONFINE, reason, message: (e as Error).message })
    return CANNOT_CONFINE
  } finally {
    signal.stop()
  }
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
    .description(
      "run COMMAND confined: the workspace writable, protected paths read-only or hidden, everything else read-only, " +
        "credential stores and agents out of reach, and no network unless --network host"
    )
    .usage("[options] -- COMMAND [ARGS...]")
    .option("--workspace <dir>", "the writable workspace (default: the current directory)")
    .option("--protect <glob=access>", "also protect GLOB: read-only or inaccessible (repeatable)", collect)
    .option("--unprotect <glob>", "drop a default protection or credential store, named as --verbose lists it (repeatable)", collect)
    .option(
      "--grant <path=access>",
      "allow PATH for this run: read or write; a directory needs write:recursive or read:recursive (repeatable)",
      collect
    )
    .option("--git-write", "let git write the workspace's repository for this run (commit, fetch); its hooks and config stay read-only")
    .option("--network <none|host>", "the command's network: none, a namespace with loopback only, or host (default: none)")
    .option(
      "--unix-sockets <none|host>",
      "whether the command may make Unix sockets: none, or host (every socket the file system shows and the policy does not mask) " +
        "(default: none; host when an agent is allowed)"
    )
    .option(
      "--allow-agent <name>",
      `let the command reach this agent's socket: ${agentNames.join(", ")} (repeatable; default: none)`,
      collect
    )
    .option("--full-access", "drop the default protections (the --protect rules still apply); the network is host unless --network none")
    .option("--verbose", "print what is protected before running")
    .option("--status-fd <n>", "write one JSON line to descriptor N: whether the command ran, and its status or why it did not")
    .option("--cleanup", "remove what killed launches left behind (empty protected directories, temporary roots), then exit")
    .argument("[command]", "the command to run")
    .argument("[args...]", "its arguments")
    .passThroughOptions()
    .action(async (command: string | undefined, args: Array<string>, options: RunOptions) => {
      if (options.cleanup === true) {
        // Whoever wrote a command meant it to run: doing only the sweep would drop it silently.
        if (command !== undefined) {
          process.stderr.write(`pinnedfs run: --cleanup runs no command, and ${printable(command)} was given (see pinnedfs run --help)\n`)
          process.exitCode = USAGE_ERROR
          return
        }
        return void (await sweepLeftovers())
      }
      if (command === undefined) {
        process.stderr.write("pinnedfs run: missing required argument 'command' (see pinnedfs run --help)\n")
        process.exitCode = USAGE_ERROR
        return
      }
      process.exitCode = await run(command, args, options)
    })

/** `run --cleanup`: one line per thing a dead launch left, on stdout; a refusal exits 125. */
const sweepLeftovers = async (): Promise<void> => {
  try {
    const report = await cleanupLeftovers()
    for (const i of report.items) process.stdout.write(`${i.status} ${printable(i.path)}${i.why === "" ? "" : `: ${printable(i.why)}`}\n`)
    if (report.live > 0) process.stdout.write(`${report.live} live launch(es) left alone\n`)
  } catch (e) {
    process.stderr.write(`pinnedfs run: cannot clean up: ${printable((e as Error).message)}\n`)
    process.exitCode = CANNOT_CONFINE
  }
}
