/**
 * What a launch is prepared from and the plan it becomes: the models both preparation
 * (`prepare.ts`, which builds a plan) and the prepared launch (`launch.ts`, which re-checks and
 * runs it) speak. Kept apart so neither of those imports the other's module.
 *
 * @since 0.1.0
 */
import type { Owned } from "./creation.ts"
import type { DiscoveryReport } from "./discovery.ts"
import type { Grant } from "./grants.ts"
import type { Access, CompiledPolicy, Mode, SandboxPlan } from "./policy.ts"
import type { ExecutionTarget } from "./target.ts"
import type { EntryType } from "./wire.ts"

/** What one launch is prepared from. @since 0.1.0 @category models */
export interface LaunchInputs {
  readonly policy: CompiledPolicy
  readonly grants: ReadonlyArray<Grant>
  readonly target: ExecutionTarget
}

/**
 * The plan of one launch, for people and tests: paths as text; with the network, the agents and
 * the credential stores (`SandboxPlan`). @since 0.1.0 @category models
 */
export interface LaunchPlan extends SandboxPlan {
  readonly mode: Mode
  readonly workspace: string
  readonly cwd: string
  readonly tempRoot: string
  readonly writableRoots: ReadonlyArray<string>
  readonly restrictions: ReadonlyArray<{
    readonly path: string
    readonly access: Access
    readonly type: EntryType
    /** pointer: a repository a `.git` file names; runtime: the launch records' directory. */
    readonly origin: "match" | "probe" | "unreadable" | "created" | "pointer" | "runtime"
    /** The deciding rule's glob; null for an unreadable tree protected whole. */
    readonly rule: string | null
  }>
  /** What a launch scope made writable in the workspace; null when the whole workspace is. */
  readonly scope: {
    readonly files: ReadonlyArray<string>
    readonly directories: ReadonlyArray<string>
    /** Named by the scope and left as they are: missing, or inside a protected path. */
    readonly skipped: ReadonlyArray<{ readonly path: string; readonly why: string }>
  } | null
  readonly created: ReadonlyArray<{
    readonly path: string
    readonly identity: string
    readonly purpose: Owned["purpose"]
    readonly permanent: boolean
  }>
  readonly grants: {
    readonly applied: ReadonlyArray<Grant>
    readonly unapplied: ReadonlyArray<{ readonly grant: Grant; readonly why: string }>
  }
  readonly layers: ReadonlyArray<{ readonly op: string; readonly path: string; readonly detail: string; readonly why: string }>
  readonly discovery: ReadonlyArray<DiscoveryReport>
  readonly idleRules: ReadonlyArray<{ readonly rule: string; readonly why: string }>
  readonly sandbox:
    | { readonly kind: "bubblewrap"; readonly executable: string; readonly arguments: ReadonlyArray<string> }
    | { readonly kind: "sandbox-exec"; readonly profile: string }
}
