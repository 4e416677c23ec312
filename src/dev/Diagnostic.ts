/**
 * What a plan tells its caller about files: an `ERROR` fails the step it was raised in, a
 * `WARNING` never does.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 @category models */
export type Severity = "ERROR" | "WARNING"

/**
 * Why a diagnostic was raised, so callers (and tests) can branch without parsing messages.
 *
 * - `unreadable`: a file could not be admitted (read error, binary, too large, a link, not a file).
 * - `refused`: an engine asked the façade for something its step was not allowed.
 * - `engine`: reported by the engine itself (its delta's diagnostics, a tool's exit status).
 * - `withheld`: a path was kept from a fixer because it is edited in memory, or by policy.
 * - `untracked`: a file present before the step, outside the workspace, was not admitted.
 * - `outside-may-create`: a file appeared that the capability had not declared it may create.
 * - `inspection-changed`: an inspection (`check`) capability changed a file.
 * - `claimed-unchanged`, `changed-unclaimed`, `claimed-unauthorized`, `unparseable-delta`: the
 *   advisory delta disagrees with the re-read (see `Delta`).
 * - `forbidden-change`: the re-read found a change to a path in the mandatory deny set or withheld
 *   by the policy (only a child process can make one): the step fails.
 * - `not-awaited`: a capability returned with façade calls still running (they were waited for).
 * - `not-restored`: a failed step's rollback left a path as it is (changed by someone else since
 *   the re-read, or not restorable).
 * - `gate`: the step's single approval was refused.
 * - `failed`: a capability threw or a tool failed.
 *
 * @since 0.1.0
 * @category models
 */
export type DiagnosticCode =
  | "unreadable"
  | "unnamed"
  | "refused"
  | "engine"
  | "withheld"
  | "untracked"
  | "outside-may-create"
  | "inspection-changed"
  | "claimed-unchanged"
  | "changed-unclaimed"
  | "claimed-unauthorized"
  | "unparseable-delta"
  | "forbidden-change"
  | "not-awaited"
  | "not-restored"
  | "gate"
  | "failed"

/** @since 0.1.0 @category models */
export interface Diagnostic {
  readonly severity: Severity
  readonly code: DiagnosticCode
  /** The workspace path it is about, when it is about one. */
  readonly path?: string | undefined
  readonly message: string
  /** The step or capability that raised it. */
  readonly source: string
}
