/**
 * `open` over an isolated volume, or over an executor whose extension opens beneath its pinned root
 * itself (`openPinned.ts`). Over any other host `open` is refused: opening a host path and checking
 * it afterwards is the window the executor exists to close.
 *
 * The flag decides the checks (read, write, or read then write). The handle is `stat`ed the moment it
 * exists, and the `dev:ino` it reports is what the authorization binds: every later operation on the
 * handle authorizes its path again and then confirms the path still names that same file. Rechecking
 * the path alone would authorize whatever now lives there and then act on the old handle. A volume
 * that reports no inode has no such evidence; its attestation is its boundary. An executor's handle
 * always has one, and is refused without it.
 *
 * @internal
 */
import { Effect, FileSystem, Option, type PlatformError, type Scope } from "effect"
import type { Action } from "../Permission.ts"

const readable: ReadonlySet<FileSystem.OpenFlag> = new Set(["r", "r+", "w+", "wx+", "a+", "ax+"])
const writable: ReadonlySet<FileSystem.OpenFlag> = new Set(["r+", "w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"])

/** The checks a flag needs, read first when it needs both. @internal */
export const actionsOf = (flag: FileSystem.OpenFlag): ReadonlyArray<Action> =>
  readable.has(flag) && writable.has(flag) ? ["fs:read", "fs:write"] : writable.has(flag) ? ["fs:write"] : ["fs:read"]

/** The `dev:ino` a handle binds: a regular file's, when the volume reports an inode. @internal */
export const boundIdentity = (info: FileSystem.File.Info): Option.Option<string> =>
  info.type === "File" ? Option.map(info.ino, (ino) => `${info.dev}:${ino}`) : Option.none()

/** @internal */
export interface OpenContext {
  /** Stats the path now (no link followed), to compare with the bound identity. */
  readonly stat: (path: string) => Effect.Effect<FileSystem.File.Info, PlatformError.PlatformError>
  /** Opens the path (the checks of its flag already passed). */
  readonly open: (
    options: { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined
  ) => Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope>
  /** A handle with no inode to bind is refused rather than trusted (an executor's must have one). */
  readonly requireIdentity?: boolean | undefined
  /** The caller's path, normalized. */
  readonly path: string
  /** Authorizes the path for one action (both phases). */
  readonly authorize: (action: Action) => Effect.Effect<void, PlatformError.PlatformError>
  /** The refusal for a handle whose path no longer names its file. */
  readonly stale: (action: Action) => PlatformError.PlatformError
}

/** Authorizes the path for `action`, then confirms it still names the bound file. @internal */
const admit = (context: OpenContext, action: Action, bound: Option.Option<string>) =>
  Effect.suspend(() =>
    Effect.andThen(
      context.authorize(action),
      Option.match(bound, {
        onNone: () => Effect.void,
        onSome: (identity) =>
          context.stat(context.path).pipe(
            Effect.matchEffect({
              onFailure: () => Effect.fail(context.stale(action)),
              onSuccess: (info) =>
                Option.match(boundIdentity(info), {
                  onNone: () => Effect.fail(context.stale(action)),
                  onSome: (now) => (now === identity ? Effect.void : Effect.fail(context.stale(action)))
                })
            })
          )
      })
    )
  )

/** The handle, every operation admitted before it reaches the volume's own handle. @internal */
const wrap = (context: OpenContext, file: FileSystem.File, bound: Option.Option<string>): FileSystem.File => {
  const reading = admit(context, "fs:read", bound)
  const writing = admit(context, "fs:write", bound)
  return {
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    stat: Effect.fn("FileSystem.File.stat")(() => Effect.andThen(reading, file.stat))(),
    seek: Effect.fn("FileSystem.File.seek")(file.seek),
    sync: Effect.fn("FileSystem.File.sync")(() => Effect.andThen(writing, file.sync))(),
    read: Effect.fn("FileSystem.File.read")((buffer, options) => Effect.andThen(reading, file.read(buffer, options))),
    readAlloc: Effect.fn("FileSystem.File.readAlloc")((size, options) => Effect.andThen(reading, file.readAlloc(size, options))),
    truncate: Effect.fn("FileSystem.File.truncate")((length) => Effect.andThen(writing, file.truncate(length))),
    write: Effect.fn("FileSystem.File.write")((buffer) => Effect.andThen(writing, file.write(buffer))),
    writeAll: Effect.fn("FileSystem.File.writeAll")((buffer) => Effect.andThen(writing, file.writeAll(buffer)))
  }
}

/** Opens through the volume (or executor) after the flag's checks, binding the handle to what it opened. @internal */
export const openBound = (
  context: OpenContext,
  options: { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined
): Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope> =>
  Effect.gen(function* () {
    for (const action of actionsOf(options?.flag ?? "r")) yield* context.authorize(action)
    const file = yield* context.open(options)
    const bound = boundIdentity(yield* file.stat)
    if (context.requireIdentity === true && Option.isNone(bound)) return yield* Effect.fail(context.stale("fs:read"))
    return wrap(context, file, bound)
  })
