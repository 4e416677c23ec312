/**
 * The path-based confinement check: map an absolute request path into the pinned root by its
 * literal prefix, lex it, then `lstat` each component from the root, refusing a link, a `..` above
 * the root, or a non-directory on the way. This is how path-based code "confines" a path, and it is
 * a check only: the caller then hands the same path to an ordinary `node:fs` call, which resolves it
 * again, from scratch, following whatever the tree holds by then.
 *
 * @internal
 */
import type { BigIntStats } from "node:fs"
import * as fsp from "node:fs/promises"
import * as nodePath from "node:path"
import { type Root, rootIdentityOf, rootIdentityPattern } from "../protocol/root.ts"
import { badArgumentFailure, type Failure, refuse, sysError } from "./failure.ts"

const NAME_MAX = 255
const PATH_MAX = process.platform === "darwin" ? 1024 : 4096

/**
 * A test seam, not API: awaited in the gap between an operation's last check and its use, so the
 * race harness can make an exchange land there on demand (the control's forced exposure) instead
 * of waiting for a race to find it. Only `makeWithCheckThenUseWindow` (`testing.ts`, outside the
 * package's exports) installs one; without it the gap is empty.
 *
 * @internal
 */
export type CheckThenUseWindow = () => Promise<void>

/** A {@link Root} as a request named it, with the test seam's window when one was installed. @internal */
export interface RootWithWindow extends Root {
  readonly checkThenUseWindow?: CheckThenUseWindow | undefined
}

/**
 * The gap between a check and the use of the path it checked: where every race against this
 * executor is won. Empty unless a test opened its window.
 *
 * @internal
 */
export const gap = async (root: RootWithWindow): Promise<void> => {
  if (root.checkThenUseWindow !== undefined) await root.checkThenUseWindow()
}

const trimSlashes = (p: string): string => {
  let end = p.length
  while (end > 1 && p[end - 1] === "/") end--
  return p.slice(0, end)
}

const absoluteString = (value: unknown, what: string): string => {
  if (typeof value !== "string") throw badArgumentFailure(`${what} must be a string, got ${typeOf(value)}`)
  if (value.includes("\0")) throw badArgumentFailure(`${what} contains a NUL byte`, value.slice(0, 256))
  if (!value.startsWith("/")) throw badArgumentFailure(`${what} must be absolute, got '${value.slice(0, 256)}'`, value)
  return value
}

const typeOf = (u: unknown): string => (u === null ? "null" : Array.isArray(u) ? "array" : typeof u)

/** Reads and checks the root triple of a request. @internal */
export const rootOf = (
  request: {
    readonly boundaryRoot?: unknown
    readonly logicalRoot?: unknown
    readonly rootIdentity?: unknown
  },
  checkThenUseWindow?: CheckThenUseWindow
): RootWithWindow => {
  const boundaryRoot = trimSlashes(absoluteString(request.boundaryRoot, "boundaryRoot"))
  const logicalRoot = request.logicalRoot === undefined ? boundaryRoot : trimSlashes(absoluteString(request.logicalRoot, "logicalRoot"))
  if (typeof request.rootIdentity !== "string" || !rootIdentityPattern.test(request.rootIdentity)) {
    throw badArgumentFailure('rootIdentity must be a root identity ("dev:ino", then ":b<birth>" or ":g<generation>")')
  }
  const triple = { boundaryRoot, logicalRoot, rootIdentity: request.rootIdentity }
  return checkThenUseWindow === undefined ? triple : { ...triple, checkThenUseWindow }
}

/**
 * Refuses a root whose path no longer names the directory the kernel pinned. By path, so only as
 * good as the moment it runs: the root can be replaced right after.
 *
 * @internal
 */
export const verifyRoot = async (root: RootWithWindow): Promise<void> => {
  const changed = (now: string) =>
    refuse("identity", "EBUSY", "stat", root.boundaryRoot, `workspace_identity_changed: the root path ${now}`)
  const st = await fsp.stat(root.boundaryRoot, { bigint: true }).catch((e: NodeJS.ErrnoException) => {
    // A root that vanished is a lost boundary, as the native executor reports it, not a missing file.
    if (e.code === "ENOENT" || e.code === "ENOTDIR") throw changed("no longer names a directory")
    throw sysError(e.code ?? "EUNKNOWN", "stat", root.boundaryRoot, e)
  })
  if (!st.isDirectory()) throw changed("no longer names a directory")
  const found = rootIdentityOf(st)
  if (found !== root.rootIdentity) throw changed(`now names ${found}, not the pinned ${root.rootIdentity}`)
}

/** A request path mapped into the root and lexed, before any system call. @internal */
export interface Lexed {
  /** The path as the request spelled it, for error reports. */
  readonly shown: string
  /** RootWithWindow-relative steps, `..` kept: it is resolved physically by the walk. */
  readonly steps: ReadonlyArray<string>
  /** The request ended in `/` (or `/.`, or `..`): the object must be a directory. */
  readonly mustBeDir: boolean
}

/**
 * The part of `value` below one of the two roots, by literal prefix (the logical spelling first, as
 * the kernel maps it), or `undefined` when it is below neither.
 *
 * @internal
 */
export const below = (root: RootWithWindow, value: string): string | undefined => {
  for (const base of [root.logicalRoot, root.boundaryRoot]) {
    if (value === base) return ""
    const prefix = base === "/" ? "/" : `${base}/`
    if (value.startsWith(prefix)) return value.slice(prefix.length)
  }
  return undefined
}

/** Maps and lexes a request path; the same refusals, in the same order, as the native lexer. @internal */
export const lex = (root: RootWithWindow, value: unknown, what = "path"): Lexed => {
  const shown = absoluteString(value, what)
  const rest = below(root, shown)
  if (rest === undefined) {
    throw refuse("escape", "EACCES", "validate", shown, `${what} is outside the pinned root`)
  }
  if (Buffer.byteLength(rest) >= PATH_MAX) throw badArgumentFailure(`${what} is longer than PATH_MAX`, shown)
  const steps: Array<string> = []
  let depth = 0
  for (const part of rest.split("/")) {
    if (Buffer.byteLength(part) > NAME_MAX) throw badArgumentFailure(`${what} has a component longer than NAME_MAX`, shown)
    if (part === "..") {
      if (depth === 0) throw refuse("escape", "EXDEV", "lex", shown, "path escapes the root: '..' climbs above it")
      depth--
      steps.push(part)
    } else if (part !== "" && part !== ".") {
      depth++
      steps.push(part)
    }
  }
  let tail = rest
  while (tail.endsWith("/.")) tail = tail.slice(0, -2)
  const mustBeDir = tail.endsWith("/") || tail === "." || steps.at(-1) === ".."
  return { shown, steps, mustBeDir }
}

/** What the component walk found. @internal */
export type Walked =
  | {
      readonly kind: "found"
      /** Absolute path in boundary spelling, `..` pairs removed: the path the fs call will use. */
      readonly path: string
      readonly parts: ReadonlyArray<string>
      /** `lstat` of the object itself: a trailing link is described, not followed. */
      readonly stat: BigIntStats
    }
  | {
      readonly kind: "missing"
      readonly path: string
      readonly parts: ReadonlyArray<string>
      /** Index in `parts` of the first component that is not there (ENOENT) or not a directory (ENOTDIR). */
      readonly at: number
      readonly code: "ENOENT" | "ENOTDIR"
    }

const lstatOrMissing = (p: string): Promise<BigIntStats | "ENOENT" | "ENOTDIR"> =>
  fsp.lstat(p, { bigint: true }).catch((e: NodeJS.ErrnoException) => {
    if (e.code === "ENOENT" || e.code === "ENOTDIR") return e.code
    throw sysError(e.code ?? "EUNKNOWN", "lstat", p, e)
  })

const linkMet = (lexed: Lexed, name: string): Failure =>
  refuse("symlink", "ELOOP", "lstat", lexed.shown, `path component '${name}' is a symbolic link`)

/**
 * The positions of `steps` that name a component, in order, with `parts` kept as the components
 * that reach the one yielded: a `..` drops the last part and yields nothing, any other step is
 * pushed before its position is yielded. The one descent both the walk and `resolve` take.
 *
 * @internal
 */
export function* descend(steps: ReadonlyArray<string>, parts: Array<string>): Generator<number, void, undefined> {
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    if (step === "..") {
      parts.pop()
      continue
    }
    parts.push(step)
    yield i
  }
}

/**
 * `lstat`s every component from the root. A link on the way (or last, under a trailing `/`) is
 * refused; a `..` pops back to the directory the walk came from, which it has just checked is a real
 * directory. A missing component ends the walk as `missing`, so each operation decides what that
 * means (`exists` answers false, `makeDirectory` creates, the rest fail `NotFound`).
 *
 * `leafIsUse`: the operation answers from the leaf's own `lstat` (`exists`, `stat`), so that lookup
 * is its use and the gap comes before it, after the ancestors were checked. Every other operation
 * uses the path after the walk, and opens the gap itself.
 *
 * @internal
 */
export const walk = async (root: RootWithWindow, lexed: Lexed, leafIsUse = false): Promise<Walked> => {
  const parts: Array<string> = []
  const here = () => (parts.length === 0 ? root.boundaryRoot : nodePath.join(root.boundaryRoot, ...parts))
  const { steps } = lexed
  for (const i of descend(steps, parts)) {
    const step = steps[i]!
    const last = i === steps.length - 1
    if (last && leafIsUse) await gap(root)
    const st = await lstatOrMissing(here())
    if (typeof st !== "string" && st.isSymbolicLink() && (!last || lexed.mustBeDir)) throw linkMet(lexed, step)
    if (typeof st === "string" || (!last && !st.isDirectory())) {
      const code = typeof st === "string" ? st : "ENOTDIR"
      // A `..` returns only to a directory the walk has checked, so nothing may follow a missing
      // component but plain names (which `makeDirectory` may create, and `exists` answers false for).
      const rest = steps.slice(i + 1)
      if (rest.includes("..")) throw sysError(code, "lstat", lexed.shown)
      const at = parts.length - 1
      parts.push(...rest)
      return { kind: "missing", path: here(), parts, at, code }
    }
    if (last) {
      if (lexed.mustBeDir && !st.isDirectory()) throw sysError("ENOTDIR", "lstat", lexed.shown)
      return { kind: "found", path: here(), parts, stat: st }
    }
  }
  // The root itself, or a path ending in `..`: a directory this walk has already checked (the root
  // is trusted, as the kernel pinned it by following its own path).
  const st = await fsp.stat(here(), { bigint: true }).catch((e: NodeJS.ErrnoException) => {
    throw sysError(e.code ?? "EUNKNOWN", "stat", lexed.shown, e)
  })
  return { kind: "found", path: here(), parts, stat: st }
}

/** The object, or the failure a native open would have reported for it. @internal */
export const found = (lexed: Lexed, w: Walked): Extract<Walked, { kind: "found" }> => {
  if (w.kind === "found") return w
  throw sysError(w.code, "lstat", lexed.shown)
}

/** Refuses a link as the object itself (operations that never act on a link). @internal */
export const noLink = (lexed: Lexed, w: Extract<Walked, { kind: "found" }>): void => {
  if (w.stat.isSymbolicLink()) throw linkMet(lexed, w.parts.at(-1) ?? ".")
}

/** Refuses a regular file with more than one name: its other name may lie outside the root. @internal */
export const noHardLink = (lexed: Lexed, st: BigIntStats, syscall: string): void => {
  if (st.isFile() && st.nlink > 1n) {
    throw refuse(
      "hardlink",
      "EPERM",
      syscall,
      lexed.shown,
      `file is hard-linked (${st.nlink} links): another name may lie outside the root`
    )
  }
}

/** Refuses a FIFO, socket or device: opening one can block, or have effects of its own. @internal */
export const regularOrDirectory = (lexed: Lexed, st: BigIntStats, syscall: string): void => {
  if (!st.isFile() && !st.isDirectory()) {
    throw refuse("notregular", "EINVAL", syscall, lexed.shown, "not a regular file (FIFO, socket or device): refused, never opened")
  }
}
