/**
 * Why a confined launch was refused. A file-system failure keeps its own {@link PinnedFsError} as
 * `cause`; this type says what the refusal means for the launch. Every refusal is final: a launch
 * that cannot be confined is never retried unconfined.
 *
 * @since 0.1.0
 */

/** @since 0.1.0 @category models */
export type ConfinementReason =
  | "invalid-policy"
  | "invalid-target"
  | "invalid-grant"
  | "invalid-scope"
  | "discovery-failed"
  | "discovery-truncated"
  | "cancelled"
  | "link"
  | "hard-link"
  | "unnameable"
  | "creation-failed"
  | "validation-failed"
  | "changed"
  | "launched"
  | "sandbox-unavailable"
  /** A launch needs more mounts than bubblewrap takes (it stops at 9,000 arguments). @since 0.2.0 */
  | "too-many-paths"
  /** A protected path moved while the launch was prepared or set up, and kept moving through every fresh try. @since 0.2.0 */
  | "moved"
  /** A git pointer (`.git` file, `commondir`) cannot be read or followed. @since 0.2.0 */
  | "pointer"
  /** A mount inside the walked trees shows a protected path or a writable root under another name. @since 0.2.0 */
  | "mount"

/**
 * @since 0.1.0
 * @category errors
 */
export class ConfinementError extends Error {
  override readonly name = "ConfinementError"
  readonly reason: ConfinementReason

  constructor(reason: ConfinementReason, message: string, options?: { readonly cause?: unknown }) {
    super(message, options)
    this.reason = reason
  }
}

/**
 * A sandbox that exited while it set itself up, on a machine where sandboxes can be set up: under
 * a concurrent rename, bubblewrap fails to mount a destination that came and went between the
 * final validation and its mount, which looks the same as any other failure of that one sandbox.
 * So it is worth a fresh preparation, a bounded number of times; a machine that refuses sandboxes
 * (user namespaces refused, say) is a plain `sandbox-unavailable` and is never tried again.
 *
 * @internal
 */
export class SandboxDied extends ConfinementError {
  constructor(message: string) {
    super("sandbox-unavailable", message)
  }
}
