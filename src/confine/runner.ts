/**
 * Starting the sandbox: bubblewrap with its arguments on a pipe, the held descriptors at the
 * child's descriptor numbers they are bound from, and a status pipe that tells a sandbox that
 * started the command apart from one that failed to set itself up (bubblewrap's own failure exits
 * with status 1, like many commands: only the status pipe can tell). On macOS, `sandbox-exec` with
 * the rendered profile.
 *
 * @internal
 */
import { type ChildProcess, spawn, type SpawnOptions, type StdioOptions } from "node:child_process"
import type { Readable, Writable } from "node:stream"
import { type BwrapArgument, encodeArguments } from "./bwrap.ts"

export interface SandboxSpawn {
  readonly platform: "linux" | "darwin"
  readonly executable: string
  readonly args: ReadonlyArray<BwrapArgument>
  readonly profile: string
  /** Held descriptors by slot (-1: not bound). */
  readonly fds: ReadonlyArray<number>
  /** Descriptors of empty files, for file masks, in order. */
  readonly empties: ReadonlyArray<number>
  /** The plan's working directory (macOS; bubblewrap has it among its arguments). */
  readonly cwd: string
  readonly tmpdir: string
  readonly command: string
  readonly commandArgs: ReadonlyArray<string>
  readonly options: SpawnOptions
}

const baseStdio = (stdio: StdioOptions | undefined): Array<unknown> => {
  if (stdio === undefined) return ["pipe", "pipe", "pipe"]
  if (typeof stdio === "string") return [stdio, stdio, stdio]
  const out: Array<unknown> = [...stdio]
  while (out.length < 3) out.push("pipe")
  return out
}

/**
 * The arguments with the caller's working directory in place of the plan's. bubblewrap takes the
 * last `--chdir` and warns about every earlier one ("Only the last --chdir option will take
 * effect"), so a spawn's `cwd` replaces the plan's instead of being added after it.
 */
const startingIn = (args: ReadonlyArray<BwrapArgument>, cwd: string): Array<BwrapArgument> => {
  const at = args.lastIndexOf("--chdir")
  if (at < 0 || at + 1 >= args.length) return [...args, "--chdir", cwd]
  return [...args.slice(0, at), "--chdir", cwd, ...args.slice(at + 2)]
}

/** Starts the command in the sandbox; `started` says whether the sandbox set itself up. */
export const spawnSandboxed = (s: SandboxSpawn): { child: ChildProcess; started: Promise<boolean> } => {
  const env = { ...(s.options.env ?? process.env), TMPDIR: s.tmpdir }
  if (s.platform === "darwin") {
    const child = spawn("sandbox-exec", ["-p", s.profile, "--", s.command, ...s.commandArgs], {
      ...s.options,
      cwd: s.options.cwd ?? s.cwd,
      env
    })
    return { child, started: new Promise((resolve) => child.once("spawn", () => resolve(true)).once("error", () => resolve(false))) }
  }
  const user = baseStdio(s.options.stdio)
  const argsAt = user.length
  const statusAt = argsAt + 1
  const fdAt = new Map<number, number>()
  const passed: Array<number> = []
  for (const [slot, fd] of s.fds.entries()) {
    if (fd < 0) continue
    fdAt.set(slot, statusAt + 1 + passed.length)
    passed.push(fd)
  }
  const emptyAt = statusAt + 1 + passed.length
  const blob = encodeArguments(
    s.options.cwd === undefined ? s.args : startingIn(s.args, String(s.options.cwd)),
    (slot) => {
      const at = fdAt.get(slot)
      if (at === undefined) throw new Error(`internal: slot ${slot} has no descriptor`)
      return at
    },
    (k) => emptyAt + k
  )
  const child = spawn(s.executable, ["--args", String(argsAt), "--json-status-fd", String(statusAt), "--", s.command, ...s.commandArgs], {
    ...s.options,
    cwd: "/",
    env,
    stdio: [...user, "pipe", "pipe", ...passed, ...s.empties] as StdioOptions
  })
  const argsPipe = child.stdio[argsAt] as Writable | null
  argsPipe?.on("error", () => undefined)
  argsPipe?.end(blob)
  const status = child.stdio[statusAt] as Readable | null
  const started = new Promise<boolean>((resolve) => {
    if (!status) return resolve(false)
    let text = ""
    status.setEncoding("utf8")
    status.on("data", (d: string) => {
      text += d
      if (text.includes('"child-pid"')) resolve(true)
    })
    status.on("error", () => resolve(false))
    status.on("close", () => resolve(text.includes('"child-pid"')))
    child.once("error", () => resolve(false))
  })
  return { child, started }
}
