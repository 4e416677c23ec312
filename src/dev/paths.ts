/**
 * Workspace-relative paths as the dev pipeline spells them: one canonical text per file, so a
 * policy glob, an allowlist and the workspace map all compare the same string.
 *
 * The text is only a name. Safety on disk (no link followed, nothing above the root) is
 * `PinnedRoot`'s, decided on the descriptor at use time; nothing here stats anything.
 *
 * @since 0.1.0
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { escaped } from "./quote.ts"

/**
 * Canonical form of a workspace path: `.` segments, repeated and trailing `/` dropped. Refused
 * with `BadArgument`: a non-string, an empty path or the root itself, a NUL byte, a `..` segment
 * (policy globs match text, so `src/../.vscode/x` must never be matched as if it were under
 * `src/`), and a leading `/`.
 *
 * A leading `/` is refused rather than read as "the workspace root": engines are programs with a
 * workspace-relative contract, and an absolute path in one is nearly always a host path leaking in
 * (an unjoined `process.cwd()`, a config value) that must fail loudly.
 *
 * @since 0.1.0
 * @category paths
 */
export const workspacePath = (value: unknown, what = "path"): string => {
  if (typeof value !== "string") throw badArgumentPinnedFsError(`${what} must be a string, got ${value === null ? "null" : typeof value}`)
  const shown = escaped(value.slice(0, 200))
  if (value.startsWith("/")) {
    throw badArgumentPinnedFsError(
      `${what} '${shown}' is absolute: dev engines take workspace-relative paths, and a leading '/' is ` +
        "refused because it is almost always a host path leaking in",
      value
    )
  }
  if (value.includes("\0")) throw badArgumentPinnedFsError(`${what} contains a NUL byte`, shown)
  const parts: Array<string> = []
  for (const part of value.split("/")) {
    if (part === "" || part === ".") continue
    if (part === "..") {
      throw badArgumentPinnedFsError(`${what} '${shown}' contains '..': workspace paths name files beneath the root directly`, value)
    }
    parts.push(part)
  }
  if (parts.length === 0) throw badArgumentPinnedFsError(`${what} '${shown}' names the workspace root, not a file`, value)
  return parts.join("/")
}

/**
 * The proper ancestors of a canonical path, shallowest first: `a/b/c` gives `a`, `a/b`.
 *
 * @since 0.1.0
 * @category paths
 */
export const ancestors = (path: string): Array<string> => {
  const parts = path.split("/")
  const out: Array<string> = []
  for (let i = 1; i < parts.length; i++) out.push(parts.slice(0, i).join("/"))
  return out
}
