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
 * This file holds the shapes and puts the phases together; each lives in its own module under
 * `authorize/`: the grant store's questions (`store.ts`), phase 1 (`phaseOne.ts`), phase 2
 * (`phaseTwo.ts`), and both in order (`bothPhases.ts`).
 *
 * @internal
 */
import type { Effect, FileSystem, Path, PlatformError, Result } from "effect"
import type { AtomicFileSystem, AtomicRequest, AtomicResult, AtomicResults } from "../../protocol/wire.ts"
import type { GrantStore } from "../GrantStore.ts"
import type { Action } from "../Permission.ts"
import { bothPhasesOf } from "./authorize/bothPhases.ts"
import { phaseOneOf } from "./authorize/phaseOne.ts"
import { phaseTwoOf } from "./authorize/phaseTwo.ts"
import { deny, methodOf, storeQuestions } from "./authorize/store.ts"
import type { Root } from "../../protocol/root.ts"
import { isInside } from "./paths.ts"

/** The operations whose request is the operation and a path, nothing else. @internal */
export type PathOperation = "resolve" | "stat" | "exists" | "readFile"

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
  readonly root: Root<string | undefined>
  readonly path: Path.Path
  readonly atomic: AtomicFileSystem
  /** Absolute and normalized, read against `base` (the workspace root by default). */
  readonly normalize: (value: string, base?: string) => string
  /** Runs one request stamped with the pinned root. */
  readonly run: <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>
  /** `run` of a request that is an operation and a path alone, built without copying one. */
  readonly runPath: <O extends PathOperation>(operation: O, path: string) => Effect.Effect<AtomicResults[O], PlatformError.PlatformError>
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

/** @internal */
export const makeAuthorizer = (options: {
  readonly path: Path.Path
  readonly root: Root<string | undefined>
  readonly atomic: AtomicFileSystem
  readonly grants: GrantStore["Service"]
  /** The host `FileSystem`: asked for `realPath` when the executor does not resolve without following. */
  readonly host: FileSystem.FileSystem
}): Authorizer => {
  const { atomic, grants, host, path, root } = options
  const noFollow = atomic.noFollowAuthorization === true
  const run = <R extends AtomicRequest>(request: R) =>
    atomic.execute<R>({
      ...request,
      boundaryRoot: root.boundaryRoot,
      logicalRoot: root.logicalRoot,
      rootIdentity: root.rootIdentity
    })
  // The requests sent most (every authorization's resolve, every stat and exists) are built as one
  // literal: a spread of the caller's request into a new object, on a call site that sees every
  // request shape, cost more than the rest of building the request.
  const runPath = <O extends PathOperation>(operation: O, p: string) =>
    atomic.execute({
      operation,
      path: p,
      boundaryRoot: root.boundaryRoot,
      logicalRoot: root.logicalRoot,
      rootIdentity: root.rootIdentity
    } as AtomicRequest) as Effect.Effect<AtomicResults[O], PlatformError.PlatformError>
  const normalize = (value: string, base: string = root.logicalRoot) =>
    path.normalize(path.isAbsolute(value) ? value : path.resolve(base, value))
  const store = storeQuestions(grants)
  const check = (action: Action, resource: string) => store.check(action, resource)
  const one = phaseOneOf({ path, root, host, noFollow, runPath, check })
  const two = phaseTwoOf({ path, root, lexicalOf: one.lexicalOf, check })
  // The store's promise that a name directly in a directory is granted at once and unobserved:
  // the caller's own path strictly inside the workspace, no glob, over an executor whose
  // resolution of a link-free path is that path as asked (the resource the client would ask about).
  const asAsked = noFollow && (atomic as { readonly resolvesAsAsked?: unknown }).resolvesAsAsked === true
  const promised = (need: Need) => {
    if (!asAsked || need.glob === true) return false
    const lexical = one.lexicalOf(need)
    return (
      lexical !== root.logicalRoot && isInside(path, root.logicalRoot, lexical) && store.grantsBelow(need.action, path.dirname(lexical))
    )
  }
  const { authorize, authorizeThen } = bothPhasesOf(noFollow, one, two, promised)
  return {
    root,
    path,
    atomic,
    normalize,
    run,
    runPath,
    resolve: one.resolve,
    lexicalOf: one.lexicalOf,
    authorize,
    authorizeThen,
    phaseOne: one.phaseOne,
    entry: two.entry,
    conceal: two.conceal,
    check: store.check,
    decide: store.decide,
    grantsBelow: store.grantsBelow,
    deny,
    methodOf
  }
}
