/**
 * In-place capabilities: engines that change files on disk (a formatter, a linter's `--fix`, a
 * codemod), run by a plan step through a {@link DevFileAccess} made for that one invocation.
 *
 * @since 0.1.0
 */
import type { DevFileAccess } from "./DevFileAccess.ts"
import type { Declaration } from "./envelope.ts"

/**
 * What a plan reports while it runs; a command line prints it so a long run is never silent.
 *
 * @since 0.1.0
 * @category models
 */
export type Progress =
  | { readonly type: "step"; readonly index: number; readonly total: number; readonly name: string; readonly kind: string }
  | { readonly type: "capability"; readonly name: string; readonly files: number; readonly withheld: number }
  | { readonly type: "running"; readonly name: string; readonly elapsedMs: number }
  /** An external fixer's files did not fit one argument list (or one sandbox): several runs. */
  | { readonly type: "runs"; readonly name: string; readonly files: number; readonly runs: number }
  | { readonly type: "output"; readonly name: string; readonly stream: "stdout" | "stderr"; readonly text: string }
  | { readonly type: "reread"; readonly name: string }
  | { readonly type: "restore"; readonly name: string }

/**
 * What an invocation is given besides its façade.
 *
 * @since 0.1.0
 * @category models
 */
export interface CapabilityContext {
  /**
   * The workspace directory as an absolute path: for a tool's configuration lookup and a child
   * process's working directory only. File access goes through the façade.
   */
  readonly workspaceDir: string
  readonly progress: (event: Progress) => void
}

/**
 * A capability: its declaration (name, scope, selectors, `mayCreate`), which the step's gate
 * approves, and the function that does the work. `run` returns an advisory delta (see `Delta`), or
 * `undefined` to claim nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface Capability extends Declaration {
  /** Runs a child process: the façade does not contain what the child does (the gate shows this). */
  readonly external?: boolean | undefined
  readonly run: (access: DevFileAccess, context: CapabilityContext) => Promise<unknown>
}
