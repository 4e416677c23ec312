/**
 * Starting the sandbox: bubblewrap with its arguments on a pipe, the held descriptors at the
 * child's descriptor numbers they are bound from, and the launcher (see `launcher.ts`) as the
 * program bubblewrap runs, with the command after it. On macOS, `sandbox-exec` with the rendered
 * profile, and the same launcher.
 *
 * The launcher's status socket is the one account of how the start went. `R`: the sandbox is set
 * up and every inherited descriptor closed; the launcher then waits, and the supervisor may check
 * the finished sandbox from outside (`beforeCommand`, with bubblewrap's `child-pid` from its JSON
 * status) before it answers `G`. End of file after that: the command is running. `E` and an errno:
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
  /**
   * Runs once the sandbox is set up and before the command starts, with the pid of the sandbox's
   * first process as the host sees it (`/proc/<pid>/root` is the sandbox's root); a rejection
   * refuses the launch and the command never runs.
   */
  readonly beforeCommand?: ((sandbox: { readonly pid: number }) => Promise<void>) | undefined
}

/** How the start went. @internal */
export type SandboxStart =
  | { readonly started: true; readonly command: "running" }
  | { readonly started: true; readonly command: "not-executed"; readonly errno: number }
  | { readonly started: false; readonly why: string }

const baseStdio = (stdio: StdioOptions | undefined): Array<unknown> => {
  if (stdio === undefined) return ["pipe", "pipe", "pipe"]
  if (typeof stdio === "string") return [stdio, stdio, stdio]
  const out: Array<unknown> = [...stdio]
  while (out.length < 3) out.push("pipe")
  return out
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
const follow = (
  child: ChildProcess,
  status: Duplex | null,
  pid: () => Promise<number | null>,
  beforeCommand: SandboxSpawn["beforeCommand"]
): Promise<SandboxStart> =>
  new Promise((resolve) => {
    if (!status) return resolve({ started: false, why: "the sandbox has no status channel" })
    let phase: "setting-up" | "checking" | "released" | "refused" = "setting-up"
    let report = Buffer.alloc(0)
    let refusal = ""
    const refuse = (why: string) => {
      phase = "refused"
      refusal = why
      status.destroy()
      child.kill("SIGKILL")
    }
    const release = async () => {
      if (beforeCommand !== undefined) {
        const at = await pid()
        if (at === null) throw new Error("bubblewrap reported no sandbox process to check")
        await beforeCommand({ pid: at })
      }
      if (phase !== "checking") return
      phase = "released"
      status.write("G")
    }
    status.on("data", (d: Buffer) => {
      if (phase === "setting-up") {
        if (d[0] !== 0x52 /* R */) return refuse(`the launcher answered ${JSON.stringify(d.toString("latin1"))}, not ready`)
        phase = "checking"
        report = Buffer.from(d.subarray(1))
        release().catch((e: unknown) => refuse(`the sandbox failed its check before the command: ${(e as Error).message}`))
      } else {
        report = Buffer.concat([report, d])
      }
    })
    const done = () => {
      if (phase === "released") {
        if (report.length >= 5 && report[0] === 0x45 /* E */)
          resolve({ started: true, command: "not-executed", errno: report.readInt32LE(1) })
        else resolve({ started: true, command: "running" })
      } else {
        resolve({
          started: false,
          why: phase === "refused" ? refusal : "the sandbox did not set itself up (see bubblewrap's message above)"
        })
      }
    }
    status.on("error", () => undefined)
    status.on("close", done)
    child.once("error", (e) => {
      if (phase === "setting-up") refuse(`the sandbox could not be started: ${e.message}`)
    })
  })

/** Starts the command in the sandbox; `start` says how that went (see {@link SandboxStart}). */
export const spawnSandboxed = (s: SandboxSpawn): { child: ChildProcess; start: Promise<SandboxStart> } => {
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
    const pid = () => Promise.resolve(child.pid ?? null)
    return { child, start: follow(child, child.stdio[keep] as Duplex | null, pid, s.beforeCommand) }
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
      String(jsonAt),
      ...(s.options.cwd !== undefined ? ["--chdir", String(s.options.cwd)] : []),
      "--",
      `/proc/self/fd/${launcherAt}`,
      String(statusAt),
      String(keep),
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
  return { child, start: follow(child, child.stdio[statusAt] as Duplex | null, () => pid, s.beforeCommand) }
}
