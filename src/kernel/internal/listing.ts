/**
 * Listings filtered by the read grants.
 *
 * The client's kernel authorizes a listing once (a directory, or a glob's literal prefix) and then
 * hands back every name the executor found, including names the grants deny and names inside
 * directories the caller may not read. Here a listed name is a read of that name and of every
 * directory that holds it below the listed one: it is kept only when the store grants all of them.
 * Each directory is asked about once per listing, before the first name it holds; once one is
 * refused, nothing below it is asked about.
 *
 * @internal
 */
import { Effect, type Path, type PlatformError, Result } from "effect"
import type { Action } from "../Permission.ts"

/** Whether a failed check was the grant store failing rather than deciding. @internal */
export const isStoreFailure = (error: PlatformError.PlatformError): boolean => {
  const cause = (error.reason as { readonly cause?: unknown }).cause
  return typeof cause === "object" && cause !== null && (cause as { readonly _tag?: unknown })._tag === "GrantStoreError"
}

/** One listed item and the resource (logical spelling) it names; `undefined` when outside the workspace. @internal */
export interface Listed<A> {
  readonly item: A
  readonly resource: string | undefined
}

/**
 * The items of a listing the caller may read, in their order. `base` is the directory that was
 * listed (already authorized): the directories between it and an item are asked about as well. A
 * grant store that fails (rather than deciding) fails the listing: a name is never shown, or
 * hidden, on a guess.
 *
 * @internal
 */
export const readable = <A>(options: {
  readonly path: Path.Path
  readonly base: string
  readonly listed: ReadonlyArray<Listed<A>>
  readonly check: (action: Action, resource: string) => Effect.Effect<void, PlatformError.PlatformError>
}): Effect.Effect<Array<A>, PlatformError.PlatformError> =>
  Effect.gen(function*() {
    const { base, check, path } = options
    const decided = new Map<string, boolean>()
    const decide = (resource: string): Effect.Effect<boolean, PlatformError.PlatformError> =>
      Effect.gen(function*() {
        const known = decided.get(resource)
        if (known !== undefined) return known
        const parent = path.dirname(resource)
        // The directories that hold it, outermost first, down from the listed one.
        const holder = parent === base || parent === resource || path.relative(base, parent).startsWith("..")
          ? true
          : yield* decide(parent)
        let allowed = false
        if (holder) {
          const answer = yield* Effect.result(check("fs:read", resource))
          if (Result.isFailure(answer) && isStoreFailure(answer.failure)) return yield* Effect.fail(answer.failure)
          allowed = Result.isSuccess(answer)
        }
        decided.set(resource, allowed)
        return allowed
      })
    const kept: Array<A> = []
    for (const { item, resource } of options.listed) {
      if (resource === undefined) continue
      // The listed directory itself (a glob such as `dir/**` answers it) was what was authorized.
      if (resource === base || (yield* decide(resource))) kept.push(item)
    }
    return kept
  })
