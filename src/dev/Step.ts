/**
 * The steps of a plan, run in order:
 *
 * - `edit`: changes the workspace in memory (the paths it changes become dirty);
 * - `write`: flushes dirty paths and pending deletions to disk (atomic writes, policy checked);
 * - `fix`: runs in-place capabilities, each followed by the authoritative re-read;
 * - `check`: runs inspection capabilities (`mayCreate: []`, a read-only façade), re-read the same.
 *
 * @since 0.1.0
 */
import type { Capability } from "./Capability.ts"
import type { Editor } from "./Workspace.ts"

/**
 * @since 0.1.0
 * @category models
 */
export type Step =
  | { readonly kind: "edit"; readonly name: string; readonly apply: (editor: Editor) => void | Promise<void> }
  | { readonly kind: "write"; readonly name: string }
  | { readonly kind: "fix"; readonly name: string; readonly capabilities: ReadonlyArray<Capability> }
  | { readonly kind: "check"; readonly name: string; readonly capabilities: ReadonlyArray<Capability> }

/** @since 0.1.0 @category constructors */
export const edit = (name: string, apply: (editor: Editor) => void | Promise<void>): Step => ({ kind: "edit", name, apply })

/** @since 0.1.0 @category constructors */
export const write = (name = "write"): Step => ({ kind: "write", name })

/**
 * Capabilities run back to back, all approved by one gate call.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fix = (name: string, ...capabilities: ReadonlyArray<Capability>): Step => ({ kind: "fix", name, capabilities })

/**
 * Inspection capabilities: each must declare `mayCreate: []`, and its façade refuses every
 * mutation.
 *
 * @since 0.1.0
 * @category constructors
 */
export const check = (name: string, ...capabilities: ReadonlyArray<Capability>): Step => ({ kind: "check", name, capabilities })
