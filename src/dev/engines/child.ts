/**
 * One run of a fixer's command: its output streamed, a deadline and an abort that stop it, and a
 * bounded wait for its pipes.
 *
 * Stopping means the whole of it, not only the process that was started: the default spawn puts
 * the command in a process group of its own and `kill` signals that group, so a shell's children,
 * `npx`'s node and whatever they started are signalled too; a confined command is its sandbox,
 * and killing the sandbox kills every process in it. `SIGTERM` first, `SIGKILL` after `killGraceMs`.
 * When the command has exited, anything it left running in its group is killed too (a fixer's
 * helper that went on writing would write after the re-read), and its pipes get `pipeGraceMs` to
 * close: a process that escaped the group (its own session) and holds them open no longer holds up
 * the step. So a command stopped at time T has returned by T + `killGraceMs` + `pipeGraceMs`.
 *
 * @since 0.1.0
 */
import type { ChildLike, Spawn } from "./external.ts"

/** How much of the child's output a failure diagnostic quotes. */
const tailBytes = 4096

/** @since 0.1.0 @category models */
export interface ChildRun {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
  readonly spawn: Spawn
  /** When to stop it (`Date.now()` milliseconds). */
  readonly deadline: number | undefined
  readonly signal: AbortSignal | undefined
  readonly killGraceMs: number
  readonly pipeGraceMs: number
  readonly onOutput: (stream: "stdout" | "stderr", text: string) => void
}

/** @since 0.1.0 @category models */
export interface ChildOutcome {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  /** Why it was stopped, if it was. */
  readonly stopped: "timeout" | "aborted" | undefined
  readonly tail: string
}

/**
 * Runs the command to its end (or its stop) and answers how it ended. Rejects when it could not
 * be started.
 *
 * @since 0.1.0
 * @category running
 */
export const runChild = (r: ChildRun): Promise<ChildOutcome> =>
  new Promise<ChildOutcome>((resolve, reject) => {
    if (r.signal?.aborted) return resolve({ code: null, signal: null, stopped: "aborted", tail: "" })
    const child: ChildLike = r.spawn(r.command, r.args, { cwd: r.cwd, env: r.env })
    let tail = ""
    let stopped: ChildOutcome["stopped"]
    const timers: Array<NodeJS.Timeout> = []
    let settled = false
    const finish = (outcome: Omit<ChildOutcome, "tail" | "stopped">) => {
      if (settled) return
      settled = true
      for (const t of timers) clearTimeout(t)
      r.signal?.removeEventListener("abort", onAbort)
      resolve({ ...outcome, stopped, tail })
    }
    const keep = (stream: "stdout" | "stderr") => (chunk: Buffer | string) => {
      const text = chunk.toString()
      tail = (tail + text).slice(-tailBytes)
      r.onOutput(stream, text)
    }
    for (const [name, s] of [
      ["stdout", child.stdout],
      ["stderr", child.stderr]
    ] as const) {
      // Decoded by the stream, so a character split between two reads is not mangled.
      s?.setEncoding?.("utf8")
      s?.on("data", keep(name))
      s?.on("error", () => undefined)
    }
    const stop = (why: "timeout" | "aborted") => {
      if (stopped !== undefined || settled) return
      stopped = why
      child.kill("SIGTERM")
      timers.push(setTimeout(() => child.kill("SIGKILL"), r.killGraceMs))
    }
    const onAbort = () => stop("aborted")
    r.signal?.addEventListener("abort", onAbort, { once: true })
    if (r.deadline !== undefined) timers.push(setTimeout(() => stop("timeout"), Math.max(0, r.deadline - Date.now())))
    child.on("error", (e) => {
      if (settled) return
      settled = true
      for (const t of timers) clearTimeout(t)
      r.signal?.removeEventListener("abort", onAbort)
      reject(new Error(`could not run '${r.command}': ${e.message}`, { cause: e }))
    })
    child.on("exit", (code, signal) => {
      // Whatever it left running in its group goes with it; its pipes get a bounded wait.
      child.kill("SIGKILL")
      timers.push(
        setTimeout(() => {
          for (const s of [child.stdout, child.stderr]) (s as { destroy?: () => void } | null)?.destroy?.()
          finish({ code, signal })
        }, r.pipeGraceMs)
      )
    })
    child.on("close", (code, signal) => finish({ code, signal }))
  })
