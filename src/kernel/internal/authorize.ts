/**
 * The authorization step every guarded operation shares: resolve the path to the resource it
 * names through the executor, ask the grant store, resolve again, and refuse when the path no
 * longer names what was authorized.
 *
 * @internal
 */
import { Effect, type FileSystem, type Path, PlatformError } from "effect"
import type { AtomicFileSystem, AtomicRequest, AtomicResult } from "../../effect/wire.ts"
import type { GrantStore } from "../GrantStore.ts"
import { type Action, PermissionDenied, toPlatformError } from "../Permission.ts"
import { canonicalResource, hardLinked, hardLinkGuard } from "./canonical.ts"
import { globPrefix, isInside, logicalOf, type PinnedRoot } from "./paths.ts"
import { type Refusal, resourceOf } from "./resolve.ts"

/**
 * How a path names its resource. `follow`: the whole path, links followed lexically (the
 * operation acts on what the path leads to). `leaf`: the parent followed, the last name kept (the
 * operation acts on the entry itself: `lstat`, `readLink`, `remove`, `rename`). `glob`: the
 * pattern's literal prefix followed, the pattern segments kept as written.
 *
 * @internal
 */
export type Mode = "follow" | "leaf" | "glob"

/** The authorization toolkit one guarded file system is built from. @internal */
export interface Authorizer {
  readonly root: PinnedRoot
  readonly path: Path.Path
  readonly atomic: AtomicFileSystem
  /** Absolute, normalized, read against the workspace root. */
  readonly normalize: (value: string, base?: string) => string
  /** Runs one request stamped with the pinned root. */
  readonly run: <R extends AtomicRequest>(request: R) => Effect.Effect<AtomicResult<R>, PlatformError.PlatformError>
  /** The resource `value` names, refused when it is outside the workspace or uninspectable. */
  readonly resource: (action: Action, method: string, value: string, mode: Mode) => Effect.Effect<string, PlatformError.PlatformError>
  /** Resolve, decide, resolve again: the authorized resource. */
  readonly guard: (action: Action, method: string, value: string, mode: Mode) => Effect.Effect<string, PlatformError.PlatformError>
  /** Asks the grant store alone, about a resource already resolved. */
  readonly check: (action: Action, method: string, resource: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly deny: (
    action: Action,
    method: string,
    resource: string,
    reason: string,
    cause?: unknown
  ) => PlatformError.PlatformError
}

const describeCause = (cause: unknown): string | undefined =>
  PlatformError.isPlatformError(cause)
    ? (cause.reason as { readonly description?: string | undefined }).description ?? cause.message
    : undefined

/** @internal */
export const makeAuthorizer = (options: {
  readonly path: Path.Path
  readonly root: PinnedRoot
  readonly atomic: AtomicFileSystem
  /** Absent for a confined view: paths are confined by the executor alone, nothing is asked. */
  readonly grants: GrantStore["Service"] | undefined
  /** The host `FileSystem`: asked for `realPath` when the executor does not resolve without following. */
  readonly host: FileSystem.FileSystem
}): Authorizer => {
  const { atomic, grants, path, root } = options
  const run = <R extends AtomicRequest>(request: R) =>
    atomic.execute<R>({
      ...request,
      boundaryRoot: root.boundaryRoot,
      logicalRoot: root.logicalRoot,
      rootIdentity: root.rootIdentity
    })
  const normalize = (value: string, base: string = root.logicalRoot) =>
    path.normalize(path.isAbsolute(value) ? value : path.resolve(base, value))
  const deny = (action: Action, method: string, resource: string, reason: string, cause?: unknown) => {
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
  const resolveOne = (boundaryPath: string) => run({ operation: "resolve", path: boundaryPath })
  const refused = (action: Action, method: string) => (refusal: Refusal) =>
    deny(action, method, refusal.resource, refusal.reason, refusal.cause)
  const inside = (action: Action, method: string) => (resource: string) =>
    isInside(path, root.logicalRoot, resource)
      ? Effect.succeed(resource)
      : Effect.fail(deny(action, method, resource, "path is outside the workspace"))

  const noFollow = atomic.noFollowAuthorization === true
  const resource = (action: Action, method: string, value: string, mode: Mode) => {
    const normalized = normalize(value)
    // A no-follow executor answers `resolve` from its pinned root; any other host is asked for
    // its own realPath, as the client's kernel asks it.
    const follow = (target: string) =>
      noFollow
        ? resourceOf(path, root, resolveOne, target).pipe(Effect.mapError(refused(action, method)))
        : canonicalResource(options.host, path, root.logicalRoot, target)
    let named: Effect.Effect<string, PlatformError.PlatformError>
    if (mode === "glob") {
      const { prefix, rest } = globPrefix(path, root, value)
      named = Effect.map(follow(prefix), (resolved) => rest.length === 0 ? resolved : `${resolved}/${rest.join("/")}`)
    } else if (mode === "leaf" && normalized !== path.dirname(normalized)) {
      const parent = path.dirname(normalized)
      const leaf = path.basename(normalized)
      // The root itself has no entry of its own to act on: it is resolved whole.
      named = normalized === root.logicalRoot || normalized === root.boundaryRoot
        ? follow(normalized)
        : Effect.map(follow(parent), (resolved) => path.join(resolved, leaf))
    } else {
      named = follow(normalized)
    }
    if (!noFollow) {
      // Such an executor does not refuse a hard-linked file itself: the kernel does.
      named = Effect.flatMap(named, (resolved) =>
        Effect.flatMap(hardLinked(options.host, normalized), (linked) =>
          linked ? Effect.fail(deny(action, method, resolved, hardLinkGuard)) : Effect.succeed(resolved)))
    }
    return Effect.flatMap(named, inside(action, method))
  }

  const check = (action: Action, method: string, resource: string) =>
    grants === undefined ? Effect.void : grants.check({ action, resource }).pipe(
      Effect.mapError((error) => toPlatformError({ method, error }))
    )

  /** The caller's own path in logical spelling, links not followed (for a glob: its pattern). */
  const lexicalOf = (value: string, mode: Mode) =>
    logicalOf(path, root, mode === "glob" ? path.normalize(globPrefix(path, root, value).full) : normalize(value))

  /**
   * A refusal must not tell the caller what is behind a path it is denied. Whenever the decision
   * was not the grant store's answer about the caller's own path (a link was followed, or the
   * resolution itself was refused), the store is asked about that path too; if it refuses it, that
   * refusal is the answer, whatever the disk holds. A caller granted its own path gets the first
   * refusal, details and all.
   */
  const concealing = (action: Action, method: string, lexical: string) =>
  (failure: PlatformError.PlatformError): Effect.Effect<never, PlatformError.PlatformError> =>
    isInside(path, root.logicalRoot, lexical)
      ? Effect.flatMap(check(action, method, lexical), () => Effect.fail(failure))
      : Effect.fail(failure)

  const guard = (action: Action, method: string, value: string, mode: Mode) =>
    grants === undefined ? inside(action, method)(logicalOf(path, root, normalize(value))) : Effect.gen(function*() {
      const lexical = lexicalOf(value, mode)
      const conceal = concealing(action, method, lexical)
      const before = yield* Effect.catch(resource(action, method, value, mode), conceal)
      const own = before === lexical
      yield* own ? check(action, method, before) : Effect.catch(check(action, method, before), conceal)
      // The decision may have waited on a person or a journal. What was granted is the resource
      // the path named when asked; if the path names another one now (a directory swapped for a
      // link, a rename), the grant does not carry over.
      // Once the store has answered about the caller's own path, there is nothing left to conceal.
      const settle = own ? Effect.fail : conceal
      const after = yield* Effect.catch(resource(action, method, value, mode), settle)
      if (after !== before) {
        return yield* settle(deny(action, method, before, "path no longer names the resource that was authorized"))
      }
      // The path the caller named is what it acts through: when it differs from what it resolved
      // to (a link on the way), it is asked about too.
      if (!own && isInside(path, root.logicalRoot, lexical)) yield* check(action, method, lexical)
      return before
    })

  return { root, path, atomic, normalize, run, resource, guard, check, deny }
}
