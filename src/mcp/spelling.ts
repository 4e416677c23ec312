/**
 * How the reference filesystem server spells and compares paths, as pure string functions: `~`
 * expansion, normalization, the containment test, and resolution of a relative path against the
 * allowed directories. Reproduced so that a path a client sends means the same directory here as
 * there; what pinnedfs does beyond it (locating the pinned root that holds the path) is in
 * `paths.ts`.
 *
 * @since 0.1.0
 */
import * as os from "node:os"
import * as path from "node:path"

/** `~` and `~/...` name the home directory; `~user` does not (the reference leaves it alone). */
export const expandHome = (p: string): string => (p === "~" || p.startsWith("~/") ? path.join(os.homedir(), p.slice(1)) : p)

/**
 * The reference's normalization of an absolute POSIX path: surrounding white space and one
 * surrounding quote removed, runs of `/` collapsed, a trailing `/` dropped. It is only ever used to
 * compare: the path acted on keeps its quote or space, which is how the reference reaches a sibling
 * of an allowed directory (`/allowed"`); `paths.ts` refuses that.
 */
export const normalizePath = (p: string): string => {
  const stripped = p.trim().replace(/^["']|["']$/g, "")
  if (stripped.startsWith("/")) return stripped.replace(/\/+/g, "/").replace(/(?<!^)\/$/, "")
  return path.normalize(stripped)
}

// What `path.normalize` or `path.resolve` would change in an absolute path: `//`, a `.` or `..`
// component, a trailing `/` (the root alone excepted).
const notCanonical = /\/\/|\/\.{1,2}(?:\/|$)|(?<=.)\/$/

/** `path.resolve(path.normalize(p))`, without the two calls when they would answer `p` itself. */
const canonical = (p: string): string => (p.startsWith("/") && !notCanonical.test(p) ? p : path.resolve(path.normalize(p)))

/** Whether `candidate` is one of `dirs` or beneath one, compared as the reference compares. */
export const isWithin = (candidate: string, dirs: ReadonlyArray<string>): boolean => {
  if (candidate === "" || dirs.length === 0 || candidate.includes("\0")) return false
  const target = canonical(candidate)
  return dirs.some((dir) => {
    if (dir === "" || dir.includes("\0")) return false
    const d = canonical(dir)
    if (target === d) return true
    if (d === "/") return target.startsWith("/")
    return target.startsWith(`${d}/`)
  })
}

/**
 * A relative path is tried against each allowed directory in order and taken from the first one
 * it stays within; failing all, from the first directory (and then refused as outside).
 */
export const resolveRelative = (relative: string, dirs: ReadonlyArray<string>): string => {
  if (dirs.length === 0) return path.resolve(process.cwd(), relative)
  for (const dir of dirs) {
    const candidate = path.resolve(dir, relative)
    if (isWithin(normalizePath(candidate), dirs)) return candidate
  }
  return path.resolve(dirs[0]!, relative)
}

/** A Windows drive path (`C:\...`) sent to a POSIX host, refused rather than made a file name. */
export const isWindowsDrivePath = (p: string): boolean => /^(?:[A-Za-z]:)(?:[\\/]|$)/.test(p)

/** The absolute path a requested path names, by the reference's rules (not yet checked). */
export const absoluteOf = (requested: string, dirs: ReadonlyArray<string>): string => {
  const expanded = expandHome(requested)
  return path.isAbsolute(expanded) ? path.resolve(expanded) : resolveRelative(expanded, dirs)
}
