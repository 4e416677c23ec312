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
import { ConfinementError } from "./errors.ts"
import type { Grant } from "./grants.ts"
import type { LaunchInputs, LaunchPlan } from "./plan.ts"
import { type RawPath, shown, textOf } from "./raw.ts"
import { type SandboxGate, spawnSandboxed } from "./runner.ts"
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
  /** The check of the finished sandbox before its command starts, and what follows a refusal. */
  readonly check?: SandboxCheck | undefined
}

/**
 * The check of a started sandbox (Linux), filled by the preparation (verify.ts): `verify` between
 * the sandbox being set up and its command starting (`at`: the descriptor it waits on, in its own
 * table); `refused` after a refused sandbox has exited; `retry` whether a fresh preparation may
 * succeed; `again` that fresh preparation.
 */
export interface SandboxCheck {
  readonly verify: (pid: number, at: number) => Promise<void>
  readonly refused: (since: number) => Promise<void>
  readonly retry: (error: unknown, phase: "setup" | "check") => boolean
  readonly again: () => Promise<PreparedFields>
}

/** Most sandboxes one launch starts when its destinations keep moving under it. */
const maxSandboxAttempts = 3

/**
 * @since 0.1.0
 * @category models
 */
export class PreparedLaunch {
  private f: PreparedFields
  private state: "ready" | "starting" | "launched" | "closed" = "ready"
  private exited: Promise<void> | undefined
  private cleaned: Promise<CleanupReport> | undefined
  private startedFlag: Promise<boolean> = Promise.resolve(false)

  /** @internal */
  constructor(fields: PreparedFields) {
    this.f = fields
  }

  /** What this launch will do, paths as text (a fresh preparation's, once a sandbox was refused). */
  get plan(): LaunchPlan {
    return this.f.plan
  }

  /** Whether the sandbox set itself up and started the command (false until a command is spawned). */
  get started(): Promise<boolean> {
    return this.startedFlag
  }

  /**
   * Starts `command` in the sandbox, with `child_process.spawn`'s arguments. Before it starts,
   * the inputs (policy, mode, grants, execution target) must be unchanged since preparation and
   * every anchor must still be the directory its path names; otherwise the launch is refused.
   * One command per launch.
   */
  async spawn(command: string, args: ReadonlyArray<string> = [], options: SpawnOptions = {}): Promise<ChildProcess> {
    this.assertReady()
    this.state = "starting"
    try {
      this.assertNotCancelled()
      if (this.f.fingerprintOf(this.f.source()) !== this.f.fingerprint) {
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
    } catch (e) {
      this.state = "ready"
      throw e
    }
    for (let attempt = 1; ; attempt++) {
      const since = Date.now()
      const { child, childPid, gate } = await this.startOnce(command, args, options)
      const check = this.f.check
      const pid = gate === null ? null : await childPid
      if (gate === null || pid === null || check === undefined) {
        gate?.release()
        this.f.onLaunch?.(this.f.applied)
        return child
      }
      try {
        await check.verify(pid, gate.at)
        gate.release()
        this.f.onLaunch?.(this.f.applied)
        return child
      } catch (e) {
        const report = await this.refuse(child, pid, gate, since, check)
        const closed = (error: unknown): never => {
          this.state = "closed"
          this.cleaned = Promise.resolve(report)
          throw error
        }
        if (!check.retry(e, "check") || attempt >= maxSandboxAttempts) closed(e)
        this.f = await check.again().catch(closed)
      }
    }
  }

  /** One sandbox started, waiting at its gate (Linux) for the check. */
  private async startOnce(command: string, args: ReadonlyArray<string>, options: SpawnOptions) {
    const empties = await Promise.all(Array.from({ length: this.f.emptyFiles }, () => fs.promises.open("/dev/null", "r")))
    this.state = "launched"
    try {
      const { child, started, childPid, gate } = spawnSandboxed({
        platform: this.f.platform,
        executable: this.f.bwrap,
        args: this.f.args,
        profile: this.plan.sandbox.kind === "sandbox-exec" ? this.plan.sandbox.profile : "",
        fds: this.f.fds,
        empties: empties.map((e) => e.fd),
        cwd: textOf(this.f.cwd) ?? "/",
        tmpdir: textOf(this.f.tempRoot) ?? "/tmp",
        command,
        commandArgs: args,
        options,
        gate: this.f.platform === "linux"
      })
      this.startedFlag = started
      this.exited = new Promise((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve()
        child.once("exit", () => resolve())
        child.once("error", () => resolve())
      })
      return { child, childPid, gate }
    } finally {
      // The child has its own copies now (or never will): ours close at once, a slice per turn of
      // the loop so hundreds of them never hold it up.
      await Promise.all([releaseInSlices(this.takeHeld()), ...empties.map((e) => e.close().catch(() => undefined))])
    }
  }

  /**
   * A sandbox that failed its check: killed before its command starts, what bubblewrap made for
   * moved destinations removed, and this preparation cleaned up.
   */
  private async refuse(child: ChildProcess, pid: number, gate: SandboxGate, since: number, check: SandboxCheck): Promise<CleanupReport> {
    try {
      process.kill(pid, "SIGKILL")
    } catch {
      // already gone
    }
    child.kill("SIGKILL")
    gate.close()
    await this.exited
    this.exited = undefined
    await check.refused(since)
    try {
      return await cleanupAll(this.f.owned, this.f.anchors, this.f.strategy, this.takeHeld(), this.f.host)
    } finally {
      await this.f.anchors.close()
    }
  }

  /** Spawns `command` (stdio inherited unless given) and waits for it. */
  async run(command: string, args: ReadonlyArray<string> = [], options: SpawnOptions = {}): Promise<RunResult> {
    const child = await this.spawn(command, args, { stdio: "inherit", ...options })
    const result = await new Promise<RunResult>((resolve, reject) => {
      // A bubblewrap that failed at once may have exited while its status was being read.
      if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode })
      child.once("error", reject)
      child.once("exit", (code, signal) => resolve({ code, signal }))
    }).catch((cause: unknown) => {
      throw new ConfinementError("sandbox-unavailable", `the sandbox could not be started: ${(cause as Error).message}`, { cause })
    })
    if (!(await this.started)) {
      throw new ConfinementError(
        "sandbox-unavailable",
        `bubblewrap could not set up the sandbox (it exited with ${result.code ?? result.signal}): the command was not run`
      )
    }
    return result
  }

  /**
   * Waits for the command (if one was started), then removes the directories this launch made
   * (empty ones only; the permanent ones stay) and releases what it holds. Idempotent.
   */
  cleanup(): Promise<CleanupReport> {
    this.cleaned ??= (async () => {
      if (this.exited) await this.exited
      this.state = "closed"
      try {
        // The descriptors still held are closed by the cleanup program, off this thread.
        return await cleanupAll(this.f.owned, this.f.anchors, this.f.strategy, this.takeHeld(), this.f.host)
      } finally {
        await this.f.anchors.close()
      }
    })()
    return this.cleaned
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
