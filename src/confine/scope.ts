/**
 * A launch scope: what one launch may write inside the workspace, when that is less than the
 * whole workspace. An in-place fixer is approved for a list of files, not for the tree it works in;
 * under a scope the workspace is bound read-only and only the files and directories the scope
 * names are writable in it, so a command that tries to write anything else in the workspace gets
 * `EROFS` from the sandbox.
 *
 * - A file is bound by itself, writable: the command can rewrite it in place (truncate and write,
 *   as `eslint --fix` and `prettier --write` do), but not replace it by renaming a new file onto
 *   it, nor create anything beside it.
 * - A directory is writable as a tree: where a command must create files. One that is missing is
 *   made for the launch and removed after it, unless the command left something in it.
 * - A scope path inside a protected path is not made writable (the protection decides); it is
 *   reported as skipped in the plan, as is a scope file that does not exist.
 *
 * The target's other writable roots, its state roots and the temporary root are not narrowed: they
 * are where a tool keeps its own state.
 *
 * @since 0.1.0
 */
import { ConfinementError } from "./errors.ts"
import { joinRaw, type RawPath, rawOf } from "./raw.ts"

/**
 * Paths are relative to the workspace, `/`-separated, without `.` or `..` components; `""` (or
 * `"."`) as a directory names the workspace itself, which then narrows nothing.
 *
 * @since 0.1.0
 * @category models
 */
export interface LaunchScope {
  /** Files the command may rewrite in place. */
  readonly files: ReadonlyArray<string>
  /** Directories writable as whole trees. */
  readonly directories?: ReadonlyArray<string> | undefined
}

/**
 * How many paths one scope may name: each file is one held descriptor and one mount in the
 * sandbox. A caller with more splits the work into several launches.
 *
 * @since 0.1.0
 */
export const maxScopePaths = 4096

/** A scope's paths made absolute beneath the workspace (canonical), in raw form. */
export interface ResolvedScope {
  readonly files: ReadonlyArray<RawPath>
  readonly directories: ReadonlyArray<RawPath>
}

const relative = (value: unknown, what: string, allowWorkspace: boolean): RawPath => {
  if (typeof value !== "string" || value.includes("\0")) {
    throw new ConfinementError("invalid-scope", `${what} must be a string without NUL bytes`)
  }
  if (value.startsWith("/")) throw new ConfinementError("invalid-scope", `${what} '${value}' must be relative to the workspace`)
  const parts = value.split("/").filter((p) => p !== "")
  if (parts.length === 1 && parts[0] === ".") parts.length = 0
  if (parts.some((p) => p === "." || p === "..")) {
    throw new ConfinementError("invalid-scope", `${what} '${value}' has a '.' or '..' component: name the path as it lies in the workspace`)
  }
  if (parts.length === 0 && !allowWorkspace) throw new ConfinementError("invalid-scope", `${what} names the workspace itself, not a file`)
  return rawOf(parts.join("/"))
}

/**
 * Validates `scope` and places it beneath `workspace`.
 *
 * @since 0.1.0
 */
export const resolveScope = (scope: LaunchScope, workspace: RawPath): ResolvedScope => {
  if (typeof scope !== "object" || scope === null || !Array.isArray(scope.files)) {
    throw new ConfinementError("invalid-scope", "a launch scope needs a files array")
  }
  const directories = scope.directories ?? []
  if (!Array.isArray(directories)) throw new ConfinementError("invalid-scope", "a launch scope's directories must be an array")
  const count = scope.files.length + directories.length
  if (count > maxScopePaths) {
    throw new ConfinementError(
      "invalid-scope",
      `the launch scope names ${count} paths, more than the ${maxScopePaths} one launch can bind: split the work`
    )
  }
  return {
    files: [...new Set(scope.files.map((f, i) => joinRaw(workspace, relative(f, `scope file ${i}`, false))))],
    directories: [...new Set(directories.map((d, i) => joinRaw(workspace, relative(d, `scope directory ${i}`, true))))]
  }
}
