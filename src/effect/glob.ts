/**
 * `glob` across the wire: the kernel sends an absolute `pattern` (`path.resolve(root, pattern)`)
 * and an absolute `root`; the addon matches a pattern relative to a root-relative directory (`to`)
 * and answers paths relative to it. This module translates one into the other and back, so the
 * answer is what `NodeFileSystem.glob` gives for the same absolute pattern: absolute paths, in the
 * pattern's own spelling, with the same excludes applied.
 *
 * Excludes: Effect's `FileSystem.glob` (4.1) matches an exclude against the path as its walk spells
 * it, relative to `root` for a relative pattern and absolute for an absolute one. A kernel always
 * sends the caller's pattern made absolute (`path.resolve(root, pattern)`), so what the caller wrote
 * relative is read against `root` here in the same way: a relative exclude becomes `root/exclude`
 * (the root escaped, so its own name is literal) and an absolute one is taken as is. The answer is
 * then what Effect gives the caller's own call. (Which kind of exclude a caller's pattern can match at
 * all, Effect decides by the pattern's form, which only the kernel still knows: it drops the other
 * kind before sending.)
 *
 * @since 0.1.0
 */
import { Glob, type PlatformError, Result } from "effect"
import { badArgument, outsideRoots } from "../protocol/errors.ts"
import { anchorExcludes } from "../protocol/excludes.ts"
import type { Root } from "../protocol/root.ts"
import { join, locate, rootOf } from "./roots.ts"

/**
 * A glob request ready for the addon, and what turns its answer back into absolute paths.
 *
 * @since 0.1.0
 * @category models
 */
export interface GlobPlan {
  /** Root-relative directory the pattern is matched under. */
  readonly to: string
  /** The pattern, relative to `to`; `""` when the pattern names the root itself. */
  readonly pattern: string
  /** Excludes the addon can apply (relative to `to`): excluded directories are never read. */
  readonly exclude: ReadonlyArray<string>
  /** Absolute directory the addon's answers are relative to, in the pattern's spelling. */
  readonly base: string
  /** Absolute excludes that do not sit under `base`: applied to the answer here. */
  readonly late: ReadonlyArray<Glob.Glob>
  /** The pattern matches `base` itself (the pinned root), which the addon never answers. */
  readonly includeBase: boolean
}

/** Whether a pattern matches zero segments: nothing but `**` (and `.` or empty segments). */
const matchesEmpty = (pattern: string): boolean => {
  const segments = pattern.split("/").filter((s) => s !== "" && s !== ".")
  return segments.length > 0 && segments.every((s) => s === "**")
}

/**
 * Plans a glob: `pattern` is an absolute path inside the roots, `root` the directory it was
 * resolved from (both validated by the caller as strings without NUL), `exclude` the request's
 * exclude list.
 *
 * @since 0.1.0
 * @category constructors
 */
export const planGlob = (
  roots: Root,
  method: string,
  pattern: string,
  root: string,
  exclude: ReadonlyArray<string>
): Result.Result<GlobPlan, PlatformError.PlatformError> => {
  const p = locate(roots, pattern)
  if (p === undefined) return Result.fail(outsideRoots(method, pattern))
  // For an absolute pattern the glob root decides nothing (Effect's walk never uses it), so a root
  // that is relative or outside the roots is not refused: a kernel may pass its workspace root as
  // configured, relative to the working directory. It only picks where the addon starts matching.
  const r = root.startsWith("/") ? locate(roots, root) : undefined
  // Match under the request's root when the pattern lies beneath it (so `to` is literal even when a
  // directory name holds glob syntax), else under the pinned root.
  let to = r !== undefined && r.relative !== "" && p.relative.startsWith(`${r.relative}/`) ? r.relative : ""
  let rest = to === "" ? p.relative : p.relative.slice(to.length + 1)
  // For an absolute pattern Effect's walk meets the directories named before the wildcard as
  // entries too, so `/ws/dir/**` answers `/ws/dir` itself. The addon answers below its glob root
  // only: give it the last of those names as a literal of the pattern instead, and answer the
  // pinned root (which always exists, as a directory) here.
  let includeBase = false
  if (matchesEmpty(rest)) {
    if (to === "") {
      includeBase = true
    } else {
      const slash = to.lastIndexOf("/")
      rest = `${Glob.escape(to.slice(slash + 1))}/${rest}`
      to = slash === -1 ? "" : to.slice(0, slash)
    }
  }
  const base = join(rootOf(roots, p.spelling), to)
  // An exclude under `base`, spelled with `base` literal, is applied by the addon (relative to
  // `to`), so an excluded directory is never read; any other is applied to the answer.
  const literalBase = `${Glob.escape(base)}/`
  const native: Array<string> = []
  const late: Array<Glob.Glob> = []
  for (const e of anchorExcludes(root, exclude)) {
    if (e.startsWith(literalBase) && e.length > literalBase.length) native.push(e.slice(literalBase.length))
    else late.push(Glob.make(e, { dot: true }))
  }
  return Result.succeed({ to, pattern: rest, exclude: native, base, late, includeBase })
}

/** Every proper ancestor of an absolute path, as a directory ("/a/", "/a/b/"). */
const ancestors = (path: string): Array<string> => {
  const out: Array<string> = []
  for (let i = path.indexOf("/", 1); i !== -1; i = path.indexOf("/", i + 1)) out.push(path.slice(0, i + 1))
  return out
}

/**
 * Turns the addon's answer (paths relative to `to`) into absolute paths, dropping what a late
 * exclude matches: the path itself, or any directory above it (Effect never reads an excluded
 * directory, so nothing below one is ever answered).
 *
 * @since 0.1.0
 * @category conversions
 */
export const finishGlob = (plan: GlobPlan, answer: ReadonlyArray<string>): Array<string> => {
  const paths = answer.map((relative) => join(plan.base, relative))
  if (plan.includeBase) paths.unshift(plan.base)
  if (plan.late.length === 0) return paths
  return paths.filter((path) => !plan.late.some((g) => Glob.match(g, path) || ancestors(path).some((dir) => Glob.match(g, dir))))
}

/**
 * Checks a request's exclude list shape.
 *
 * @since 0.1.0
 * @category validation
 */
export const checkExclude = (method: string, options: unknown): Result.Result<ReadonlyArray<string>, PlatformError.PlatformError> => {
  if (options === undefined || options === null) return Result.succeed([])
  if (typeof options !== "object" || Array.isArray(options)) {
    return Result.fail(badArgument(method, "glob options must be an object"))
  }
  const exclude = (options as { readonly exclude?: unknown }).exclude
  if (exclude === undefined || exclude === null) return Result.succeed([])
  if (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string" || e.includes("\0"))) {
    return Result.fail(badArgument(method, "glob exclude must be an array of strings without NUL bytes"))
  }
  return Result.succeed(exclude as ReadonlyArray<string>)
}
