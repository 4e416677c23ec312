/**
 * Errors in one place: the native error shape becomes a {@link PinnedFsError}, and every error maps
 * to Effect's `SystemErrorTag` the way `@effect/platform-node-shared` maps errno, with our own
 * refusals mapped first (a link met, an escape, a hard link are `PermissionDenied`, whatever errno
 * the kernel used to tell us).
 *
 * @since 0.1.0
 */
import { getSystemErrorMap } from "node:util"
import type { NativeErrorInfo } from "./native.ts"

/**
 * The reason tags of Effect 4's `PlatformError`: the `SystemErrorTag`s plus `BadArgument` for input
 * rejected before any system call.
 *
 * @since 0.1.0
 * @category models
 */
export type ReasonTag =
  | "AlreadyExists"
  | "BadArgument"
  | "BadResource"
  | "Busy"
  | "InvalidData"
  | "NotFound"
  | "PermissionDenied"
  | "TimedOut"
  | "UnexpectedEof"
  | "Unknown"
  | "WouldBlock"
  | "WriteZero"

/** Which of our own refusals an error is, if any. @since 0.1.0 */
export type Refusal = NativeErrorInfo["refusal"]

/**
 * Effect's errno mapping, extended where a caller is helped (marked †; docs/platform.md, "Error mapping"):
 * `EROFS` is a permission problem †, `ETXTBSY` is busy †, `EAGAIN` after the bounded `openat2`
 * retries is busy †, `ETIMEDOUT` is a timeout †.
 *
 * @since 0.1.0
 * @category errors
 */
export const reasonOf = (code: string, refusal: Refusal = ""): ReasonTag => {
  switch (refusal) {
    case "symlink":
    case "escape":
    case "hardlink":
      return "PermissionDenied"
    case "notregular":
      return "BadResource"
    case "badargument":
    case "toolarge":
      return "BadArgument"
    case "identity":
    case "changed":
      return "Busy"
    case "writezero":
      return "WriteZero"
    case "":
      break
  }
  switch (code) {
    case "ENOENT":
      return "NotFound"
    case "EACCES":
    case "EPERM":
    case "EROFS":
      return "PermissionDenied"
    case "EEXIST":
      return "AlreadyExists"
    case "EISDIR":
    case "ENOTDIR":
      return "BadResource"
    case "ELOOP":
      // We never follow links, so ELOOP always means one was met (docs/platform.md, "Error mapping").
      return "PermissionDenied"
    case "EBUSY":
    case "ETXTBSY":
    case "EAGAIN":
      return "Busy"
    case "ETIMEDOUT":
      return "TimedOut"
    default:
      return "Unknown"
  }
}

/** libuv's wording for each errno, the text Node's own errors carry ("no such file or directory"). */
const systemErrors = getSystemErrorMap()

/**
 * Node's shape: `ENOENT: no such file or directory, open 'a/b'`. A kernel error without a
 * description of ours takes libuv's; an input check (`validate`) or an error with no path leaves
 * out what would only be an empty tail. An error met beneath a pinned root names that root last,
 * `(root /abs/root)`, since its path is relative to it.
 */
const messageOf = (code: string, errno: number, description: string, syscall: string, path: string, root: string): string => {
  const text = description || systemErrors.get(errno)?.[1] || descriptionByName(code) || code
  const tail = path !== "" ? `, ${syscall} '${path}'` : syscall === "validate" || syscall === "" ? "" : `, ${syscall}`
  // A root-relative path alone does not say which tree it was looked up in; the root does.
  return `${code}: ${text}${tail}${root === "" ? "" : ` (root ${root})`}`
}

const descriptionByName = (code: string): string | undefined => {
  for (const [name, text] of systemErrors.values()) if (name === code) return text
  return undefined
}

/**
 * Every failure of the plain promise API. Node's error fields (`code`, `errno`, `syscall`, `path`)
 * plus the Effect reason tag, so a caller can branch on either vocabulary.
 *
 * @since 0.1.0
 * @category errors
 */
export class PinnedFsError extends Error {
  override readonly name = "PinnedFsError"
  /** errno name (`ENOENT`), or `EINVAL` for malformed input. */
  readonly code: string
  /** Negative errno, as Node reports it; 0 when no system call was involved. */
  readonly errno: number
  readonly syscall: string
  /** The path as the caller gave it (root-relative for `PinnedRoot`). */
  readonly path: string
  /** The root `path` is relative to, absolute; `""` when the error was not met beneath one. */
  readonly root: string
  readonly reason: ReasonTag
  /** Set when the refusal is ours rather than the kernel's. */
  readonly refusal: Refusal
  readonly description: string

  constructor(fields: {
    readonly code: string
    readonly errno?: number | undefined
    readonly syscall: string
    readonly path: string
    readonly refusal?: Refusal | undefined
    readonly description?: string | undefined
    readonly reason?: ReasonTag | undefined
    readonly root?: string | undefined
  }) {
    const refusal = fields.refusal ?? ""
    const description = fields.description ?? ""
    super(messageOf(fields.code, fields.errno ?? 0, description, fields.syscall, fields.path, fields.root ?? ""))
    this.code = fields.code
    this.errno = fields.errno ?? 0
    this.syscall = fields.syscall
    this.path = fields.path
    this.root = fields.root ?? ""
    this.refusal = refusal
    this.description = description
    this.reason = fields.reason ?? reasonOf(fields.code, refusal)
  }
}

/** Whether a value is the plain object the addon rejects with. @internal */
export const isNativeErrorInfo = (u: unknown): u is NativeErrorInfo =>
  typeof u === "object" &&
  u !== null &&
  typeof (u as NativeErrorInfo).code === "string" &&
  typeof (u as NativeErrorInfo).refusal === "string"

/**
 * Turns a native rejection into a {@link PinnedFsError}, naming the path as the caller spelled it
 * and, when given, the root it is relative to.
 *
 * @internal
 */
export const fromNative = (u: unknown, path?: string, root?: string): PinnedFsError => {
  if (u instanceof PinnedFsError) return u
  if (isNativeErrorInfo(u)) {
    return new PinnedFsError({ ...u, path: path ?? u.path, root })
  }
  return new PinnedFsError({
    code: "EINVAL",
    syscall: "native",
    path: path ?? "",
    refusal: "",
    description: u instanceof Error ? u.message : String(u),
    reason: "Unknown",
    root
  })
}

/**
 * A malformed-input {@link PinnedFsError} (`EINVAL`, `badargument`), raised before anything reaches
 * the addon. Its `PlatformError` counterpart is `badArgument` in `protocol/errors.ts`.
 *
 * @internal
 */
export const badArgumentPinnedFsError = (description: string, path = "", syscall = "validate"): PinnedFsError =>
  new PinnedFsError({ code: "EINVAL", errno: -22, syscall, path, refusal: "badargument", description })

/**
 * A refusal decided above the addon (a policy, an allowlist, a gate): `PermissionDenied` with
 * `syscall` naming the check that refused, so callers can tell it from the kernel's `EACCES`.
 *
 * @internal
 */
export const permissionDenied = (description: string, path: string, syscall: string): PinnedFsError =>
  new PinnedFsError({ code: "EACCES", errno: -13, syscall, path, description, reason: "PermissionDenied" })

/**
 * An answer larger than the caller's limit allows (`toolarge`, `BadArgument`), refused by the
 * JavaScript layer: the native core makes the same refusal for content it reads.
 *
 * @internal
 */
export const tooLarge = (description: string, path = "", syscall = "read"): PinnedFsError =>
  new PinnedFsError({ code: "EFBIG", errno: -27, syscall, path, refusal: "toolarge", description })
