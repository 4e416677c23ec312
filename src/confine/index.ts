/**
 * `pinnedfs/confine`: protected paths and child-process confinement. A command runs in a sandbox
 * where the workspace is writable, everything else is read-only, each protected path is read-only
 * or invisible, and only the exact paths a grant names are opened again. The protected paths are
 * found fresh for every launch with pinnedfs's no-follow walk, off the JavaScript thread; missing
 * ones the child could create are made first; and the sandbox binds the very objects the final
 * validation opened. A launch that cannot be confined is refused, never run unconfined.
 *
 * compile a policy → prepare a launch (its plan is inspectable) → run one command → clean up.
 *
 * @since 0.1.0
 */
export { ConfinementError, type ConfinementReason } from "./errors.ts"
export {
  type Access,
  type Base,
  type CompiledPolicy,
  compilePolicy,
  defaultRules,
  type Mode,
  type Network,
  type PolicyConfig,
  type PolicyEnvironment,
  type SandboxPlan,
  type UnixSockets,
  type ProtectedRule,
  type Rule,
  type RuleInput
} from "./policy.ts"
export { type AgentName, type AgentPlan, agentNames, type CredentialStore, credentialStores } from "./credentials.ts"
export { type ExecutionTarget, executionTarget, type ExecutionTargetInput, type StateRoot } from "./target.ts"
export { type Grant, type GrantInput, GrantStore } from "./grants.ts"
export type { Candidate, Discovery, DiscoveryLimits, DiscoveryReport } from "./discovery.ts"
export type { CleanupReport } from "./creation.ts"
export type { Layer } from "./layers.ts"
export { fingerprintOf, type LaunchInputs, type LaunchPlan, type PrepareOptions, prepareLaunch } from "./prepare.ts"
export { PreparedLaunch, type RunResult } from "./launch.ts"
export { type SandboxAvailability, sandboxAvailable } from "./available.ts"
export { type LaunchScope, maxScopePaths } from "./scope.ts"
export { type ConfinedRun, Confinement, type ConfinementOptions, type LaunchOptions } from "./confinement.ts"
export { type ConfinedChild, confinedSpawner } from "./spawner.ts"
export { renderSandboxProfile } from "./sandboxExec.ts"
export { type RawPath, shown } from "./raw.ts"
export { cleanupLeftovers, type LeftoversReport } from "./runtime.ts"
export type { SweptItem } from "./wire.ts"
