/**
 * Phase 1 of authorization, the client's guard question for question: the path resolved to the
 * resource it names (through the executor's no-follow `resolve` when it claims
 * `noFollowAuthorization`, through the host's `realPath` and hard-link guard otherwise), the grant
 * store asked about that resource, and the path resolved again: one that names another resource
 * once the decision arrives is refused.
 *
 * @internal
 */
import { Effect, type FileSystem, type Path, type PlatformError } from "effect"
import type { Action } from "../../Permission.ts"
import type { Authorizer, Need, PhaseOneRefusal } from "../authorize.ts"
import { canonicalResource, hardLinked, hardLinkGuard } from "../canonical.ts"
import type { Root } from "../../../protocol/root.ts"
import { globPrefix, isInside, logicalOf } from "../paths.ts"
import { type Refusal, resourceOf } from "../resolve.ts"
import { deny } from "./store.ts"

/** What phase 1 is built from. @internal */
export interface PhaseOneContext {
  readonly path: Path.Path
  readonly root: Root<string | undefined>
  readonly host: FileSystem.FileSystem
  readonly noFollow: boolean
  readonly runPath: Authorizer["runPath"]
  readonly check: (action: Action, resource: string) => Effect.Effect<void, PlatformError.PlatformError>
}

/** What phase 1's first half settled. @internal */
export interface FirstDecision {
  readonly before: string
  /** The resource is the caller's own path. */
  readonly own: boolean
  /** The store made something wait for its answer. */
  readonly waited: boolean
}

const refuseWith =
  (ownAnswered: boolean) =>
  (error: PlatformError.PlatformError): PhaseOneRefusal => ({ error, ownAnswered })

/** @internal */
export const phaseOneOf = (cx: PhaseOneContext) => {
  const { host, path, root, runPath, check } = cx

  const insideWorkspace = (action: Action) => (resource: string) =>
    isInside(path, root.logicalRoot, resource)
      ? Effect.succeed(resource)
      : Effect.fail(deny(action, resource, "path is outside the workspace"))

  const resolveOne = (boundaryPath: string) => runPath("resolve", boundaryPath)

  const resolve = (need: Need): Effect.Effect<string, PlatformError.PlatformError> => {
    const { action, value } = need
    if (cx.noFollow) {
      const { prefix, rest } = need.glob === true ? globPrefix(path, root, value) : { prefix: value, rest: [] }
      return resourceOf(path, root, resolveOne, prefix).pipe(
        Effect.mapError((refusal: Refusal) => deny(action, refusal.resource, refusal.reason, refusal.cause)),
        Effect.map((resolved) => (rest.length === 0 ? resolved : `${resolved}/${rest.join("/")}`)),
        Effect.flatMap(insideWorkspace(action))
      )
    }
    // The client asks such a host for its own realPath, then refuses a hard-linked file itself,
    // and asks the store about whatever that names (outside the workspace included).
    return canonicalResource(host, path, root.logicalRoot, value).pipe(
      Effect.flatMap((resolved) =>
        Effect.flatMap(hardLinked(host, value), (linked) =>
          linked ? Effect.fail(deny(action, resolved, hardLinkGuard)) : Effect.succeed(resolved)
        )
      )
    )
  }

  const lexicalOf = (need: Need) => logicalOf(path, root, need.value)

  /**
   * Phase 1 up to the store's answer: the resource asked about, whether it is the path itself, and
   * whether the store made anything wait for its answer. A microtask queued just before the question
   * has run by the time the answer arrives exactly when the answer did not come within the same
   * synchronous run: a person, a journal, a timer or any other fiber came in between.
   */
  const decideFirst = (need: Need): Effect.Effect<FirstDecision, PhaseOneRefusal> =>
    // Chained rather than generated, as `authorizeThen` (every guarded read, stat and exists).
    Effect.flatMap(Effect.mapError(resolve(need), refuseWith(false)), (before) => {
      const own = before === lexicalOf(need)
      return Effect.map(ask(need, before, own), (waited) => ({ before, own, waited }))
    })

  /**
   * The store asked about `resource` for `need`: whether it made anything wait for its answer. A
   * refusal is the store's own answer about the caller's path when `own`. Called as the effect
   * runs (in a continuation), just before the question is asked: the microtask is queued then.
   */
  const ask = (need: Need, resource: string, own = true): Effect.Effect<boolean, PhaseOneRefusal> => {
    const clock = { waited: false }
    queueMicrotask(() => {
      clock.waited = true
    })
    return Effect.map(Effect.mapError(check(need.action, resource), refuseWith(own)), () => clock.waited)
  }

  /**
   * The rest of phase 1: the decision may have waited on a person or a journal. What was granted is
   * the resource the path named when asked; if it names another one now, the grant does not carry
   * over.
   */
  const confirm = (need: Need, before: string, own: boolean): Effect.Effect<void, PhaseOneRefusal> =>
    Effect.flatMap(Effect.mapError(resolve(need), refuseWith(own)), (after) =>
      after === before
        ? Effect.void
        : Effect.fail(refuseWith(own)(deny(need.action, before, "path no longer names the resource that was authorized")))
    )

  const phaseOne = (need: Need): Effect.Effect<string, PhaseOneRefusal> =>
    Effect.flatMap(decideFirst(need), ({ before, own }) => Effect.as(confirm(need, before, own), before))

  return { resolve, lexicalOf, ask, decideFirst, confirm, phaseOne }
}

/** Phase 1's functions over one context. @internal */
export type PhaseOne = ReturnType<typeof phaseOneOf>
