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
  /**
   * Linux: bubblewrap waits (--block-fd) once the sandbox is set up, until the gate is released,
   * so the sandbox can be checked from outside before its command starts (verify.ts).
   */
  readonly gate?: boolean | undefined
}

/** The pause before the command: release lets it start, close (without release) never does. */
export interface SandboxGate {
  /** The descriptor number bubblewrap blocks on, in its own table. */
  readonly at: number
  release(): void
  close(): void
}

const baseStdio = (stdio: StdioOptions | undefined): Array<unknown> => {
  if (stdio === undefined) return ["pipe", "pipe", "pipe"]
  if (typeof stdio === "string") return [stdio, stdio, stdio]
  const out: Array<unknown> = [...stdio]
  while (out.length < 3) out.push("pipe")
  return out
}

/**
 * Starts the command in the sandbox; `started` says whether the sandbox set itself up, `childPid`
 * is the sandbox's first process (null when bubblewrap failed before making it).
 */
export const spawnSandboxed = (
  s: SandboxSpawn
): { child: ChildProcess; started: Promise<boolean>; childPid: Promise<number | null>; gate: SandboxGate | null } => {
  const env = { ...(s.options.env ?? process.env), TMPDIR: s.tmpdir }
  if (s.platform === "darwin") {
    const child = spawn("sandbox-exec", ["-p", s.profile, "--", s.command, ...s.commandArgs], {
      ...s.options,
      cwd: s.options.cwd ?? s.cwd,
      env
    })
    const started = new Promise<boolean>((resolve) => child.once("spawn", () => resolve(true)).once("error", () => resolve(false)))
    return { child, started, childPid: Promise.resolve(null), gate: null }
  }
  const user = baseStdio(s.options.stdio)
  const argsAt = user.length
  const statusAt = argsAt + 1
  const gateAt = s.gate === true ? statusAt + 1 : -1
  const firstFd = statusAt + 1 + (s.gate === true ? 1 : 0)
  const fdAt = new Map<number, number>()
  const passed: Array<number> = []
  for (const [slot, fd] of s.fds.entries()) {
    if (fd < 0) continue
    fdAt.set(slot, firstFd + passed.length)
    passed.push(fd)
  }
  const emptyAt = firstFd + passed.length
  const blob = encodeArguments(
    s.args,
    (slot) => {
      const at = fdAt.get(slot)
      if (at === undefined) throw new Error(`internal: slot ${slot} has no descriptor`)
      return at
    },
    (k) => emptyAt + k
  )
  const child = spawn(
    s.executable,
    [
      "--args",
      String(argsAt),
      "--json-status-fd",
      String(statusAt),
      ...(gateAt >= 0 ? ["--block-fd", String(gateAt)] : []),
      ...(s.options.cwd !== undefined ? ["--chdir", String(s.options.cwd)] : []),
      "--",
      s.command,
      ...s.commandArgs
    ],
    {
      ...s.options,
      cwd: "/",
      env,
      stdio: [...user, "pipe", "pipe", ...(gateAt >= 0 ? ["pipe"] : []), ...passed, ...s.empties] as StdioOptions
    }
  )
  const argsPipe = child.stdio[argsAt] as Writable | null
  argsPipe?.on("error", () => undefined)
  argsPipe?.end(blob)
  const status = child.stdio[statusAt] as Readable | null
  let pidOf: (pid: number | null) => void = () => undefined
  const childPid = new Promise<number | null>((resolve) => {
    pidOf = resolve
  })
  const started = new Promise<boolean>((resolve) => {
    if (!status) {
      pidOf(null)
      return resolve(false)
    }
    let text = ""
    status.setEncoding("utf8")
    status.on("data", (d: string) => {
      text += d
      const pid = /"child-pid":\s*(\d+)/.exec(text)
      if (pid) {
        pidOf(Number(pid[1]))
        resolve(true)
      }
    })
    const none = () => {
      pidOf(null)
      resolve(text.includes('"child-pid"'))
    }
    status.on("error", none)
    status.on("close", none)
    child.once("error", none)
  })
  const gateEnd = gateAt >= 0 ? (child.stdio[gateAt] as Writable | null) : null
  gateEnd?.on("error", () => undefined)
  const gate: SandboxGate | null =
    gateEnd === null
      ? null
      : {
          at: gateAt,
          release: () => void gateEnd.end("g"),
          close: () => void gateEnd.destroy()
        }
  return { child, started, childPid, gate }
}
