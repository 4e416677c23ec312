/**
 * Failures of the path-based executor, as data until the Effect boundary turns them into
 * `PlatformError`s. One shape for both kinds: an errno from a `node:fs` call (mapped as Effect's Node
 * file system maps it, through the same {@link reasonOf} the native extension uses) and a refusal of
 * ours (a link, an escape, a hard link, malformed input), so both executors answer the same tags.
 *
 * @internal
 */
import type { PlatformError } from "effect"
import { platformError } from "../protocol/errors.ts"
import { reasonOf, type Refusal } from "../internal/errors.ts"

/** A failure on its way to becoming a `PlatformError`. @internal */
export class Failure {
  constructor(
    readonly code: string,
    readonly syscall: string,
    readonly path: string,
    readonly refusal: Refusal,
    readonly description: string | undefined,
    readonly cause?: unknown
  ) {}
}

/** Malformed input as a {@link Failure}, caught before any system call. @internal */
export const badArgumentFailure = (description: string, path = ""): Failure =>
  new Failure("EINVAL", "validate", path, "badargument", description)

/** A refusal of ours, with the errno a native executor would report beside it. @internal */
export const refuse = (refusal: Exclude<Refusal, "">, code: string, syscall: string, path: string, description: string) =>
  new Failure(code, syscall, path, refusal, description)

/** A plain errno failure of a system call. @internal */
export const sysError = (code: string, syscall: string, path: string, cause?: unknown): Failure =>
  new Failure(code, syscall, path, "", undefined, cause)

const isErrno = (u: unknown): u is NodeJS.ErrnoException => u instanceof Error && typeof (u as NodeJS.ErrnoException).code === "string"

/**
 * Anything an operation threw, as a {@link Failure}. Node's own argument errors
 * (`ERR_INVALID_ARG_TYPE`…) are malformed input; an unexpected throw is `Unknown`, never a crash.
 *
 * @internal
 */
export const toFailure = (u: unknown, path: string): Failure => {
  if (u instanceof Failure) return u
  if (isErrno(u)) {
    const code = u.code!
    if (code.startsWith("ERR_")) return new Failure("EINVAL", "validate", path, "badargument", u.message, u)
    return sysError(code, u.syscall ?? "unknown", path, u)
  }
  return new Failure("EUNKNOWN", "unknown", path, "", u instanceof Error ? u.message : String(u), u)
}

/**
 * The `PlatformError` a failure becomes, `method` being the wire operation that failed.
 *
 * @internal
 */
export const toPlatformError = (failure: Failure, method: string): PlatformError.PlatformError => {
  const reason = failure.code === "EUNKNOWN" ? "Unknown" : reasonOf(failure.code, failure.refusal)
  return platformError(method, {
    reason,
    path: failure.path,
    syscall: failure.syscall,
    description: reason === "BadArgument" ? (failure.description ?? failure.code) : failure.description,
    cause: failure.cause
  })
}
