/**
 * Listings filtered by the read grants.
 *
 * The client's kernel authorizes a listing once (a directory, or a glob's literal prefix) and then
 * hands back every name the executor found, including names the grants deny. Here every name a
 * listing would return is itself a read: it is kept only when the store grants reading it.
 *
 * @internal
 */
import { Effect, type PlatformError, Result } from "effect"
import type { Action } from "../Permission.ts"

/** @internal */
export interface Filter {
  /** Asks the store about one resource (logical spelling). */
  readonly check: (action: Action, resource: string) => Effect.Effect<void, PlatformError.PlatformError>
  /** The resource a listed entry names, or `undefined` when it is outside the workspace. */
  readonly resourceOf: (entry: string) => string | undefined
}

/** Whether a failed check was the grant store failing rather than deciding. @internal */
export const isStoreFailure = (error: PlatformError.PlatformError): boolean => {
  const cause = (error.reason as { readonly cause?: unknown }).cause
  return typeof cause === "object" && cause !== null && (cause as { readonly _tag?: unknown })._tag === "GrantStoreError"
}

/**
 * The entries of a listing the caller may read, in their order. A grant store that fails (rather
 * than deciding) fails the listing: a name is never shown, or hidden, on a guess.
 *
 * @internal
 */
export const readable = (
  filter: Filter,
  entries: ReadonlyArray<string>
): Effect.Effect<Array<string>, PlatformError.PlatformError> =>
  Effect.gen(function*() {
    const kept: Array<string> = []
    for (const entry of entries) {
      const resource = filter.resourceOf(entry)
      if (resource === undefined) continue
      const decided = yield* Effect.result(filter.check("fs:read", resource))
      if (Result.isFailure(decided)) {
        if (isStoreFailure(decided.failure)) return yield* Effect.fail(decided.failure)
        continue
      }
      kept.push(entry)
    }
    return kept
  })
