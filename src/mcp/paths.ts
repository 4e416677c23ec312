/**
 * From a path a client sent to the pinned root that holds it: the reference server's resolution
 * (`~`, relative to the allowed directories, its containment test and its refusal texts), then the
 * allowed spelling the path lies under, compared on the path exactly as it will be used. Nothing
 * here touches the disk: what the path names is looked up later, beneath the pinned root, with no
 * link followed.
 *
 * @since 0.1.0
 */
import type { PinnedRoot } from "../PinnedRoot.ts"
import type { AllowedDirectories, Spelling } from "./allowed.ts"
import { ToolFailure } from "./failures.ts"
import { absoluteOf, isWindowsDrivePath, isWithin, normalizePath } from "./spelling.ts"

/**
 * A located path: the root and the root-relative path the operation uses, `abs` as messages show
 * it (the pinned directory's real path joined with `rel`, as the reference shows real paths), and
 * what the call re-checks about the root.
 *
 * @since 0.1.0
 * @category models
 */
export interface Target {
  readonly root: PinnedRoot
  readonly rel: string
  readonly abs: string
  readonly verify: true | string
  readonly spelling: Spelling
}

const under = (abs: string, dir: string): string | undefined => {
  if (abs === dir) return ""
  if (dir === "/") return abs.startsWith("/") ? abs.slice(1) : undefined
  return abs.startsWith(`${dir}/`) ? abs.slice(dir.length + 1) : undefined
}

/**
 * Locates `requested` among `allowed`. Refused, with the reference's own text: a Windows drive
 * path, and a path outside every allowed directory. Refused by pinnedfs alone: a path the
 * reference's comparison admits only because it strips a trailing quote or white space before
 * comparing, while the path it then acts on keeps it and names a sibling outside.
 *
 * @since 0.1.0
 * @category resolution
 */
export const locate = (requested: string, allowed: AllowedDirectories): Target => {
  // Checked on the text as sent: `~` expansion, which the reference does first, cannot make a drive.
  if (isWindowsDrivePath(requested)) {
    throw new ToolFailure(`Access denied - Windows-style path received on a POSIX host: ${requested}`)
  }
  const texts = allowed.texts
  const abs = absoluteOf(requested, texts)
  if (!isWithin(normalizePath(abs), texts)) {
    throw new ToolFailure(`Access denied - path outside allowed directories: ${abs} not in ${texts.join(", ")}`)
  }
  // The innermost spelling that holds the path as it is, character for character.
  let best: { spelling: Spelling; rel: string } | undefined
  for (const spelling of allowed.spellings) {
    const rel = under(abs, spelling.text)
    if (rel !== undefined && (best === undefined || spelling.text.length > best.spelling.text.length)) best = { spelling, rel }
  }
  if (best === undefined) {
    throw new ToolFailure(
      `Access denied - path outside allowed directories: ${abs} not in ${texts.join(", ")} ` +
        "(pinnedfs compares the path as it is used; the trailing quote or white space that makes it look allowed names another directory's entry)"
    )
  }
  const { spelling, rel } = best
  const real = spelling.root.path
  return {
    root: spelling.root,
    rel,
    abs: rel === "" ? real : real === "/" ? `/${rel}` : `${real}/${rel}`,
    verify: spelling.verify,
    spelling
  }
}
