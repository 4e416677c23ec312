/**
 * Starting the sandbox: bubblewrap with its arguments on a pipe, the held descriptors at the
 * child's descriptor numbers they are bound from, and the launcher (see `launcher.ts`) as the
 * program bubblewrap runs, with the command after it. On macOS, `sandbox-exec` with the rendered
 * profile, and the same launcher.
 *
 * The launcher's status socket is the one account of how the start went. `R`: the sandbox is set
 * up and every inherited descriptor closed; the launcher then waits, and the supervisor may check
 * the finished sandbox from outside (with bubblewrap's `child-pid` from its JSON status: its
 * `/proc/<pid>/root` is the sandbox's root) before it answers `G`. End of file after that: the command is running. `E` and an errno:
 * the command could not be executed (the launcher exits 127 or 126, as a shell would). End of file
 * before `R`: the sandbox never set itself up (bubblewrap's own failures exit 1, like many
 * commands; only this tells them apart), and the command did not run. A check that fails, or a
 * supervisor that goes away, never answers `G`: the launcher then exits 125 without running
 * anything.
 *
 * @internal
 */
import { type ChildProcess, spawn, type SpawnOptions, type StdioOptions } from "node:child_process"
import type { Duplex, Readable, Writable } from "node:stream"
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
  /** The launcher: an open descriptor on it (bubblewrap executes that), and its path (macOS). */
  readonly launcher: { readonly fd: number; readonly path: string }
  /** The plan's working directory (macOS; bubblewrap has it among its arguments). */
  readonly cwd: string
  /** The command's environment, exactly. */
  readonly env: NodeJS.ProcessEnv
  readonly command: string
  readonly commandArgs: ReadonlyArray<string>
  readonly options: SpawnOptions
  /** `"none"`: the launcher makes new Unix sockets fail for the command (a seccomp filter; Linux). */
  readonly unixSockets: "none" | "host"
}

/** How the start went. @internal */
export type SandboxStart =
  | { readonly started: true; readonly command: "running" }
  | { readonly started: true; readonly command: "not-executed"; readonly errno: number }
  | { readonly started: false; readonly why: string }

/** The sandbox set up and waiting before its command, or why it is not. @internal */
export type SandboxReady =
  | {
      readonly ready: true
      /** The sandbox's first process as the host sees it (`/proc/<pid>/root` is its root); null on macOS. */
      readonly pid: number | null
      /** The status socket's descriptor number in the sandbox's processes. */
      readonly at: number
    }
  | { readonly ready: false; readonly why: string }

/** A started sandbox, held before its command. @internal */
export interface Sandboxed {
  readonly child: ChildProcess
  readonly ready: Promise<SandboxReady>
  /** Lets the command start; only once `ready` said so. */
  release(): void
  /** The command never starts: the launcher is told nothing more and the sandbox is killed. */
  refuse(why: string): void
  /** How the start went in the end: once the command runs, could not be executed, or never will. */
  readonly start: Promise<SandboxStart>
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

/** bubblewrap's `child-pid` from its JSON status stream, or null when it ends without one. */
const childPid = (json: Readable | null): Promise<number | null> =>
  new Promise((resolve) => {
    if (!json) return resolve(null)
    let text = ""
    json.setEncoding("utf8")
    json.on("data", (d: string) => {
      text += d
      const m = /"child-pid"\s*:\s*(\d+)/.exec(text)
      if (m) resolve(Number(m[1]))
    })
    json.on("error", () => resolve(null))
    json.on("close", () => resolve(null))
  })

/** Follows the launcher's status socket (see the module's comment). */
const follow = (child: ChildProcess, status: Duplex | null, at: number, pid: () => Promise<number | null>): Sandboxed => {
  let phase: "setting-up" | "waiting" | "released" | "refused" = "setting-up"
  let report = Buffer.alloc(0)
  let refusal = "the sandbox did not set itself up (see bubblewrap's message above)"
  let settleReady: (r: SandboxReady) => void = () => undefined
  let settleStart: (s: SandboxStart) => void = () => undefined
  const ready = new Promise<SandboxReady>((resolve) => (settleReady = resolve))
  const start = new Promise<SandboxStart>((resolve) => (settleStart = resolve))
  const refuse = (why: string) => {
    if (phase === "released") return
    phase = "refused"
    refusal = why
    status?.destroy()
    child.kill("SIGKILL")
    settleReady({ ready: false, why })
  }
  const release = () => {
    if (phase !== "waiting") return
    phase = "released"
    status?.write("G")
  }
  if (!status) {
    refuse("the sandbox has no status channel")
  } else {
    status.on("data", (d: Buffer) => {
      if (phase === "setting-up") {
        if (d[0] !== 0x52 /* R */) return refuse(`the launcher answered ${JSON.stringify(d.toString("latin1"))}, not ready`)
        phase = "waiting"
        report = Buffer.from(d.subarray(1))
        void pid().then((p) => settleReady({ ready: true, pid: p, at }))
      } else {
        report = Buffer.concat([report, d])
      }
    })
    status.on("error", () => undefined)
    status.on("close", () => {
      if (phase === "released") {
        const failed = report.length >= 5 && report[0] === 0x45 /* E */
        settleStart(
          failed ? { started: true, command: "not-executed", errno: report.readInt32LE(1) } : { started: true, command: "running" }
        )
        return
      }
      if (phase === "waiting") refusal = "the sandbox ended before its command was let start"
      phase = "refused"
      settleReady({ ready: false, why: refusal })
      settleStart({ started: false, why: refusal })
    })
  }
  child.once("error", (e) => refuse(`the sandbox could not be started: ${e.message}`))
  return { child, ready, release, refuse, start }
}

/**
 * Starts the sandbox, which waits before its command (see the module's comment): `ready` says when
 * it is set up, `release` lets the command start, `refuse` never does.
 */
export const spawnSandboxed = (s: SandboxSpawn): Sandboxed => {
  const user = baseStdio(s.options.stdio)
  // Below `keep`: stdin, stdout, stderr and what the caller passes on purpose.
  const keep = user.length
  if (s.platform === "darwin") {
    const child = spawn(
      "sandbox-exec",
      ["-p", s.profile, "--", s.launcher.path, String(keep), String(keep), "--", s.command, ...s.commandArgs],
      {
        ...s.options,
        cwd: s.options.cwd ?? s.cwd,
        env: s.env,
        stdio: [...user, "pipe"] as StdioOptions
      }
    )
    return follow(child, child.stdio[keep] as Duplex | null, keep, () => Promise.resolve(null))
  }
  const argsAt = keep
  const jsonAt = keep + 1
  const statusAt = keep + 2
  const launcherAt = keep + 3
  const fdAt = new Map<number, number>()
  const passed: Array<number> = []
  for (const [slot, fd] of s.fds.entries()) {
    if (fd < 0) continue
    fdAt.set(slot, launcherAt + 1 + passed.length)
    passed.push(fd)
  }
  const emptyAt = launcherAt + 1 + passed.length
  const blob = encodeArguments(
    s.options.cwd === undefined ? s.args : startingIn(s.args, String(s.options.cwd)),
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
      String(jsonAt),
      "--",
      `/proc/self/fd/${launcherAt}`,
      String(statusAt),
      String(keep),
      ...(s.unixSockets === "none" ? ["--no-unix-sockets"] : []),
      "--",
      s.command,
      ...s.commandArgs
    ],
    {
      ...s.options,
      cwd: "/",
      env: s.env,
      stdio: [...user, "pipe", "pipe", "pipe", s.launcher.fd, ...passed, ...s.empties] as StdioOptions
    }
  )
  const argsPipe = child.stdio[argsAt] as Writable | null
  argsPipe?.on("error", () => undefined)
  argsPipe?.end(blob)
  const pid = childPid(child.stdio[jsonAt] as Readable | null)
  return follow(child, child.stdio[statusAt] as Duplex | null, statusAt, () => pid)
}
