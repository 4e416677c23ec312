/**
 * An external tool as an in-place fixer: `eslint --fix`, `prettier --write`, `biome check
 * --write` or any command, run as a child process in the workspace directory with the allowlisted
 * files appended to its arguments. The re-read then finds out what it did.
 *
 * - **Any number of files.** The list is cut into chunks that fit the system's argument limit,
 *   measured (`arguments.ts`: `ARG_MAX` less the environment as it will be passed), and the chunks
 *   run in order (or `concurrency` at a time); the plan re-reads once, after the last. The first
 *   chunk that fails ends the run.
 * - **Stopped whole.** `timeoutMs` is for the whole run; a command stopped by it or by `signal` is
 *   killed with its process group, or its sandbox (`child.ts`), and returns within a stated grace.
 *
 * **The façade does not contain a child process.** The child opens files with its own system
 * calls; nothing here sees or checks them. It is given the allowlist, and the re-read reconciles
 * the envelope afterwards, but a child that writes outside its envelope is neither stopped nor
 * noticed, unless the child is confined: given a `pinnedfs/confine` session (`confine`), each
 * chunk runs in its sandbox narrowed to exactly the files it may write (see `confined.ts`).
 *
 * @since 0.1.0
 */
import { spawn as nodeSpawn } from "node:child_process"
import type { Confinement } from "../../confine/index.ts"
import type { Capability } from "../Capability.ts"
import { escaped } from "../quote.ts"
import { chunked } from "./arguments.ts"
import { runChild } from "./child.ts"
import { confinedChunks, confinedRunner, refuseGlobs } from "./confined.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface SpawnOptions {
  /** The workspace directory. */
  readonly cwd: string
  readonly env: NodeJS.ProcessEnv
}

/**
 * The part of a `ChildProcess` the runner uses. `kill` stops the command as a whole (the default
 * spawn signals its process group).
 *
 * @since 0.1.0
 * @category models
 */
export interface ChildLike {
  readonly stdout: NodeJS.ReadableStream | null
  readonly stderr: NodeJS.ReadableStream | null
  on(event: "error", listener: (error: Error) => void): unknown
  on(event: "exit" | "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
  kill(signal?: NodeJS.Signals | number): boolean
}

/**
 * Starts the child. The default is `node:child_process.spawn` with no shell, stdin closed, in a
 * process group of its own; a confining implementation takes the same arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type Spawn = (command: string, args: ReadonlyArray<string>, options: SpawnOptions) => ChildLike

/**
 * `child_process.spawn` in a new process group (`detached`), whose `kill` signals the group.
 *
 * @since 0.1.0
 * @category constructors
 */
export const defaultSpawn: Spawn = (command, args, options) => {
  const child = nodeSpawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"], detached: true })
  return {
    stdout: child.stdout,
    stderr: child.stderr,
    on: (event: string, listener: (...a: Array<never>) => void) => child.on(event, listener as unknown as (...a: Array<unknown>) => void),
    kill: (signal = "SIGTERM") => {
      if (child.pid === undefined) return false
      try {
        process.kill(-child.pid, signal)
        return true
      } catch {
        // The group is gone (every member exited): nothing left to signal.
        return false
      }
    }
  }
}

/**
 * @since 0.1.0
 * @category models
 */
export interface ExternalFixerOptions {
  readonly name?: string | undefined
  readonly command: string
  readonly args?: ReadonlyArray<string> | undefined
  readonly scope: ReadonlyArray<string>
  readonly selectors?: ReadonlyArray<string> | undefined
  readonly mayCreate?: ReadonlyArray<string> | undefined
  /** Append the allowlisted files to `args` (default). With none to append the tool is not run. */
  readonly appendFiles?: boolean | undefined
  readonly spawn?: Spawn | undefined
  /**
   * Run the command confined by this session, narrowed to the allowlist and the `mayCreate` names
   * (its workspace and working directory must be the plan's workspace directory). Excludes `spawn`;
   * `mayCreate` must then name files, not globs.
   */
  readonly confine?: Confinement | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
  /** Exit codes that mean success. Default `[0]`. */
  readonly okExitCodes?: ReadonlyArray<number> | undefined
  /** Stop the whole run (every chunk) after this long. Default: no limit. */
  readonly timeoutMs?: number | undefined
  /** Between `SIGTERM` and `SIGKILL` when stopping. Default 2000 ms. */
  readonly killGraceMs?: number | undefined
  /** Stops the run as `timeoutMs` does (an interrupt: the command line's Ctrl-C). */
  readonly signal?: AbortSignal | undefined
  /** How many chunks run at once. Default 1: in order. */
  readonly concurrency?: number | undefined
  /** How often a `running` progress event is sent while the child runs. Default 2000 ms. */
  readonly heartbeatMs?: number | undefined
}

/**
 * Why an external fixer's run failed, as data: how its command ended.
 *
 * @since 0.1.0
 * @category errors
 */
export class ExternalFailure extends Error {
  override readonly name = "ExternalFailure"
  constructor(
    message: string,
    /** The exit code, `null` when a signal ended it. */
    readonly code: number | null,
    readonly signal: NodeJS.Signals | null,
    /** Set when pinnedfs stopped it. */
    readonly stopped: "timeout" | "aborted" | undefined
  ) {
    super(message)
  }
}

/** How long a command's pipes may stay open once it has exited. */
const pipeGraceMs = 500

/** @since 0.1.0 @category constants */
export const defaultKillGraceMs = 2000

const positiveOr = (value: number | undefined, fallback: number, what: string): number => {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1) throw new TypeError(`externalFixer: ${what} must be a positive integer`)
  return value
}

/**
 * @since 0.1.0
 * @category constructors
 */
export const externalFixer = (o: ExternalFixerOptions): Capability => {
  const name = o.name ?? [o.command, ...(o.args ?? [])].join(" ")
  if (o.confine !== undefined && o.spawn !== undefined) {
    throw new TypeError(`externalFixer '${name}': give either confine or spawn, not both (confine supplies the spawn)`)
  }
  const mayCreate = o.mayCreate ?? []
  if (o.confine !== undefined) refuseGlobs(name, mayCreate)
  const concurrency = positiveOr(o.concurrency, 1, "concurrency")
  const killGraceMs = positiveOr(o.killGraceMs, defaultKillGraceMs, "killGraceMs")
  return {
    name,
    scope: o.scope,
    selectors: o.selectors,
    mayCreate,
    external: true,
    run: async (access, context) => {
      const files = access.scope
      if (o.appendFiles !== false && files.length === 0) return undefined
      // A file named like an option must not be read as one.
      const appended = o.appendFiles === false ? [] : files.map((f) => (f.startsWith("-") ? `./${f}` : f))
      const env = o.env ?? process.env
      const args = o.args ?? []
      const started = Date.now()
      const deadline = o.timeoutMs === undefined ? undefined : started + o.timeoutMs
      // Prepared before the heartbeat starts: a preparation that is refused (a --may-create name
      // the policy denies, a workspace that is not the confinement's) throws, and must not leave a
      // timer behind that keeps the process alive.
      const confined = o.confine === undefined ? undefined : await confinedRunner(o.confine, access, context.workspaceDir, mayCreate)
      const heartbeat = setInterval(
        () => context.progress({ type: "running", name, elapsedMs: Date.now() - started }),
        o.heartbeatMs ?? 2000
      )
      try {
        const cut =
          confined === undefined
            ? chunked(appended, [o.command, ...args], env)
            : confinedChunks(appended, [o.command, ...args], env, confined)
        // With no files to append (appendFiles: false) the command still runs, once.
        const lists = cut.length === 0 ? [[]] : cut
        if (lists.length > 1) context.progress({ type: "runs", name, files: files.length, runs: lists.length })
        const runOne = async (list: ReadonlyArray<string>, k: number) => {
          const outcome = await runChild({
            command: o.command,
            args: [...args, ...list],
            cwd: context.workspaceDir,
            env,
            spawn: confined?.spawn(list) ?? o.spawn ?? defaultSpawn,
            deadline,
            signal: o.signal,
            killGraceMs,
            pipeGraceMs,
            onOutput: (stream, text) => context.progress({ type: "output", name, stream, text })
          })
          const ok = outcome.stopped === undefined && outcome.code !== null && (o.okExitCodes ?? [0]).includes(outcome.code)
          if (ok) return
          const how =
            outcome.stopped === "timeout"
              ? `was killed after ${o.timeoutMs} ms`
              : outcome.stopped === "aborted"
                ? "was interrupted"
                : outcome.code === null
                  ? `was killed by ${outcome.signal}`
                  : `exited with code ${outcome.code}`
          const which = lists.length > 1 ? ` (run ${k + 1} of ${lists.length})` : ""
          const said = outcome.tail.trim() ? `:\n${escaped(outcome.tail.trim(), "\n\t")}` : ""
          throw new ExternalFailure(`'${escaped(o.command)}'${which} ${how}${said}`, outcome.code, outcome.signal, outcome.stopped)
        }
        await inBatches(lists, concurrency, runOne)
        return undefined
      } finally {
        clearInterval(heartbeat)
        await confined?.finish()
      }
    }
  }
}

/** Runs `work` over `items`, at most `n` at a time, in order of start; the first failure ends it. */
const inBatches = async <A>(items: ReadonlyArray<A>, n: number, work: (item: A, k: number) => Promise<void>): Promise<void> => {
  let next = 0
  let failed: unknown
  const lane = async () => {
    while (failed === undefined && next < items.length) {
      const k = next++
      try {
        await work(items[k]!, k)
      } catch (e) {
        failed ??= e
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, lane))
  if (failed !== undefined) throw failed
}
