/**
 * The single gate: one approval per fixer or check step, covering every capability of the step
 * with its declared scope, selectors and `mayCreate`, asked before any of them runs.
 *
 * Once per step, not once per file: fifty prompts in a formatting run teach an operator to approve
 * blindly. The request carries declarations, not resolved allowlists, because allowlists are
 * recomputed before each capability and do not exist yet when the gate is asked; `mayCreate` is
 * declared because what an engine will create cannot be known before it runs. The gate therefore
 * approves an envelope up front, never a diff after the fact.
 *
 * Only `true` approves. `false`, anything else, or a throw refuses the step, and nothing of it
 * runs.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 * @category models
 */
export interface GateRequest {
  readonly step: string
  readonly kind: "fix" | "check"
  readonly capabilities: ReadonlyArray<{
    readonly name: string
    readonly scope: ReadonlyArray<string>
    readonly selectors: ReadonlyArray<string> | undefined
    readonly mayCreate: ReadonlyArray<string>
    /** Runs a child process, which the façade cannot contain. */
    readonly external: boolean
  }>
}

/**
 * @since 0.1.0
 * @category models
 */
export type Gate = (request: GateRequest) => boolean | Promise<boolean>

/**
 * A gate that approves every step: for callers whose approval was given before the plan ran (a
 * command line the user typed, a test).
 *
 * @since 0.1.0
 * @category constructors
 */
export const approveAll: Gate = () => true
