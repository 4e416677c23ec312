/**
 * The pinned-root triple every request carries, and the one way an absolute request path becomes
 * root-relative: a literal prefix check against `logicalRoot`, then `boundaryRoot`. The text is never
 * cleaned first: a `..` stays in the remainder for the native lexer, which resolves it physically
 * and refuses any climb above the root (`/ws/../ws/x` is an escape, not `/ws/x`).
 *
 * @since 0.1.0
 */
import type { Root } from "../protocol/root.ts"

/**
 * Which root a path was found under; answers that name paths again use the same spelling.
 *
 * @since 0.1.0
 * @category models
 */
export type Spelling = "logical" | "boundary"

/**
 * An absolute request path located beneath the roots.
 *
 * @since 0.1.0
 * @category models
 */
export interface Located {
  /** Root-relative remainder, `..` and all; `""` is the root itself. */
  readonly relative: string
  readonly spelling: Spelling
}

const SLASH = 0x2f

const under = (root: string, path: string): string | undefined => {
  if (path === root) return ""
  // The prefix is `root` and one `/` (the root's own trailing one, or the next character): checked
  // in place, with no prefix string built per request.
  if (!path.startsWith(root)) return undefined
  let i = root.length
  if (root.charCodeAt(i - 1) !== SLASH) {
    if (path.charCodeAt(i) !== SLASH) return undefined
    i++
  }
  // Extra slashes after the root name nothing: "/ws//a" is "/ws/a". Everything else is kept.
  while (path.charCodeAt(i) === SLASH) i++
  return path.slice(i)
}

/**
 * Locates `path` beneath `logicalRoot`, else `boundaryRoot`; `undefined` outside both.
 *
 * @since 0.1.0
 * @category paths
 */
export const locate = (roots: Root, path: string): Located | undefined => {
  const logical = under(roots.logicalRoot, path)
  if (logical !== undefined) return { relative: logical, spelling: "logical" }
  const boundary = under(roots.boundaryRoot, path)
  if (boundary !== undefined) return { relative: boundary, spelling: "boundary" }
  return undefined
}

/**
 * Joins a root-relative path onto a root: `""` is the root itself.
 *
 * @since 0.1.0
 * @category paths
 */
export const join = (root: string, relative: string): string =>
  relative === "" ? root : root.endsWith("/") ? root + relative : `${root}/${relative}`

/**
 * The root a spelling names.
 *
 * @since 0.1.0
 * @category paths
 */
export const rootOf = (roots: Root, spelling: Spelling): string => (spelling === "logical" ? roots.logicalRoot : roots.boundaryRoot)
