/**
 * An external tool as an in-place fixer: `eslint --fix`, `prettier --write`, `biome check
 * --write` or any command, run as a child process in the workspace directory with the allowlisted
 * files appended to its arguments. The re-read then finds out what it did.
 *
 * **The façade does not contain a child process.** The child opens files with its own system
 * calls; nothing here sees or checks them. It is given the allowlist, and the re-read reconciles
 * the envelope afterwards (so a change inside the envelope is always seen, and a change to a path
 * withheld from it is reported), but a child that writes outside its envelope is neither stopped
 * nor noticed, unless the child is confined: given a `pinnedfs/confine` session (`confine`), the
 * command runs in its sandbox narrowed to this invocation's allowlist. The allowlisted files are
 * the only files of the workspace it can write (in place: a tool that replaces a file by renaming a
 * new one onto it gets `EROFS`), the static base directory of each `mayCreate` glob is writable as
 * a tree (where it may create; `**\/*.gen.ts` has none, so it opens the whole workspace), and the
 * rest of the workspace, the protected paths (`.git` by default) and everything outside are
 * read-only or hidden. The session's own writable roots, state roots and temporary root stay
 * writable: that is where a tool keeps its caches. A write outside the allowlist then fails in the
 * child, and the re-read finds the disk as the allowlist left it. A launch that cannot be confined
 * fails the step with the reason and the command does not run; it is never retried unconfined.
 *
 * @since 0.1.0
 */
import { spawn as nodeSpawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import picomatch from "picomatch"
import { type Confinement, confinedSpawner, type LaunchScope } from "../../confine/index.ts"
import type { Capability } from "../Capability.ts"

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
 * The part of a `ChildProcess` the runner uses.
 *
 * @since 0.1.0
 * @category models
 */
export interface ChildLike {
  readonly stdout: NodeJS.ReadableStream | null
  readonly stderr: NodeJS.ReadableStream | null
  on(event: "error", listener: (error: Error) => void): unknown
  on(event: "close", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown
  kill(signal?: NodeJS.Signals | number): boolean
}

/**
 * Starts the child. The default is `node:child_process.spawn` with no shell and stdin closed; a
 * confining implementation takes the same arguments.
 *
 * @since 0.1.0
 * @category models
 */
export type Spawn = (command: string, args: ReadonlyArray<string>, options: SpawnOptions) => ChildLike

/** @since 0.1.0 @category constructors */
export const defaultSpawn: Spawn = (command, args, options) =>
  nodeSpawn(command, [...args], { cwd: options.cwd, env: options.env, stdio: ["ignore", "pipe", "pipe"] })

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
   * Run the command confined by this session, narrowed to the allowlist (its workspace must be the
   * plan's workspace directory). Excludes `spawn`.
   */
  readonly confine?: Confinement | undefined
  readonly env?: NodeJS.ProcessEnv | undefined
  /** Exit codes that mean success. Default `[0]`. */
  readonly okExitCodes?: ReadonlyArray<number> | undefined
  /** Kill the child (SIGTERM, then SIGKILL) after this long. Default: no limit. */
  readonly timeoutMs?: number | undefined
  /** How often a `running` progress event is sent while the child runs. Default 2000 ms. */
  readonly heartbeatMs?: number | undefined
}

/**
 * A session confining another directory would leave this workspace read-only to the tool (its
 * edits would fail) while making that other directory writable: a mistake to report, not to run.
 */
const sameWorkspace = async (confinement: Confinement, workspaceDir: string): Promise<void> => {
  const [theirs, ours] = await Promise.all([fs.promises.realpath(confinement.target.workspace), fs.promises.realpath(workspaceDir)])
  if (theirs !== ours) {
    throw new Error(`the confinement's workspace '${theirs}' is not this plan's workspace '${ours}': the command was not run`)
  }
}

/**
 * What one confined invocation may write in the workspace: the allowlisted files, and where its
 * `mayCreate` globs could put a new file (a glob's static base; a plain path's directory).
 */
const launchScope = (files: ReadonlyArray<string>, mayCreate: ReadonlyArray<string>): LaunchScope => ({
  files,
  directories: mayCreate.map((g) => {
    const scanned = picomatch.scan(g)
    return scanned.isGlob ? scanned.base : path.posix.dirname(g)
  })
})

/** How much of the child's output a failure diagnostic quotes. */
const tailBytes = 4096

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
      const args = [...(o.args ?? []), ...appended]
      if (o.confine !== undefined) await sameWorkspace(o.confine, context.workspaceDir)
      const spawn: Spawn =
        o.confine !== undefined ? confinedSpawner(o.confine, { scope: launchScope(files, mayCreate) }) : (o.spawn ?? defaultSpawn)
      const started = Date.now()
      const child = spawn(o.command, args, { cwd: context.workspaceDir, env: o.env ?? process.env })
      let tail = ""
      const keep = (stream: "stdout" | "stderr") => (chunk: Buffer | string) => {
        const text = chunk.toString()
        tail = (tail + text).slice(-tailBytes)
        context.progress({ type: "output", name, stream, text })
      }
      child.stdout?.on("data", keep("stdout"))
      child.stderr?.on("data", keep("stderr"))
      const heartbeat = setInterval(
        () => context.progress({ type: "running", name, elapsedMs: Date.now() - started }),
        o.heartbeatMs ?? 2000
      )
      let killer: NodeJS.Timeout | undefined
      let timedOut = false
      const timer =
        o.timeoutMs === undefined
          ? undefined
          : setTimeout(() => {
              timedOut = true
              child.kill("SIGTERM")
              killer = setTimeout(() => child.kill("SIGKILL"), 2000)
            }, o.timeoutMs)
      try {
        const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
          child.on("error", (e) => reject(new Error(`could not run '${o.command}': ${e.message}`, { cause: e })))
          child.on("close", (c, s) => resolve([c, s]))
        })
        const ok = code !== null && (o.okExitCodes ?? [0]).includes(code)
        if (!ok) {
          const how = timedOut
            ? `was killed after ${o.timeoutMs} ms`
            : code === null
              ? `was killed by ${signal}`
              : `exited with code ${code}`
          throw new Error(`'${o.command}' ${how}${tail.trim() ? `:\n${tail.trim()}` : ""}`)
        }
        return undefined
      } finally {
        clearInterval(heartbeat)
        if (timer) clearTimeout(timer)
        if (killer) clearTimeout(killer)
      }
    }
  }
}
