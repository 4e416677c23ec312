/**
 * Options objects, checked whole: a name a method does not know is refused (`BadArgument`), never
 * dropped. A misspelt `recurisve: true` or a `signal` given to a method that cannot stop would
 * otherwise be silently ignored, and the caller would believe it took effect.
 *
 * @internal
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"

/**
 * Refuses `options` unless it is `undefined` or a plain object whose own keys are all in
 * `allowed`; `what` names the method in the message. Answers it typed, for chaining.
 */
export const checkOptions = <A extends object>(options: A | undefined, allowed: ReadonlyArray<string>, what: string): A | undefined => {
  if (options === undefined) return undefined
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw badArgumentPinnedFsError(
      `${what} options must be an object, got ${options === null ? "null" : Array.isArray(options) ? "array" : typeof options}`
    )
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      const known = allowed.length === 0 ? "it takes none" : `known: ${allowed.join(", ")}`
      throw badArgumentPinnedFsError(`unknown option '${key.slice(0, 100)}' for ${what} (${known})`)
    }
  }
  return options
}
