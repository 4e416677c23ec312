/**
 * What every phase of a batch is built from: the authorizer, whether the executor resolves without
 * following (which decides how members are resolved and how often), the root check, and the need
 * a member puts to the grant store. Built once per batch service, so each phase module
 * (`resolution.ts`, `decisions.ts`, `results.ts`) is a few small functions over one context.
 *
 * @internal
 */
import type { Effect, PlatformError, Result } from "effect"
import type { BatchRequest } from "../../FileSystemBatch.ts"
import type { Authorizer, Need } from "../authorize.ts"

/** One outcome per member, failures as data. @internal */
export type Outcome<A> = Result.Result<A, PlatformError.PlatformError>

/** The shared context of one batch service. @internal */
export interface BatchContext {
  readonly auth: Authorizer
  /** The executor claims `noFollowAuthorization`: members are resolved by its `resolve`. */
  readonly noFollow: boolean
  /** Fails unless the root is still the pinned one. */
  readonly verifyRoot: Effect.Effect<void, PlatformError.PlatformError>
  /** The read a member asks the grant store about. */
  readonly needOf: (request: BatchRequest) => Need
}

/** @internal */
export const makeBatchContext = (auth: Authorizer, verifyRoot: Effect.Effect<void, PlatformError.PlatformError>): BatchContext => ({
  auth,
  noFollow: auth.atomic.noFollowAuthorization === true,
  verifyRoot,
  needOf: (request) => ({ action: "fs:read", value: request.path, glob: request.operation === "glob" })
})
