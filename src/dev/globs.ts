/**
 * Glob lists compiled once with picomatch: scopes, selectors, `mayCreate` and policy rules all
 * match paths the same way.
 *
 * Dot names are matched by wildcards (`dot: true`): a scope of `src/**` that silently skipped
 * `src/.env` would be a scope that lies, and a deny rule of `**` must cover dot files. For the same
 * reason every character of a name is matched, line terminators included: picomatch's `**` is a
 * regular expression whose `.` stops at `\n`, `\r`, U+2028 and U+2029 unless compiled with the
 * `s` flag, and without it `src/x\ny.ts` fell outside every scope and `a\nb/.vscode/x` outside
 * every deny rule.
 *
 * @since 0.1.0
 */
import picomatch from "picomatch"
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { escaped } from "./quote.ts"

/**
 * A compiled list of globs; a path matches when any member matches.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobList {
  readonly globs: ReadonlyArray<string>
  readonly matches: (path: string) => boolean
  /** Members with no glob syntax, which name exactly one path each. */
  readonly literals: ReadonlyArray<string>
  /** Members with glob syntax, which must be listed on disk to find what they name. */
  readonly patterns: ReadonlyArray<string>
  /**
   * What to list on disk for `patterns`: each pattern itself where the native glob reads it as
   * picomatch does, else the static base's whole tree (`src/**` for `src/!(x).ts`), filtered by
   * `matches` afterwards. The native glob has no extglobs, regular-expression groups or numeric
   * brace ranges, and would find nothing for them.
   */
  readonly listings: ReadonlyArray<string>
  /**
   * Whether `dir` is a directory a matching path could live under: it matches, or it lies on
   * the static base of a member (`src/gen` for `src/gen/*.ts`, and so `src` too).
   */
  readonly mayContain: (dir: string) => boolean
}

const noMatch = (): boolean => false

/** Whether the native glob reads `g` as picomatch does (no extglob, group or numeric range). */
const nativeReads = (g: string): boolean => !/[()|]/.test(g) && !/\{[^}]*\.\.[^}]*\}/.test(g)

/**
 * Compiles `globs` (workspace-relative; no leading `/`, no negation: a scope says what it
 * covers, never what it does not). `nocase` is for deny lists, which must also hold on a
 * case-insensitive file system.
 *
 * @since 0.1.0
 * @category constructors
 */
export const globList = (globs: unknown, what: string, options?: { readonly nocase?: boolean }): GlobList => {
  if (!Array.isArray(globs) || globs.some((g) => typeof g !== "string")) {
    throw badArgumentPinnedFsError(`${what} must be an array of glob strings`)
  }
  const list = globs as ReadonlyArray<string>
  for (const g of list) {
    if (g === "") throw badArgumentPinnedFsError(`${what} contains an empty glob`)
    if (g.startsWith("/")) throw badArgumentPinnedFsError(`${what} glob '${escaped(g)}' is absolute: globs are workspace-relative`, g)
    // `!(a|b)` is an extglob (anything but a or b), which covers something; `!a` is a negation.
    if (g.startsWith("!") && !g.startsWith("!(")) {
      throw badArgumentPinnedFsError(`${what} glob '${escaped(g)}' is negated: list what is covered, not what is not`, g)
    }
    if (g.split("/").includes("..")) throw badArgumentPinnedFsError(`${what} glob '${escaped(g)}' contains '..'`, g)
  }
  const nocase = options?.nocase === true
  const fold = (p: string): string => (nocase ? p.toLowerCase() : p)
  const literals: Array<string> = []
  const patterns: Array<string> = []
  const bases: Array<string> = []
  const listings = new Set<string>()
  for (const g of list) {
    const scanned = picomatch.scan(g)
    if (scanned.isGlob) {
      patterns.push(g)
      bases.push(scanned.base)
      listings.add(nativeReads(g) ? g : scanned.base === "" ? "**" : `${scanned.base}/**`)
    } else {
      const literal = g
        .split("/")
        .filter((p) => p !== "" && p !== ".")
        .join("/")
      literals.push(literal)
      bases.push(literal)
    }
  }
  // A member without glob syntax matches only itself: a set lookup, so a step that names a
  // thousand files does not test each path against a thousand compiled patterns.
  const exact = new Set(literals.map(fold))
  // `flags` replaces picomatch's own (`i` for nocase), so both are given here.
  const matchers = patterns.map((g) => picomatch(g, { dot: true, nocase, flags: nocase ? "si" : "s" }))
  const matches = list.length === 0 ? noMatch : (path: string) => exact.has(fold(path)) || matchers.some((m) => m(path))
  const mayContain = (dir: string): boolean => matches(dir) || bases.some((b) => b === dir || b.startsWith(`${dir}/`))
  return { globs: list, matches, literals, patterns, listings: [...listings], mayContain }
}
