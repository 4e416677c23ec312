/**
 * Authorization, in two phases.
 *
 * 1. The client's guard, question for question: the path is resolved to the resource it names
 *    (through the executor's no-follow `resolve` when it claims `noFollowAuthorization`, through
 *    the host's `realPath` and hard-link guard otherwise), the grant store is asked about that
 *    resource, and the path is resolved again: one that names another resource once the decision
 *    arrives is refused.
 * 2. pinnedfs's additions, only once every question of phase 1 was answered (see docs/kernel.md):
 *    the executor acts on the path the caller gave, so when that path differs from the resource it
 *    resolved to (a link on the way) the path itself is asked about too; and when phase 1 refused
 *    for any reason other than the store's answer about that very path, the path is asked about
 *    before the refusal is reported, so that a denied path is refused the same way whatever lies
 *    behind it.
 *
 * @internal
 */
import { Effect, type FileSystem, type Path, PlatformError, type Result } from "effect"
import type { AtomicFileSystem, AtomicRequest, AtomicResult } from "../../protocol/wire.ts"
import type { GrantStore } from "../GrantStore.ts"
import { type Action, type Capability, GrantStoreError, isPermissionError, PermissionDenied, toPlatformError } from "../Permission.ts"
import { canonicalResource, hardLinked, hardLinkGuard } from "./canonical.ts"
import { globPrefix, isInside, logicalOf, type KernelRoot } from "./paths.ts"
import { type Refusal, resourceOf } from "./resolve.ts"

/** One path an operation needs authorized. @internal */
export interface Need {
  readonly action: Action
  /** Absolute and normalized (the caller's path, or a glob's pattern). */
  readonly value: string
  /** A glob: its literal prefix is resolved, its pattern segments kept as written. */
  readonly glob?: boolean | undefined
}

/** What phase 1 settled for one {@link Need}. @internal */
export interface Granted {
  readonly need: Need
  /** The resource the store was asked about. */
  readonly resource: string
  /** The caller's own path in logical spelling, nothing followed. */
  readonly lexical: string
}

/** The authorization toolkit one guarded file system is built from. @internal */
export interface Authorizer {
  readonly root: KernelRoot
  readonly path: Path.Path
  readonly atomic: AtomicFileSystem
  /** Absolute and normalized, read against `base` (the workspace root by default). */
  readonly normalize: (value: string, base?: string) => string
  /** Runs one request stamped with the pinned root. */
  readonly run: <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>
  /** The resource a path names (phase 1's resolution alone), refused as the client refuses it. */
  readonly resolve: (need: Need) => Effect.Effect<string, PlatformError.PlatformError>
  /** The caller's own path of a need, in logical spelling, nothing followed. */
  readonly lexicalOf: (need: Need) => string
  /** Both phases for every need, in order: the resources authorized. */
  readonly authorize: (needs: ReadonlyArray<Need>) => Effect.Effect<Array<Granted>, PlatformError.PlatformError>
  /**
   * Both phases for one need, then one request: `authorize([need])` and `use`, sparing a trip where
   * it can by sending `attempt` in place of the second resolution and `use` (see below).
   */
  readonly authorizeThen: <A, L>(
    need: Need,
    attempt: Effect.Effect<L, PlatformError.PlatformError>,
    answer: (outcome: Result.Result<L, PlatformError.PlatformError>) => Result.Result<A, PlatformError.PlatformError> | undefined,
    use: Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.Effect<A, PlatformError.PlatformError>
  /** Phase 1 alone for one need: the resource, or the refusal and whether it was the store's answer about the path itself. */
  readonly phaseOne: (need: Need) => Effect.Effect<string, PhaseOneRefusal>
  /** Phase 2 for a need whose phase 1 succeeded: the path itself when it differs. */
  readonly entry: (granted: Granted) => Effect.Effect<void, PlatformError.PlatformError>
  /** Phase 2 for a need whose phase 1 refused: the refusal to report. */
  readonly conceal: (need: Need, refusal: PhaseOneRefusal) => Effect.Effect<never, PlatformError.PlatformError>
  /** The store's decision about a resource as a boolean; fails only when the store cannot decide. */
  readonly decide: (action: Action, resource: string, method?: string) => Effect.Effect<boolean, PlatformError.PlatformError>
  /** Whether the store grants `action` on everything strictly below a directory, unasked (see `GrantStore.grantsBelow`). */
  readonly grantsBelow: (action: Action, directory: string) => boolean
  /** Asks the grant store alone about a resource; a refusal is reported with `method`. */
  readonly check: (action: Action, resource: string, method?: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly deny: (action: Action, resource: string, reason: string, cause?: unknown, method?: string) => PlatformError.PlatformError
  /** `read` or `write`: the method every guard refusal carries, as the client's does. */
  readonly methodOf: (action: Action) => string
}

/** How phase 1 refused. @internal */
export interface PhaseOneRefusal {
  readonly error: PlatformError.PlatformError
  /** The store itself answered about the caller's own path (nothing is left to conceal). */
  readonly ownAnswered: boolean
}

const describeCause = (cause: unknown): string | undefined =>
  PlatformError.isPlatformError(cause)
    ? ((cause.reason as { readonly description?: string | undefined }).description ?? cause.message)
    : undefined

/** @internal */
export const makeAuthorizer = (options: {
  readonly path: Path.Path
  readonly root: KernelRoot
  readonly atomic: AtomicFileSystem
  readonly grants: GrantStore["Service"]
  /** The host `FileSystem`: asked for `realPath` when the executor does not resolve without following. */
  readonly host: FileSystem.FileSystem
}): Authorizer => {
  const { atomic, grants, host, path, root } = options
  const noFollow = atomic.noFollowAuthorization === true
  const methodOf = (action: Action) => (action === "fs:read" ? "read" : "write")
  const run = <R extends AtomicRequest>(request: R) =>
    atomic.execute<R>({
      ...request,
      boundaryRoot: root.boundaryRoot,
      logicalRoot: root.logicalRoot,
      rootIdentity: root.rootIdentity
    })
  const normalize = (value: string, base: string = root.logicalRoot) =>
    path.normalize(path.isAbsolute(value) ? value : path.resolve(base, value))

  const deny = (action: Action, resource: string, reason: string, cause?: unknown, method = methodOf(action)) => {
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

  /**
   * The store's decision as a boolean, for questions whose refusal is not reported (a listed name):
   * a refusal is `false`, built into no error; a store that cannot decide still fails.
   */
  const decide = (action: Action, resource: string, method = methodOf(action)) => {
    const capability: Capability = { action, resource }
    return Effect.matchEffect(grants.check(capability), {
      onSuccess: () => Effect.succeed(true),
      onFailure: (error: unknown) =>
        isPermissionError(error) && error._tag !== "GrantStoreError"
          ? Effect.succeed(false)
          : Effect.fail(
              toPlatformError({
                method,
                error: isPermissionError(error)
                  ? error
                  : new GrantStoreError({ capability, message: "the grant store failed with an error of unknown shape", cause: error })
              })
            )
    })
  }

  const check = (action: Action, resource: string, method = methodOf(action)) => {
    const capability: Capability = { action, resource }
    return grants.check(capability).pipe(
      Effect.mapError((error: unknown) =>
        toPlatformError({
          method,
          // A store's own failure of another shape is still a failure to decide, never a grant.
          error: isPermissionError(error)
            ? error
            : new GrantStoreError({ capability, message: "the grant store failed with an error of unknown shape", cause: error })
        })
      )
    )
  }

  const insideWorkspace = (action: Action) => (resource: string) =>
    isInside(path, root.logicalRoot, resource)
      ? Effect.succeed(resource)
      : Effect.fail(deny(action, resource, "path is outside the workspace"))

  const resolveOne = (boundaryPath: string) => run({ operation: "resolve", path: boundaryPath })

  const resolve = (need: Need): Effect.Effect<string, PlatformError.PlatformError> => {
    const { action, value } = need
    if (noFollow) {
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

  const refuseWith =
    (ownAnswered: boolean) =>
    (error: PlatformError.PlatformError): PhaseOneRefusal => ({ error, ownAnswered })

  /**
   * Phase 1 up to the store's answer: the resource asked about, whether it is the path itself, and
   * whether the store made anything wait for its answer. A microtask queued just before the question
   * has run by the time the answer arrives exactly when the answer did not come within the same
   * synchronous run: a person, a journal, a timer or any other fiber came in between.
   */
  const decideFirst = (
    need: Need
  ): Effect.Effect<{ readonly before: string; readonly own: boolean; readonly waited: boolean }, PhaseOneRefusal> =>
    Effect.gen(function* () {
      const before = yield* Effect.mapError(resolve(need), refuseWith(false))
      const own = before === lexicalOf(need)
      const clock = { waited: false }
      queueMicrotask(() => {
        clock.waited = true
      })
      yield* Effect.mapError(check(need.action, before), refuseWith(own))
      return { before, own, waited: clock.waited }
    })

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

  const entry = (granted: Granted) =>
    granted.lexical !== granted.resource && isInside(path, root.logicalRoot, granted.lexical)
      ? check(granted.need.action, granted.lexical)
      : Effect.void

  const conceal = (need: Need, refusal: PhaseOneRefusal): Effect.Effect<never, PlatformError.PlatformError> => {
    const lexical = lexicalOf(need)
    return refusal.ownAnswered || !isInside(path, root.logicalRoot, lexical)
      ? Effect.fail(refusal.error)
      : Effect.flatMap(check(need.action, lexical), () => Effect.fail(refusal.error))
  }

  const authorize = (needs: ReadonlyArray<Need>) =>
    Effect.gen(function* () {
      const granted: Array<Granted> = []
      for (const need of needs) {
        const resource = yield* Effect.catch(phaseOne(need), (refusal) => conceal(need, refusal))
        granted.push({ need, resource, lexical: lexicalOf(need) })
      }
      for (const one of granted) yield* entry(one)
      return granted
    })

  /**
   * One need authorized, then `use` run: the same questions, in the same order, and the same
   * answers as `authorize` followed by `use`, with one executor trip fewer when it can be spared.
   *
   * Over a no-follow executor, when the path resolved to itself (no link on it) and the store
   * answered at once (nothing waited on a person, a journal or another fiber, so the first
   * resolution is as fresh as a second would be), the store was asked about the very path the
   * operation names, and `attempt`, a request that refuses or reports any link it meets, is sent
   * at once: it cannot describe anything but what was granted, so it stands in for the second
   * resolution. `answer` takes its outcome only when that outcome proves no link lay on the path,
   * and says what `use` would then have answered: `use`'s own value for a read, or for `exists`
   * (whose request answers `true` for a final link without saying so) the `stat` it sent instead:
   * a description of anything but a link is `true`, a component missing before any link is `false`
   * (a no-follow lookup runs in order and stops at the first link, so a missing component was
   * reached with none before it). A decision that waited always takes the full protocol: nothing
   * is sent on a path until it has been resolved again after the wait. Any outcome `answer` does
   * not take (a link that appeared during the decision among them, or a no-follow `stat`
   * describing a final link) hands over to the full protocol from where it was: the second
   * resolution, its refusal when the path now names something else, and `use`. Any other path (a
   * link on it, a host asked for `realPath`) takes the full protocol from the start. `attempt` must
   * be one request with no effect when it fails and no question of its own; the guarded
   * `readFile`, `readFileString`, `stat`, `lstat` and `exists` use it (`readLink` and `realPath`
   * answer about a final link without refusing it, so they keep the full protocol).
   */
  const authorizeThen = <A, L>(
    need: Need,
    attempt: Effect.Effect<L, PlatformError.PlatformError>,
    answer: (outcome: Result.Result<L, PlatformError.PlatformError>) => Result.Result<A, PlatformError.PlatformError> | undefined,
    use: Effect.Effect<A, PlatformError.PlatformError>
  ) =>
    Effect.gen(function* () {
      const { before, own, waited } = yield* Effect.catch(decideFirst(need), (refusal) => conceal(need, refusal))
      if (noFollow && own && !waited) {
        const taken = answer(yield* Effect.result(attempt))
        if (taken !== undefined) return yield* Effect.fromResult(taken)
      }
      yield* Effect.catch(confirm(need, before, own), (refusal) => conceal(need, refusal))
      yield* entry({ need, resource: before, lexical: lexicalOf(need) })
      return yield* use
    })

  return {
    root,
    path,
    atomic,
    normalize,
    run,
    resolve,
    lexicalOf,
    authorize,
    authorizeThen,
    phaseOne,
    entry,
    conceal,
    check,
    decide,
    grantsBelow: (action: Action, directory: string) => grants.grantsBelow?.(action, directory) === true,
    deny,
    methodOf
  }
}
