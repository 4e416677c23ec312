/**
 * Options are copied before any asynchronous check: a caller that mutates its options object while
 * a grant decision is pending must not change what is executed. A getter could answer one thing to
 * the check and another to the execution, so an object with accessor properties is refused, as
 * the client's kernel refuses it (here as a `BadArgument` failure rather than a thrown `TypeError`).
 *
 * @internal
 */
import { Effect, PlatformError, Result } from "effect"

/** Deepest nesting copied; options are a level or two deep, so anything deeper is refused. */
const maxDepth = 32

const copy = (value: unknown, depth: number): Result.Result<unknown, string> => {
  if (typeof value !== "object" || value === null) return Result.succeed(value)
  if (depth > maxDepth) return Result.fail("options are nested too deeply")
  if (value instanceof Uint8Array) return Result.succeed(value.slice())
  if (value instanceof Date) return Result.succeed(new Date(value.getTime()))
  const descriptors = Object.getOwnPropertyDescriptors(value)
  const out: Record<string, unknown> = Array.isArray(value) ? ([] as never) : {}
  for (const [name, descriptor] of Object.entries(descriptors)) {
    if (!descriptor.enumerable) continue
    if (!("value" in descriptor)) return Result.fail(`'${name}' is an accessor: options must contain only data properties`)
    const inner = copy(descriptor.value, depth + 1)
    if (Result.isFailure(inner)) return inner
    out[name] = inner.success
  }
  return Result.succeed(Object.freeze(out))
}

/**
 * A deep, frozen copy of plain data, or why it cannot be one (an accessor property).
 *
 * @internal
 */
export const copyData = <T>(value: T): Result.Result<T, string> => copy(value, 0) as Result.Result<T, string>

/**
 * {@link copyData} as an effect: the copy, or a `BadArgument` failure for `method`.
 *
 * @internal
 */
export const captured = <T>(method: string, value: T): Effect.Effect<T, PlatformError.PlatformError> => {
  const result = copyData(value)
  return Result.isSuccess(result)
    ? Effect.succeed(result.success)
    : Effect.fail(PlatformError.badArgument({ module: "FileSystem", method, description: result.failure }))
}

/**
 * A deep, frozen copy of plain data; an accessor is read once. For callers that cannot fail; every
 * public option goes through {@link captured}.
 *
 * @internal
 */
export const snapshot = <T>(value: T): T => {
  if (value instanceof Uint8Array) return value.slice() as T
  if (Array.isArray(value)) return Object.freeze(value.map(snapshot)) as T
  if (typeof value !== "object" || value === null) return value
  if (value instanceof Date) return new Date(value.getTime()) as T
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) out[key] = snapshot((value as Record<string, unknown>)[key])
  return Object.freeze(out) as T
}
