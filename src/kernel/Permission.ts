/**
 * Permission failures as data, and their projection into Effect's `PlatformError`.
 *
 * The guarded file system must fail with `PlatformError` (Effect's `FileSystem` fixes its error
 * channel), so a kernel refusal travels as a `PlatformError` whose reason is `PermissionDenied`
 * and whose `cause` is the kernel's own error. {@link fromPlatformError} reads it back, so a caller
 * can tell "the grant store said no" from "the disk said EACCES".
 *
 * @since 0.1.0
 */
import { Data, Option, PlatformError } from "effect"

/**
 * What a capability lets its holder do: read (list, stat, read, glob) or write (create, change,
 * remove, rename).
 *
 * @since 0.1.0
 * @category models
 */
export type Action = "fs:read" | "fs:write"

/**
 * One action on one resource. `resource` is an absolute path in the workspace's logical spelling
 * (the root as the caller gave it, existing components in their on-disk spelling), or a path
 * outside the workspace when the request named one.
 *
 * @since 0.1.0
 * @category models
 */
export interface Capability {
  readonly action: Action
  readonly resource: string
}

/**
 * No grant covers the capability yet: a store that can ask (a prompt, a policy service) may answer
 * this instead of a denial.
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionRequired extends Data.TaggedError("PermissionRequired")<{
  readonly capability: Capability
  readonly message: string
}> {}

/**
 * The capability is refused: by a deny rule, by a person, or by the kernel itself (a path outside
 * the workspace, a link that changed during the decision, a host that cannot confine). `cause` keeps
 * the executor's error when an inspection failed.
 *
 * @since 0.1.0
 * @category errors
 */
export class PermissionDenied extends Data.TaggedError("PermissionDenied")<{
  readonly capability: Capability
  readonly reason: string
  readonly cause?: unknown
}> {
  override get message(): string {
    return `${this.capability.action} ${this.capability.resource}: ${this.reason}`
  }
}

/**
 * The grant store could not decide (its journal failed, its prompt went away). The operation is
 * refused, never performed on a guess.
 *
 * @since 0.1.0
 * @category errors
 */
export class GrantStoreError extends Data.TaggedError("GrantStoreError")<{
  readonly capability: Capability
  readonly message: string
  readonly cause?: unknown
}> {}

/**
 * Every way a permission check can fail.
 *
 * @since 0.1.0
 * @category errors
 */
export type PermissionError = PermissionRequired | PermissionDenied | GrantStoreError

const permissionTags: ReadonlySet<unknown> = new Set(["PermissionRequired", "PermissionDenied", "GrantStoreError"])

/**
 * Whether `u` is a permission failure: one of the three classes above, or any error of the same
 * shape (its `_tag` one of the three, a `capability` with a string `resource`), so that a client's
 * own grant store failing with its own classes is understood and read back unchanged.
 *
 * @since 0.1.0
 * @category guards
 */
export const isPermissionError = (u: unknown): u is PermissionError => {
  if (typeof u !== "object" || u === null) return false
  const { _tag, capability } = u as { readonly _tag?: unknown; readonly capability?: unknown }
  return (
    permissionTags.has(_tag) &&
    typeof capability === "object" &&
    capability !== null &&
    typeof (capability as { readonly resource?: unknown }).resource === "string"
  )
}

const describe = (error: PermissionError): string => {
  switch (error._tag) {
    case "PermissionRequired":
      return `permission required: ${error.capability.action} ${error.capability.resource}`
    case "PermissionDenied":
      // A client's class may carry its explanation as `message` rather than `reason`.
      return typeof error.reason === "string" ? error.reason : String((error as { readonly message?: unknown }).message)
    case "GrantStoreError":
      return `grant store failed: ${error.message}`
  }
}

/**
 * Projects a permission failure into the `PlatformError` a `FileSystem` method fails with: reason
 * `PermissionDenied`, the resource as `pathOrDescriptor`, and the kernel error on `cause`.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toPlatformError = (options: {
  readonly method: string
  readonly error: PermissionError
  readonly module?: string | undefined
}): PlatformError.PlatformError =>
  PlatformError.systemError({
    _tag: "PermissionDenied",
    module: options.module ?? "FileSystem",
    method: options.method,
    pathOrDescriptor: options.error.capability.resource,
    description: describe(options.error),
    cause: options.error
  })

/**
 * Reads the kernel's failure back out of a `PlatformError`: `Option.some` when the error is a
 * permission refusal made by the kernel, `Option.none` for any failure the host reported.
 *
 * @since 0.1.0
 * @category conversions
 */
export const fromPlatformError = (error: PlatformError.PlatformError): Option.Option<PermissionError> => {
  const reason = error.reason
  if (reason._tag !== "PermissionDenied") return Option.none()
  const cause: unknown = (reason as { readonly cause?: unknown }).cause
  return isPermissionError(cause) ? Option.some(cause) : Option.none()
}
