/**
 * The execution target: where a confined command runs and what it may write. The workspace (and
 * any extra writable root) is writable and is a discovery root for the policy's relative rules;
 * the temporary root is writable, is the child's `TMPDIR`, and is never walked by discovery (the
 * child owns that scratch area; walking it costs time and races with whatever comes and goes
 * there). A workspace nested in the temporary root is still its own discovery root. State roots
 * are directories the child needs: made when missing (one pinned `mkdirs` program) and, unless
 * permanent, removed after it exits (one pinned `rmdirs` program).
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"
import { ConfinementError } from "./errors.ts"

/** @since 0.1.0 @category models */
export interface StateRoot {
  readonly path: string
  /** Kept after the child exits, with the ancestors it needed. Default false. */
  readonly permanent?: boolean | undefined
  /** Exact mode of the directories made for it (default 0o700). */
  readonly mode?: number | undefined
}

/** @since 0.1.0 @category models */
export interface ExecutionTargetInput {
  readonly workspace: string
  readonly writable?: ReadonlyArray<string> | undefined
  /**
   * The child's temporary root. When omitted, a private directory is made for the launch under
   * the host's temporary directory and removed with everything in it after the child exits.
   */
  readonly tempRoot?: string | undefined
  /** Where `~/` rules point (default `os.homedir()`). */
  readonly home?: string | undefined
  /** The child's working directory (default the workspace). */
  readonly cwd?: string | undefined
  readonly state?: ReadonlyArray<StateRoot> | undefined
  /**
   * Where launches record what they made, so what a killed launch left is removed by the next
   * (default: `PINNEDFS_RUNTIME_DIR`, else `$XDG_RUNTIME_DIR/pinnedfs`, else `pinnedfs-<uid>` in
   * the host's temporary directory; see runtime.ts). @since 0.2.0
   */
  readonly runtimeDirectory?: string | undefined
}

/** @since 0.1.0 @category models */
export interface ExecutionTarget {
  readonly workspace: string
  readonly writable: ReadonlyArray<string>
  readonly tempRoot: string | null
  readonly home: string
  readonly cwd: string
  readonly state: ReadonlyArray<{ readonly path: string; readonly permanent: boolean; readonly mode: number }>
  /** Null: the default (see {@link ExecutionTargetInput.runtimeDirectory}), resolved at each launch. */
  readonly runtimeDirectory: string | null
  readonly fingerprint: string
}

const absolute = (value: unknown, what: string): string => {
  if (typeof value !== "string" || value === "" || value.includes("\0")) {
    throw new ConfinementError("invalid-target", `${what} must be a non-empty path without NUL bytes`)
  }
  return path.resolve(value)
}

/**
 * Validates a target; paths become absolute (not yet canonical: that happens at each launch, so a
 * link's later change is seen).
 *
 * @since 0.1.0
 * @category constructors
 */
export const executionTarget = (input: ExecutionTargetInput): ExecutionTarget => {
  if (typeof input !== "object" || input === null) throw new ConfinementError("invalid-target", "execution target must be an object")
  const workspace = absolute(input.workspace, "workspace")
  const writable = (input.writable ?? []).map((w, i) => absolute(w, `writable[${i}]`))
  const tempRoot = input.tempRoot === undefined ? null : absolute(input.tempRoot, "tempRoot")
  const home = absolute(input.home ?? os.homedir(), "home")
  const cwd = input.cwd === undefined ? workspace : absolute(input.cwd, "cwd")
  const state = (input.state ?? []).map((s, i) => {
    if (typeof s !== "object" || s === null) throw new ConfinementError("invalid-target", `state[${i}] must be an object`)
    const mode = s.mode ?? 0o700
    if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) {
      throw new ConfinementError("invalid-target", `state[${i}].mode must be a permission mode`)
    }
    return Object.freeze({ path: absolute(s.path, `state[${i}].path`), permanent: s.permanent === true, mode })
  })
  for (const p of [workspace, ...writable, ...(tempRoot ? [tempRoot] : []), ...state.map((s) => s.path)]) {
    if (p === "/") throw new ConfinementError("invalid-target", "'/' cannot be a writable root: use full access")
  }
  const runtimeDirectory = input.runtimeDirectory === undefined ? null : absolute(input.runtimeDirectory, "runtimeDirectory")
  const fields = { workspace, writable: Object.freeze(writable), tempRoot, home, cwd, state: Object.freeze(state), runtimeDirectory }
  return Object.freeze({ ...fields, fingerprint: JSON.stringify(fields) })
}
