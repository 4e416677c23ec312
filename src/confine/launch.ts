/**
 * A prepared launch: the plan (inspect it), then one command started in it, then cleanup. The
 * launch holds descriptors and may own directories until it is cleaned up; always clean up (it
 * waits for the command to exit first: a protected directory made for the launch must outlive the
 * sandbox that mounts it).
 *
 * @since 0.1.0
 */
import type { ChildProcess, SpawnOptions } from "node:child_process"
import * as fs from "node:fs"
import { native } from "../internal/native.ts"
import type { Strategy } from "../PinnedRoot.ts"
import type { Anchors } from "./anchors.ts"
import type { BwrapArgument } from "./bwrap.ts"
import { type CleanupReport, cleanupAll, type HostHold, type Owned } from "./creation.ts"
import { ConfinementError, SandboxDied } from "./errors.ts"
import type { Grant } from "./grants.ts"
import type { LaunchInputs, LaunchPlan } from "./plan.ts"
import { type RawPath, shown, textOf } from "./raw.ts"
import { launcherPath, openLauncher } from "./launcher.ts"
import { sandboxAvailable } from "./available.ts"
import { type SandboxStart, spawnSandboxed } from "./runner.ts"
import { releaseInSlices } from "./turns.ts"
import type { Release } from "./wire.ts"

/** @since 0.1.0 @category models */
export interface RunResult {
  /** The command's exit status (null when it was killed by a signal). */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
}

export interface PreparedFields {
  readonly plan: LaunchPlan
  readonly platform: "linux" | "darwin"
  readonly bwrap: string
  readonly args: ReadonlyArray<BwrapArgument>
  readonly fds: Array<number>
  /** The identity of what each held descriptor was opened on (see `Release`). */
  readonly fdIdentities: ReadonlyMap<number, string>
  readonly emptyFiles: number
  readonly owned: ReadonlyArray<Owned>
  readonly anchors: Anchors
  readonly identities: ReadonlyMap<RawPath, string>
  readonly source: () => LaunchInputs
  readonly fingerprint: string
  readonly fingerprintOf: (inputs: LaunchInputs) => string
  readonly strategy: Strategy
  readonly tempRoot: RawPath
  readonly cwd: RawPath
  readonly applied: ReadonlyArray<Grant>
  readonly signal: AbortSignal | undefined
  readonly onLaunch: ((applied: ReadonlyArray<Grant>) => void) | undefined
  /** What the launch holds until its cleanup besides the bound descriptors: its record and leases. */
  readonly host: HostHold
  /** The launcher executable (default: beside the addon). */
  readonly launcher?: string | undefined
  /** A check of the finished sandbox from outside, before its command starts (see {@link SandboxCheck}). @internal */
  readonly check?: SandboxCheck | undefined
}

/**
 * What checks a finished sandbox from outside before its command starts, and what a refusal
 * leads to. `verify` gets the sandbox's first process as the host sees it (its `/proc/<pid>/root`
 * is the sandbox's root) and the status socket's descriptor number in it; a rejection refuses that
 * sandbox (its command never runs). `retry` says whether a refusal (in the check, or a sandbox that
 * did not set itself up) may be tried again with `again`, a fresh preparation, up to three
 * sandboxes in all; `refused` runs once a refused sandbox is gone.
 *
 * @internal
 */
export interface SandboxCheck {
  readonly verify: (pid: number, at: number) => Promise<void>
  readonly refused: (since: number) => Promise<void>
  readonly retry: (error: unknown, phase: "setup" | "check") => boolean
  readonly again: () => Promise<PreparedFields>
}

/** Most sandboxes one launch starts when its refusals may be retried. */
const maxSandboxAttempts = 3

/** The refusal of the last of `tries` sandboxes, saying that it was not the first. */
const afterTries = (e: unknown, tries: number): unknown =>
  e instanceof ConfinementError
    ? new ConfinementError(e.reason, `${e.message} (${tries} sandboxes were tried, each prepared afresh)`, { cause: e })
    : e

/**
 * The command's environment: the caller's, less the variables of the agents the policy masks (a
 * masked socket's address is no use to the command, and would tell it where to look), with
 * `TMPDIR` the launch's temporary root.
 */
const environment = (base: NodeJS.ProcessEnv, drop: ReadonlyArray<string>, tmpdir: string): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...base }
  for (const name of drop) delete env[name]
  env["TMPDIR"] = tmpdir
  return env
}

/**
 * @since 0.1.0
 * @category models
 */
export class PreparedLaunch {
  private f: PreparedFields
  private state: "ready" | "starting" | "launched" | "closed" = "ready"
  private exited: Promise<RunResult> | undefined
  private released: Promise<unknown> = Promise.resolve()
  private cleaned: Promise<CleanupReport> | undefined
  private startValue: Promise<SandboxStart> = Promise.resolve({ started: false, why: "no command was spawned" })

  /** @internal */
  constructor(fields: PreparedFields) {
    this.f = fields
  }

  /** What this launch will do, paths as text (a fresh preparation's, once a sandbox was refused). */
  get plan(): LaunchPlan {
    return this.f.plan
  }

  /**
   * Whether the sandbox set itself up and reached the command (false until a command is spawned,
   * and for a sandbox that failed to set up: then the command did not run). A command that could
   * not be executed (status 127 or 126) did reach this point.
   */
  get started(): Promise<boolean> {
    return this.startValue.then((s) => s.started)
  }

  /** How the start went, with the reason when the command did not run. @internal */
  get start(): Promise<SandboxStart> {
    return this.startValue
  }

  /**
   * The command's exit, from the moment it was spawned (rejects when it could not be started at
   * all). Listening here misses nothing, however soon the command exits.
   */
  get exit(): Promise<RunResult> {
    return this.exited ?? Promise.reject(new ConfinementError("launched", "no command has been spawned in this launch"))
  }

  /**
   * Starts `command` in the sandbox, with `child_process.spawn`'s arguments, and hands the child
   * back once the sandbox is set up and the command let start. Before it starts, the inputs
   * (policy, mode, grants, execution target) must be unchanged since preparation and every anchor
   * must still be the directory its path names; a sandbox that cannot set itself up, or fails the
   * check of the finished sandbox, is refused (a `ConfinementError`) and its command never runs.
   * One command per launch. Nothing is awaited between letting the command start and handing the
   * child back, so a listener attached at once sees every event of the command.
   */
  async spawn(command: string, args: ReadonlyArray<string> = [], options: SpawnOptions = {}): Promise<ChildProcess> {
    this.assertReady()
    this.state = "starting"
    let inputs: LaunchInputs
    try {
      inputs = await this.recheck()
    } catch (e) {
      this.state = "ready"
      throw e
    }
    for (let attempt = 1; ; attempt++) {
      const since = Date.now()
      const sandbox = await this.startOnce(command, args, options, inputs)
      const ready = await sandbox.ready
      try {
        if (!ready.ready) throw await this.notReady(ready.why)
        this.assertNotCancelled()
        if (this.f.check !== undefined && ready.pid !== null) await this.f.check.verify(ready.pid, ready.at)
        this.assertNotCancelled()
      } catch (e) {
        sandbox.refuse((e as Error).message)
        const report = await this.refused(since)
        const retry = this.f.check?.retry(e, ready.ready ? "check" : "setup") === true && attempt < maxSandboxAttempts
        const again = retry ? await this.f.check!.again().catch((cause: unknown) => cause as Error) : e
        if (!retry || again instanceof Error) {
          this.state = "closed"
          this.cleaned = Promise.resolve(report)
          throw attempt > 1 && again === e ? afterTries(e, attempt) : again
        }
        this.f = again as PreparedFields
        continue
      }
      sandbox.release()
      this.f.onLaunch?.(this.f.applied)
      return sandbox.child
    }
  }

  /** The inputs, unchanged since preparation, and every anchor still the directory prepared. */
  private async recheck(): Promise<LaunchInputs> {
    this.assertNotCancelled()
    const inputs = this.f.source()
    if (this.f.fingerprintOf(inputs) !== this.f.fingerprint) {
      throw new ConfinementError("changed", "the policy, mode, grants or execution target changed during preparation: launch refused")
    }
    await Promise.all(
      [...this.f.identities].map(async ([anchor, identity]) => {
        const now = await native.identify(textOf(anchor) ?? "").catch(() => "missing")
        if (now !== identity) {
          throw new ConfinementError(
            "changed",
            `'${shown(anchor)}' is no longer the directory prepared (${identity} is now ${now}): launch refused`
          )
        }
      })
    )
    this.assertNotCancelled()
    return inputs
  }

  /**
   * One sandbox, started and waiting before its command. Its exit is listened for at once, and the
   * descriptors it was given are released in the background (cleanup waits for them).
   */
  private async startOnce(command: string, args: ReadonlyArray<string>, options: SpawnOptions, inputs: LaunchInputs) {
    const opened = await this.openForLaunch().catch((e: unknown) => {
      this.state = "ready"
      throw e
    })
    this.state = "launched"
    const sandbox = spawnSandboxed({
      platform: this.f.platform,
      executable: this.f.bwrap,
      args: this.f.args,
      profile: this.plan.sandbox.kind === "sandbox-exec" ? this.plan.sandbox.profile : "",
      fds: this.f.fds,
      empties: opened.empties.map((e) => e.fd),
      launcher: { fd: opened.launcher.fd, path: launcherPath(this.f.launcher) },
      cwd: textOf(this.f.cwd) ?? "/",
      env: environment(options.env ?? process.env, inputs.policy.dropVariables, textOf(this.f.tempRoot) ?? "/tmp"),
      command,
      commandArgs: args,
      options,
      unixSockets: inputs.policy.unixSockets
    })
    const child = sandbox.child
    this.startValue = sandbox.start
    this.exited = new Promise<RunResult>((resolve, reject) => {
      child.once("exit", (code, signal) => resolve({ code, signal }))
      child.once("error", reject)
    })
    this.exited.catch(() => undefined)
    // The child has its own copies now (or never will): ours close a slice per turn of the loop,
    // so hundreds of them never hold it up.
    this.released = Promise.all([releaseInSlices(this.takeHeld()), this.closeOpened(opened)]).catch(() => undefined)
    return sandbox
  }

  /**
   * A sandbox that did not set itself up: why, with what the machine says would fix it. One that
   * exited with a status of its own on a machine that builds sandboxes is a `SandboxDied`: this
   * one sandbox failed (a destination that came and went under a concurrent rename, most often),
   * so a fresh preparation may succeed.
   */
  private async notReady(why: string): Promise<ConfinementError> {
    const exit = await this.exit.catch(() => null)
    const code = exit === null ? "" : ` (bubblewrap exited with ${exit.code ?? exit.signal})`
    const probe = this.f.platform === "linux" ? await sandboxAvailable({ bwrap: this.f.bwrap }) : null
    if (probe !== null && !probe.available) return new ConfinementError("sandbox-unavailable", `${probe.reason}: the command was not run`)
    if (exit !== null && exit.code !== null) {
      return new SandboxDied(
        `the sandbox exited while it was being set up (bubblewrap exited with ${exit.code}; its message, if any, is above): the command was not run`
      )
    }
    return new ConfinementError("sandbox-unavailable", `${why}${code}: the command was not run`)
  }

  /** A refused sandbox: gone before its command, and this preparation's own state cleaned up. */
  private async refused(since: number): Promise<CleanupReport> {
    await this.exited?.catch(() => undefined)
    await this.f.check?.refused(since)
    return await this.cleanupNow()
  }

  /** Spawns `command` (stdio inherited unless given) and waits for it. */
  async run(command: string, args: ReadonlyArray<string> = [], options: SpawnOptions = {}): Promise<RunResult> {
    await this.spawn(command, args, { stdio: "inherit", ...options })
    return await this.exit.catch((cause: unknown) => {
      throw new ConfinementError("sandbox-unavailable", `the sandbox could not be started: ${(cause as Error).message}`, { cause })
    })
  }

  /**
   * Waits for the command (if one was started), then removes the directories this launch made
   * (empty ones only; the permanent ones stay) and releases what it holds. Idempotent.
   */
  cleanup(): Promise<CleanupReport> {
    this.cleaned ??= (async () => {
      if (this.exited) await this.exited.catch(() => undefined)
      this.state = "closed"
      return await this.cleanupNow()
    })()
    return this.cleaned
  }

  /** Removes what this preparation made and releases what it holds (its sandbox, if any, is gone). */
  private async cleanupNow(): Promise<CleanupReport> {
    await this.released
    try {
      // The descriptors still held are closed by the cleanup program, off this thread.
      return await cleanupAll(this.f.owned, this.f.anchors, this.f.strategy, this.takeHeld(), this.f.host)
    } finally {
      await this.f.anchors.close()
    }
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.cleanup()
  }

  /** The descriptors still held, now the caller's to close. */
  private takeHeld(): Array<Release> {
    const out: Array<Release> = []
    for (const [i, fd] of this.f.fds.entries()) {
      if (fd >= 0) {
        out.push({ fd, identity: this.f.fdIdentities.get(fd) ?? "" })
        this.f.fds[i] = -1
      }
    }
    return out
  }

  /** The launcher and the empty files file masks are bound from, for one launch. */
  private async openForLaunch(): Promise<{ launcher: fs.promises.FileHandle; empties: Array<fs.promises.FileHandle> }> {
    const launcher = openLauncher(this.f.launcher)
    const empties = Array.from({ length: this.f.emptyFiles }, () => fs.promises.open("/dev/null", "r"))
    const all = await Promise.allSettled([launcher, ...empties])
    const failed = all.find((r) => r.status === "rejected")
    if (failed !== undefined) {
      await Promise.all(all.map((r) => (r.status === "fulfilled" ? r.value.close() : undefined)))
      throw failed.reason
    }
    const handles = all.map((r) => (r as PromiseFulfilledResult<fs.promises.FileHandle>).value)
    return { launcher: handles[0]!, empties: handles.slice(1) }
  }

  private async closeOpened(opened: { launcher: fs.promises.FileHandle; empties: Array<fs.promises.FileHandle> }): Promise<void> {
    await Promise.all([opened.launcher, ...opened.empties].map((h) => h.close().catch(() => undefined)))
  }

  private assertReady(): void {
    if (this.state !== "ready") {
      throw new ConfinementError(
        "launched",
        this.state === "closed" ? "this launch has been cleaned up" : "this launch has already started a command"
      )
    }
  }

  private assertNotCancelled(): void {
    if (this.f.signal?.aborted)
      throw new ConfinementError("cancelled", "launch was cancelled before it started", { cause: this.f.signal.reason })
  }
}
