/**
 * The grant store's questions, as both phases of authorization ask them: a refusal reported as the
 * client reports it (`PermissionDenied` carried by a `PlatformError` naming `read` or `write`), a
 * decision taken as a boolean where its refusal is not reported, and a store that fails in a shape
 * of its own still a failure to decide, never a grant.
 *
 * @internal
 */
import { Effect, PlatformError } from "effect"
import type { GrantStore } from "../../GrantStore.ts"
import { type Action, type Capability, GrantStoreError, isPermissionError, PermissionDenied, toPlatformError } from "../../Permission.ts"

/** `read` or `write`: the method every guard refusal carries, as the client's does. @internal */
export const methodOf = (action: Action) => (action === "fs:read" ? "read" : "write")

const describeCause = (cause: unknown): string | undefined =>
  PlatformError.isPlatformError(cause)
    ? ((cause.reason as { readonly description?: string | undefined }).description ?? cause.message)
    : undefined

/** A refusal of `action` on `resource`, with the cause's own description appended. @internal */
export const deny = (action: Action, resource: string, reason: string, cause?: unknown, method = methodOf(action)) => {
  const detail = describeCause(cause)
  return toPlatformError({
    method,
    error: new PermissionDenied({
      capability: { action, resource },
      reason: detail === undefined ? reason : `${reason}: ${detail}`,
      cause
    })
  })
}

const unknownShape = (capability: Capability, error: unknown) =>
  isPermissionError(error)
    ? error
    : new GrantStoreError({ capability, message: "the grant store failed with an error of unknown shape", cause: error })

/** The questions put to one grant store. @internal */
export interface StoreQuestions {
  readonly decide: (action: Action, resource: string, method?: string) => Effect.Effect<boolean, PlatformError.PlatformError>
  readonly check: (action: Action, resource: string, method?: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly grantsBelow: (action: Action, directory: string) => boolean
}

/** @internal */
export const storeQuestions = (grants: GrantStore["Service"]): StoreQuestions => ({
  /**
   * The store's decision as a boolean, for questions whose refusal is not reported (a listed name):
   * a refusal is `false`, built into no error; a store that cannot decide still fails.
   */
  decide: (action, resource, method = methodOf(action)) => {
    const capability: Capability = { action, resource }
    return Effect.matchEffect(grants.check(capability), {
      onSuccess: () => Effect.succeed(true),
      onFailure: (error: unknown) =>
        isPermissionError(error) && error._tag !== "GrantStoreError"
          ? Effect.succeed(false)
          : Effect.fail(toPlatformError({ method, error: unknownShape(capability, error) }))
    })
  },
  check: (action, resource, method = methodOf(action)) => {
    const capability: Capability = { action, resource }
    // A store's own failure of another shape is still a failure to decide, never a grant.
    return grants
      .check(capability)
      .pipe(Effect.mapError((error: unknown) => toPlatformError({ method, error: unknownShape(capability, error) })))
  },
  grantsBelow: (action, directory) => grants.grantsBelow?.(action, directory) === true
})
