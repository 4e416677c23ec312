/**
 * A confinement session: the policy, the mode, the grants and the execution target a program
 * launches confined commands with. Each launch is prepared from the session's state at that moment
 * and refused if that state changes before the command starts.
 *
 * @since 0.1.0
 */
import type { ChildProcess, SpawnOptions } from "node:child_process"
import type { Strategy } from "../PinnedRoot.ts"
import type { CleanupReport } from "./creation.ts"
import type { DiscoveryLimits } from "./discovery.ts"
import { GrantStore } from "./grants.ts"
import { gitWriteInputs } from "./git.ts"
import type { PreparedLaunch, RunResult } from "./launch.ts"
import { compilePolicy, type CompiledPolicy, type Mode, type PolicyConfig } from "./policy.ts"
import { type LaunchInputs, type LaunchPlan, prepareLaunch } from "./prepare.ts"
import type { LaunchScope } from "./scope.ts"
import { type ExecutionTarget, executionTarget, type ExecutionTargetInput } from "./target.ts"

/** @since 0.1.0 @category models */
export interface ConfinementOptions {
  readonly target: ExecutionTargetInput
  readonly policy?: PolicyConfig | undefined
  /** Default `"confined"`. */
  readonly mode?: Mode | undefined
  /** Default: a fresh in-memory store. */
  readonly grants?: GrantStore | undefined
  readonly strategy?: Strategy | undefined
  readonly limits?: DiscoveryLimits | undefined
  readonly bwrap?: string | undefined
  /** The sandbox launcher executable (default: the one built beside the addon). */
  readonly launcher?: string | undefined
}

/**
 * What one launch is given besides the session: cancellation, and a scope that narrows what it may
 * write in the workspace (see {@link LaunchScope}).
 *
 * @since 0.1.0
 * @category models
 */
export interface LaunchOptions {
  readonly signal?: AbortSignal | undefined
  readonly scope?: LaunchScope | undefined
  /**
   * The environment the command will be given (default this process's): the agents' sockets it
   * names are masked, and their variables dropped, unless the policy allows the agent.
   */
  readonly env?: NodeJS.ProcessEnv | undefined
  /**
   * `"write"`: git may write the workspace's repository for this launch (commit, branch, fetch),
   * while its hooks and config stay read-only unless granted too (see `git.ts`).
   */
  readonly git?: "write" | undefined
}

/** @since 0.1.0 @category models */
export interface ConfinedRun extends RunResult {
  readonly plan: LaunchPlan
  readonly cleanup: CleanupReport
}

/**
 * @since 0.1.0
 * @category constructors
 */
export class Confinement {
  readonly grants: GrantStore
  private config: PolicyConfig
  private modeValue: Mode
  private compiled: CompiledPolicy
  private targetValue: ExecutionTarget
  private readonly options: ConfinementOptions

  constructor(options: ConfinementOptions) {
    this.options = options
    this.config = options.policy ?? {}
    this.modeValue = options.mode ?? "confined"
    this.compiled = compilePolicy(this.config, this.modeValue)
    this.targetValue = executionTarget(options.target)
    this.grants = options.grants ?? GrantStore.memory()
  }

  get policy(): CompiledPolicy {
    return this.compiled
  }

  get mode(): Mode {
    return this.modeValue
  }

  get target(): ExecutionTarget {
    return this.targetValue
  }

  setPolicy(config: PolicyConfig): void {
    this.compiled = compilePolicy(config, this.modeValue)
    this.config = config
  }

  setMode(mode: Mode): void {
    this.compiled = compilePolicy(this.config, mode)
    this.modeValue = mode
  }

  setTarget(input: ExecutionTargetInput): void {
    this.targetValue = executionTarget(input)
  }

  /**
   * The inputs a launch prepared now would use: the policy compiled for the command's environment
   * (its agents' sockets), and for `git: "write"` the grant and the protections that brings.
   */
  inputs(launch: Pick<LaunchOptions, "env" | "git"> = {}): LaunchInputs {
    const policy = compilePolicy(this.config, this.modeValue, { env: launch.env ?? process.env })
    const grants = this.grants.list()
    return launch.git === "write" ? gitWriteInputs(policy, grants, this.targetValue) : { policy, grants, target: this.targetValue }
  }

  /** Prepares one launch (see {@link prepareLaunch}); `"once"` grants are consumed when it starts. */
  prepare(options: LaunchOptions = {}): Promise<PreparedLaunch> {
    const launch = { env: options.env, git: options.git }
    return prepareLaunch(() => this.inputs(launch), {
      signal: options.signal,
      scope: options.scope,
      strategy: this.options.strategy,
      limits: this.options.limits,
      bwrap: this.options.bwrap,
      launcher: this.options.launcher,
      onLaunch: (applied) => this.grants.consume(applied.map((g) => g.id))
    })
  }

  /** Prepares, runs `command` to its end (stdio inherited unless given), and cleans up. */
  async run(command: string, args: ReadonlyArray<string> = [], options: SpawnOptions & LaunchOptions = {}): Promise<ConfinedRun> {
    const { signal, scope, git, ...spawnOptions } = options
    const launch = await this.prepare({ signal, scope, git, env: spawnOptions.env })
    try {
      const result = await launch.run(command, args, spawnOptions)
      return { ...result, plan: launch.plan, cleanup: await launch.cleanup() }
    } finally {
      await launch.cleanup()
    }
  }

  /**
   * `child_process.spawn`, confined: prepares a launch, starts the command in it, and cleans the
   * launch up when the command exits. The plan is on `child.confinement`.
   */
  async spawn(
    command: string,
    args: ReadonlyArray<string> = [],
    options: SpawnOptions & LaunchOptions = {}
  ): Promise<ChildProcess & { readonly confinement: PreparedLaunch }> {
    const { signal, scope, git, ...spawnOptions } = options
    const launch = await this.prepare({ signal, scope, git, env: spawnOptions.env })
    let child: ChildProcess
    try {
      child = await launch.spawn(command, args, spawnOptions)
    } catch (e) {
      await launch.cleanup()
      throw e
    }
    // Cleanup waits for the command; what it could not remove is on `child.confinement`'s report.
    launch.cleanup().catch(() => undefined)
    return Object.assign(child, { confinement: launch })
  }
}
