/**
 * The methods that are one executor request on one path: authorized, then sent on the caller's
 * path normalized against the workspace root, exactly as the client's kernel sends them. A
 * no-follow executor refuses any link on that path itself, so what the request acts on is what
 * was authorized. The regular ones are made from the methods table (`../methods.ts`) over the
 * three shapes here (a read, a fused read, a write); the bodies below are the irregular ones: a
 * `stat` that describes a final link, `exists` answered by a `stat`, and `writeFile`'s payload.
 *
 * @internal
 */
import { Effect, type FileSystem, type PlatformError, Result } from "effect"
import type { AtomicRequest } from "../../../protocol/wire.ts"
import { traced } from "../traced.ts"
import { badArgument, base64, contentTooLarge, type Guard } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

/**
 * A read of one path: the request built on its normalized spelling.
 *
 * @since 0.1.0
 * @internal
 */
export const readPath = <R extends AtomicRequest>(guard: Guard, method: string, value: unknown, request: (normalized: string) => R) =>
  guard.one("fs:read", method, value, (normalized) => guard.auth.run(request(normalized)))

/**
 * A read whose request refuses every link it meets: the authorizer may let it stand in for the
 * client's second resolution (see `authorizeThen`), one executor trip fewer with the same
 * questions and answers. Its success is the answer; any failure hands over to the full protocol.
 *
 * @since 0.1.0
 * @internal
 */
export const fusedReadPath = <R extends AtomicRequest>(guard: Guard, method: string, value: unknown, request: (normalized: string) => R) =>
  Effect.flatMap(guard.argument(method, value), (normalized) => {
    const read = guard.auth.run(request(normalized))
    return guard.auth.authorizeThen({ action: "fs:read", value: normalized }, read, successOnly, read)
  })

const successOnly = <A>(outcome: Result.Result<A, PlatformError.PlatformError>) => (Result.isSuccess(outcome) ? outcome : undefined)

/** A no-follow `stat` describes a final link instead of refusing it. */
const isLink = (info: FileSystem.File.Info) => info.type === "SymbolicLink"

/** A no-follow lookup that missed a component: it runs in order, so it met no link before it. */
const isMissing = (error: PlatformError.PlatformError) => error.reason._tag === "NotFound"

/** A `stat` of one path, fused (see `authorizeThen`): its description of anything but a link, or its `NotFound`, is the answer. */
const fusedStat = (guard: Guard, method: string, value: unknown) =>
  Effect.flatMap(guard.argument(method, value), (normalized) => {
    const look = guard.auth.runPath("stat", normalized)
    return guard.auth.authorizeThen(
      { action: "fs:read", value: normalized },
      look,
      (outcome) =>
        Result.isSuccess(outcome) ? (isLink(outcome.success) ? undefined : outcome) : isMissing(outcome.failure) ? outcome : undefined,
      look
    )
  })

/**
 * A write of one path.
 *
 * @since 0.1.0
 * @internal
 */
export const writePath = <R extends AtomicRequest>(guard: Guard, method: string, value: unknown, request: (normalized: string) => R) =>
  guard.one("fs:write", method, value, (normalized) => guard.auth.run(request(normalized)))

/**
 * @since 0.1.0
 * @internal
 */
export const stat = (guard: Guard): Method<"stat"> => traced("FileSystem.stat", (value: string) => fusedStat(guard, "stat", value))

/**
 * @since 0.1.0
 * @internal
 */
export const lstat = (guard: Guard): Method<"lstat"> =>
  traced("FileSystem.lstat", (value: string) => {
    const isolated = guard.isolated
    return isolated !== undefined
      ? guard.one("fs:read", "lstat", value, (p) => isolated.lstat(p))
      : // A no-follow executor's stat does not follow the last component: it is lstat.
        fusedStat(guard, "lstat", value)
  })

/**
 * @since 0.1.0
 * @internal
 */
export const exists = (guard: Guard): Method<"exists"> =>
  traced("FileSystem.exists", (value: string) =>
    Effect.flatMap(guard.argument("exists", value), (normalized) =>
      // `exists` answers `true` for a final link without saying so: a `stat`, which does say so, is
      // the attempt, and the `exists` request is sent only by the full protocol.
      guard.auth.authorizeThen(
        { action: "fs:read", value: normalized },
        guard.auth.runPath("stat", normalized),
        (outcome) =>
          Result.isSuccess(outcome)
            ? isLink(outcome.success)
              ? undefined
              : Result.succeed(true)
            : isMissing(outcome.failure)
              ? Result.succeed(false)
              : undefined,
        guard.auth.runPath("exists", normalized)
      )
    )
  )

/**
 * @since 0.1.0
 * @internal
 */
export const writeFile = (guard: Guard): Method<"writeFile"> =>
  Effect.fn("FileSystem.writeFile")((value, data, raw) =>
    Effect.gen(function* () {
      const { isolated, limit } = guard
      const opts = yield* guard.options("writeFile", raw)
      if (!(data instanceof Uint8Array)) return yield* Effect.fail(badArgument("writeFile", "data must be a Uint8Array"))
      const bytes = data.slice()
      if (isolated !== undefined) {
        return yield* guard.one("fs:write", "writeFile", value, (p) => isolated.writeFile(p, bytes, opts))
      }
      // Measured before anything is encoded or asked: an oversized write is a typed BadArgument,
      // never a string the runtime cannot build.
      if (limit !== undefined && bytes.byteLength > limit) {
        return yield* Effect.fail(contentTooLarge("writeFile", bytes.byteLength, limit))
      }
      return yield* writePath(guard, "writeFile", value, (p) => ({
        operation: "writeFile",
        path: p,
        data: base64(bytes),
        options: opts
      }))
    })
  )
