/**
 * What every method of the guarded file system is built from: the authorizer, the caller's
 * arguments checked and normalized against the workspace root, and the four shapes an operation
 * takes (one path, two paths, and each of those performed by an isolated volume). Built once per
 * guarded service, so each concern module (`single.ts`, `listings.ts`, `wholeTrees.ts`, …) reads
 * as Effect's own `NodeFileSystem` does: one small function per method over one shared context.
 *
 * @internal
 */
import { Effect, type FileSystem, type PlatformError } from "effect"
import { badArgument } from "../../../protocol/errors.ts"
import type { Action } from "../../Permission.ts"
import type { Authorizer } from "../authorize.ts"
import { isInside, logicalOf, plainlyBelowLogicalRoot } from "../paths.ts"
import { unavailable } from "../refusing.ts"
import { captured } from "../snapshot.ts"

/**
 * A `BadArgument` from the file system module, naming the method: the one factory every executor
 * uses, so a guarded method's malformed argument fails as an executor's does.
 *
 * @since 0.1.0
 * @internal
 */
export { badArgument } from "../../../protocol/errors.ts"

/**
 * A path argument: a string without NUL, or a `BadArgument` failure.
 *
 * @since 0.1.0
 * @internal
 */
export const pathArgument = (method: string, value: unknown, what = "path"): Effect.Effect<string, PlatformError.PlatformError> =>
  typeof value !== "string"
    ? Effect.fail(badArgument(method, `${what} must be a string`))
    : value.includes("\0")
      ? Effect.fail(badArgument(method, `${what} must not contain a NUL byte`))
      : Effect.succeed(value)

/**
 * Bytes as the wire carries them.
 *
 * @since 0.1.0
 * @internal
 */
export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

/**
 * Refuses content larger than the host says one request can carry.
 *
 * @since 0.1.0
 * @internal
 */
export const contentTooLarge = (method: string, size: number, limit: number) =>
  badArgument(method, `${method} payload of ${size} bytes exceeds the ${limit} byte limit advertised by the host`)

/**
 * The shared context of one guarded file system.
 *
 * @since 0.1.0
 * @internal
 */
export interface Guard {
  readonly auth: Authorizer
  /** The name a temporary entry made without a `directory` is authorized as. */
  readonly systemTemp: string
  /** The host itself when it is an attested isolated volume. */
  readonly isolated: FileSystem.FileSystem | undefined
  /** The largest content one request may carry, when the host advertises one. */
  readonly limit: number | undefined
  /** A path argument normalized against the workspace root. */
  readonly argument: (method: string, value: unknown, what?: string) => Effect.Effect<string, PlatformError.PlatformError>
  /** The caller's options copied at the call (see `snapshot.ts`). */
  readonly options: <T>(method: string, value: T) => Effect.Effect<T, PlatformError.PlatformError>
  /** A method no executor request expresses: refused after its path argument is checked. */
  readonly refuse: (action: Action, method: string, value: unknown) => Effect.Effect<never, PlatformError.PlatformError>
  /** Authorizes one path, then runs the request built on its normalized spelling. */
  readonly one: <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.Effect<A, PlatformError.PlatformError>
  /** Two paths, authorized in the client's order. */
  readonly two: <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.Effect<A, PlatformError.PlatformError>
  /** A method only an isolated volume can perform: delegated after its checks, refused otherwise. */
  readonly isolatedOne: <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (host: FileSystem.FileSystem, normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.Effect<A, PlatformError.PlatformError>
  readonly isolatedTwo: <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (host: FileSystem.FileSystem, a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.Effect<A, PlatformError.PlatformError>
  /** The resource an absolute path names (logical spelling), or `undefined` outside the workspace. */
  readonly inWorkspace: (absolutePath: string) => string | undefined
}

/**
 * @since 0.1.0
 * @internal
 */
export const makeGuard = (options: { readonly auth: Authorizer; readonly systemTemp: string }): Guard => {
  const { auth, systemTemp } = options
  const { atomic, path, root } = auth
  const isolated = atomic.isolated

  const argument = (method: string, value: unknown, what?: string) =>
    Effect.map(pathArgument(method, value, what), (checked) => auth.normalize(checked))

  const refuse = (action: Action, method: string, value: unknown) =>
    Effect.flatMap(argument(method, value), (normalized) => Effect.fail(unavailable(action, method, normalized)))

  const one = <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) =>
    Effect.flatMap(argument(method, value), (normalized) =>
      Effect.andThen(auth.authorize([{ action, value: normalized }]), use(normalized))
    )

  const two = <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) =>
    Effect.gen(function* () {
      const a = yield* argument(method, first[1])
      const b = yield* argument(method, second[1])
      yield* auth.authorize([
        { action: first[0], value: a },
        { action: second[0], value: b }
      ])
      return yield* use(a, b)
    })

  const isolatedOne = <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (host: FileSystem.FileSystem, normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => (isolated === undefined ? refuse(action, method, value) : one(action, method, value, (normalized) => use(isolated, normalized)))

  const isolatedTwo = <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (host: FileSystem.FileSystem, a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => (isolated === undefined ? refuse(first[0], method, first[1]) : two(first, second, method, (a, b) => use(isolated, a, b)))

  const inWorkspace = (absolutePath: string) => {
    // The common case, a listed name below the workspace as the program spells it, needs no arithmetic.
    if (plainlyBelowLogicalRoot(root, absolutePath)) return absolutePath
    const resource = logicalOf(path, root, absolutePath)
    return isInside(path, root.logicalRoot, resource) ? resource : undefined
  }

  return {
    auth,
    systemTemp,
    isolated,
    limit: atomic.contentLimit,
    argument,
    options: captured,
    refuse,
    one,
    two,
    isolatedOne,
    isolatedTwo,
    inWorkspace
  }
}
