/**
 * A confining stand-in for `child_process.spawn` that answers at once, for callers whose spawn
 * hook is synchronous (the in-place fixers' external engine is one). The answer is a child-like
 * object whose `stdout` and `stderr` are ready to read and whose `error`, `exit` and `close` events
 * come from the real command once the launch has been prepared and started in its sandbox. A launch
 * that cannot be confined ends as `error` (a {@link ConfinementError}) then `close` with no code,
 * and nothing runs; `kill()` before the start cancels the preparation. `close` comes after the
 * launch's cleanup, so the directories it made for itself are gone by then.
 *
 * @since 0.1.0
 */
import type { ChildProcess, SpawnOptions } from "node:child_process"
import { EventEmitter } from "node:events"
import { PassThrough } from "node:stream"
import type { Confinement } from "./confinement.ts"
import { ConfinementError } from "./errors.ts"
import type { LaunchScope } from "./scope.ts"

/** What the stand-in offers of a `ChildProcess`. @since 0.1.0 @category models */
export interface ConfinedChild extends EventEmitter {
  readonly stdout: PassThrough
  readonly stderr: PassThrough
  /** The real process once it started (bubblewrap's), else undefined. */
  readonly child: ChildProcess | undefined
  kill(signal?: NodeJS.Signals | number): boolean
}

class Deferred extends EventEmitter implements ConfinedChild {
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  child: ChildProcess | undefined
  readonly abort = new AbortController()
  killed: NodeJS.Signals | number | undefined

  kill(signal: NodeJS.Signals | number = "SIGTERM"): boolean {
    if (this.child) return this.child.kill(signal)
    this.killed = signal
    this.abort.abort(new Error(`killed with ${String(signal)} before it started`))
    return true
  }
}

/**
 * A function with `child_process.spawn`'s arguments that starts each command confined by
 * `confinement` (one launch per command, cleaned up when it exits), each narrowed to `scope` when
 * one is given.
 *
 * @since 0.1.0
 */
export const confinedSpawner =
  (confinement: Confinement, launch: { readonly scope?: LaunchScope | undefined } = {}) =>
  (command: string, args: ReadonlyArray<string> = [], options: SpawnOptions = {}): ConfinedChild => {
    const out = new Deferred()
    const stdio: SpawnOptions["stdio"] = options.stdio ?? ["ignore", "pipe", "pipe"]
    void confinement
      .spawn(command, args, { ...options, stdio, signal: out.abort.signal, scope: launch.scope })
      .then((child) => {
        out.child = child
        if (out.killed !== undefined) child.kill(out.killed)
        if (child.stdout) child.stdout.pipe(out.stdout)
        else out.stdout.end()
        if (child.stderr) child.stderr.pipe(out.stderr)
        else out.stderr.end()
        child.on("error", (e) => out.emit("error", e))
        child.on("exit", (code, signal) => out.emit("exit", code, signal))
        // bubblewrap failing to set the sandbox up exits 1 like many commands; only the launch
        // knows which it was, and a command that never ran must not read as one that failed.
        // `close` waits for the cleanup too: a caller that looks at the disk once the command is
        // done (a fixer's re-read) must not see the directories this launch made for itself.
        child.on("close", (code, signal) => {
          const cleaned = child.confinement.cleanup().catch(() => undefined)
          void Promise.all([child.confinement.started, cleaned]).then(([started]) => {
            if (!started && out.listenerCount("error") > 0) {
              out.emit(
                "error",
                new ConfinementError(
                  "sandbox-unavailable",
                  `the sandbox could not be set up (bubblewrap exited with ${code ?? signal}): '${command}' was not run`
                )
              )
            }
            out.emit("close", started ? code : null, signal)
          })
        })
      })
      .catch((e: unknown) => {
        out.stdout.end()
        out.stderr.end()
        const error = e instanceof ConfinementError ? e : new ConfinementError("sandbox-unavailable", (e as Error).message, { cause: e })
        // An `error` nobody listens to would throw out of the process: the close still says it.
        if (out.listenerCount("error") > 0) out.emit("error", error)
        out.emit("close", null, typeof out.killed === "string" ? out.killed : null)
      })
    return out
  }
