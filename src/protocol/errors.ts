/**
 * Every `PlatformError` an executor answers is made here, for the native extension and the
 * path-based fallback alike, so the two cannot disagree on a tag or a field: malformed requests are
 * `BadArgument`, system failures keep their errno's `syscall` and the path as the caller spelled
 * it, and the reason tag comes from the one mapping pinnedfs has (`reasonOf`, the errno table of
 * `@effect/platform-node-shared`'s `handleErrnoException` with our own refusals mapped first).
 *
 * @since 0.1.0
 */
import { PlatformError } from "effect"
import { fromNative, isNativeErrorInfo, type ReasonTag } from "../internal/errors.ts"

const module = "FileSystem"

/**
 * A request the extension refuses to run because of its shape: unknown operation, missing or
 * mistyped operand, NUL byte, relative path, oversized payload.
 *
 * @since 0.1.0
 * @category errors
 */
export const badArgument = (method: string, description: string, cause?: unknown): PlatformError.PlatformError =>
  PlatformError.badArgument({ module, method, description, ...(cause === undefined ? {} : { cause }) })

/**
 * A failure with its reason already decided, as a `PlatformError`: `BadArgument` carries only a
 * description (Effect's `BadArgument` has no path or syscall); every other reason is a
 * `SystemError` naming the path and the system call. Both executors end here.
 *
 * @since 0.1.0
 * @category errors
 */
export const platformError = (
  method: string,
  failure: {
    readonly reason: ReasonTag
    readonly path: string
    readonly syscall: string
    readonly description?: string | undefined
    readonly cause?: unknown
  }
): PlatformError.PlatformError => {
  const cause = failure.cause === undefined ? {} : { cause: failure.cause }
  if (failure.reason === "BadArgument") {
    return PlatformError.badArgument({ module, method, description: failure.description ?? "", ...cause })
  }
  return PlatformError.systemError({
    _tag: failure.reason,
    module,
    method,
    pathOrDescriptor: failure.path,
    syscall: failure.syscall,
    ...(failure.description === undefined ? {} : { description: failure.description }),
    ...cause
  })
}

/**
 * A path outside both the logical and the boundary root: the contract answers `PermissionDenied`,
 * not `BadArgument`, because the request is well formed and simply not allowed.
 *
 * @since 0.1.0
 * @category errors
 */
export const outsideRoots = (method: string, path: string): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: "PermissionDenied",
    module,
    method,
    pathOrDescriptor: path,
    syscall: "validate",
    description: "path is outside the pinned root (neither under logicalRoot nor under boundaryRoot)"
  })

/**
 * The root pinned for a request is not the directory the caller authorized (`rootIdentity`):
 * `Busy`, which the kernel reads as `workspace_identity_changed`.
 *
 * @since 0.1.0
 * @category errors
 */
export const identityChanged = (method: string, root: string, description: string, cause?: unknown): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: "Busy",
    module,
    method,
    pathOrDescriptor: root,
    syscall: "stat",
    description: `workspace_identity_changed: ${description}`,
    ...(cause === undefined ? {} : { cause })
  })

/**
 * Whether a native rejection is the refusal of the root itself: its path renamed away, replaced,
 * or gone since it was pinned (the addon names the root path it re-checked). A directory program's
 * member refused for a changed identity is not this: it names that member.
 *
 * @since 0.1.0
 * @category errors
 */
export const isRootChanged = (u: unknown, rootPath: string): boolean =>
  isNativeErrorInfo(u) && u.refusal === "identity" && u.path === rootPath

/**
 * Turns whatever the addon rejected with into a `PlatformError` for `method`, naming `path` as the
 * request spelled it (absolute), never the root-relative path the addon saw. The `cause` is a
 * `PinnedFsError`: Node's error fields (`code`, `errno`, `syscall`, `path`) plus our refusal.
 *
 * @since 0.1.0
 * @category errors
 */
export const fromNativeError = (u: unknown, method: string, path: string): PlatformError.PlatformError => {
  const cause = fromNative(u, path)
  return platformError(method, {
    reason: cause.reason,
    path,
    syscall: cause.syscall,
    description:
      cause.reason === "BadArgument" ? cause.description || cause.message : cause.description === "" ? undefined : cause.description,
    cause
  })
}
