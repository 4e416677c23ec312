/**
 * `pinnedfs/dev`: in-place fixers (formatters, linters' `--fix`, codemods) in a plan over an
 * in-memory workspace, with every file access through a pinned root. See `docs/dev.md`.
 *
 * @since 0.1.0
 */
export { acquire } from "./acquire.ts"
export type { Capability, CapabilityContext, Progress } from "./Capability.ts"
export * as Delta from "./Delta.ts"
export { DevFileAccess, type DevFileAccessOptions, type Journal, type Method } from "./DevFileAccess.ts"
export type { Diagnostic, DiagnosticCode, Severity } from "./Diagnostic.ts"
export type { Allowlist, Declaration, Envelope, Withheld } from "./envelope.ts"
export { approveAll, type Gate, type GateRequest } from "./Gate.ts"
export { defaultLimits, type Limits } from "./limits.ts"
export { escaped, quoted } from "./quote.ts"
export type { RestoreReport } from "./rollback.ts"
export { workspacePath } from "./paths.ts"
export * as Plan from "./Plan.ts"
export * as Policy from "./Policy.ts"
export type { ReadOutcome } from "./readTexts.ts"
export type { RereadReport } from "./reread.ts"
export * as Step from "./Step.ts"
export { type Editor, Workspace } from "./Workspace.ts"
export { eslintFixer, type EslintOptions } from "./engines/eslint.ts"
export { type Configuration, ConfigurationError, type ConfiguredStep, loadConfiguration, parseConfiguration } from "./config.ts"
export {
  type ChildLike,
  defaultSpawn,
  ExternalFailure,
  externalFixer,
  type ExternalFixerOptions,
  type Spawn,
  type SpawnOptions
} from "./engines/external.ts"
export { prettierFixer, type PrettierFixerOptions } from "./engines/prettier.ts"
