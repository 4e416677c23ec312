/**
 * Path arithmetic between the two spellings of the pinned root: `logicalRoot` (the workspace as
 * the program spells it, maybe through a symlink) and `boundaryRoot` (its canonical path, where
 * the executor pins its handle). Pure string work: nothing here touches the disk.
 *
 * @internal
 */
import type { Path } from "effect"
import type { Root } from "../../protocol/root.ts"

// A relative path with an empty, `.` or `..` segment, or a trailing separator: not spelled as
// `path.normalize` would leave it.
const unnormal = /(?:^|\/)\.{1,2}(?:\/|$)|\/\/|^\/|\/$/

/** Whether `value` is absolute and spelled as `path.normalize` leaves it. @internal */
export const normalAbsolute = (value: string): boolean => value.startsWith("/") && !unnormal.test(value.slice(1))

/**
 * What follows `root` in `value` when `value` is strictly below it and both are spelled as
 * `path.normalize` leaves them: then `path.relative(root, value)` is that tail, and joining it to
 * another normalized root is concatenation. `undefined` when the string test cannot tell, for the
 * caller to do the arithmetic. Every path the kernel handles is normalized, and nearly all of them
 * lie below the workspace root: this spares them the arithmetic, which was a large share of a
 * batch's time.
 */
const plainTail = (root: string, value: string): string | undefined => {
  const head = headLength(root, value)
  if (head === undefined) return undefined
  // A kernel asks about the same one or two roots on every path: the last root found normalized
  // is remembered, so the pattern runs on the tail alone.
  if (root !== normalRoot) {
    if (!normalAbsolute(root)) return undefined
    normalRoot = root
  }
  const tail = value.slice(head)
  return unnormal.test(tail) ? undefined : tail
}

/** The last root `plainTail` found absolute and normalized. */
let normalRoot: string | undefined

const SLASH = 0x2f

/**
 * The length of `root` and the `/` after it when `value` continues past them (`root/` is a prefix
 * of `value`, with more after it), else `undefined`: checked in place, with no `root/` string built.
 */
const headLength = (root: string, value: string): number | undefined => {
  if (root === "/") return value.length > 1 && value.charCodeAt(0) === SLASH ? 1 : undefined
  return value.length > root.length + 1 && value.charCodeAt(root.length) === SLASH && value.startsWith(root) ? root.length + 1 : undefined
}

/** `tail` (normalized, relative, not empty) below `root` (normalized, absolute). */
const below = (root: string, tail: string): string => (root === "/" ? `/${tail}` : `${root}/${tail}`)

/** Whether `candidate` is `root` or below it (both absolute and normalized). @internal */
export const isInside = (path: Path.Path, root: string, candidate: string): boolean => {
  if (candidate === root || plainTail(root, candidate) !== undefined) return true
  const relative = path.relative(root, candidate)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative))
}

/** Components of `value` below `root` (`value` inside `root`). @internal */
export const segmentsBelow = (path: Path.Path, root: string, value: string): Array<string> =>
  path
    .relative(root, value)
    .split(path.sep)
    .filter((segment) => segment !== "")

/** `value` respelled below the boundary root, or `undefined` when it is inside neither root. @internal */
export const toBoundary = (path: Path.Path, root: Root<string | undefined>, value: string): string | undefined => {
  const tail = plainTail(root.logicalRoot, value)
  if (tail !== undefined && normalAbsolute(root.boundaryRoot)) return below(root.boundaryRoot, tail)
  // The logical spelling is tried first: when one root contains the other (a workspace link placed
  // inside its own target), the caller's spelling is the one grants are written against.
  const base = isInside(path, root.logicalRoot, value)
    ? root.logicalRoot
    : isInside(path, root.boundaryRoot, value)
      ? root.boundaryRoot
      : undefined
  return base === undefined ? undefined : path.join(root.boundaryRoot, path.relative(base, value))
}

/** A canonical path below the boundary root respelled below the logical root. @internal */
export const toLogical = (path: Path.Path, root: Root<string | undefined>, canonical: string): string => {
  const tail = plainTail(root.boundaryRoot, canonical)
  if (tail !== undefined && normalAbsolute(root.logicalRoot)) return below(root.logicalRoot, tail)
  return path.normalize(path.join(root.logicalRoot, path.relative(root.boundaryRoot, canonical)))
}

/**
 * Whether `relative` is a normalized relative path (a name a listing returns, or a path below the
 * listed directory for a recursive one): then the directory joined with it lies strictly below the
 * directory. A name without a slash is checked without the pattern, as most are.
 *
 * @internal
 */
export const isPlainRelative = (relative: string): boolean =>
  relative !== "" && (relative.includes("/") ? !unnormal.test(relative) : relative !== "." && relative !== "..")

/**
 * `directory` (absolute, normalized) joined with `relative`, by concatenation when `relative` is
 * already a normalized relative path (every name a listing returns), else by `path.join`. A listing
 * of many names pays for one string each instead of a normalization each.
 *
 * @internal
 */
export const childOf = (path: Path.Path, directory: string, relative: string): string =>
  relative === "" || unnormal.test(relative)
    ? path.join(directory, relative)
    : directory === "/"
      ? `/${relative}`
      : `${directory}/${relative}`

/**
 * Whether `value` is absolute, normalized and strictly below the logical root: then it is its own
 * logical spelling (see {@link logicalOf}), and inside the workspace, with no arithmetic.
 *
 * @internal
 */
export const plainlyBelowLogicalRoot = (root: Pick<Root<string | undefined>, "logicalRoot">, value: string): boolean => {
  const head = headLength(root.logicalRoot, value)
  return head !== undefined && !unnormal.test(value.slice(head))
}

/**
 * Any path inside either root in logical spelling; a path outside both is returned unchanged, for
 * the caller to deny as outside.
 *
 * @internal
 */
export const logicalOf = (path: Path.Path, root: Root<string | undefined>, value: string): string => {
  const boundary = toBoundary(path, root, value)
  return boundary === undefined ? path.normalize(value) : toLogical(path, root, boundary)
}

/** Glob syntax Effect's matcher understands: wildcards, classes, braces, extglobs, escapes. @internal */
export const patternSyntax = /[*?[\]{}\\]|[@+!]\(/

/**
 * Splits a glob (absolute and normalized, or relative to `base`) into its literal prefix (the
 * directory authorization may name as a file) and the pattern segments that follow. Pattern syntax
 * is never looked up as a file name, and the workspace's own path is literal whatever it holds: a
 * root named `ws[1]` is a name, not a character class, so syntax is looked for only below whichever
 * root the pattern lies under.
 *
 * @internal
 */
export const globPrefix = (
  path: Path.Path,
  root: Pick<Root<string | undefined>, "boundaryRoot" | "logicalRoot">,
  pattern: string,
  base: string = root.logicalRoot
): { readonly prefix: string; readonly rest: ReadonlyArray<string>; readonly full: string } => {
  const whole = path.isAbsolute(pattern) ? pattern : path.resolve(base, pattern)
  const under = isInside(path, root.logicalRoot, whole)
    ? root.logicalRoot
    : isInside(path, root.boundaryRoot, whole)
      ? root.boundaryRoot
      : undefined
  // The part that is literal no matter what it holds, and the segments below it.
  const literalHead = under ?? "/"
  const segments = under === undefined ? whole.split("/").filter((segment) => segment !== "") : segmentsBelow(path, under, whole)
  const first = segments.findIndex((segment) => patternSyntax.test(segment))
  if (first < 0) return { prefix: whole, rest: [], full: whole }
  const prefix = path.join(literalHead, ...segments.slice(0, first))
  const rest = segments.slice(first)
  return { prefix, rest, full: `${prefix === "/" ? "" : prefix}/${rest.join("/")}` }
}
