/**
 * Temporary files and directories made through the executor, inside a directory the caller names.
 *
 * A `prefix` or `suffix` is a fragment of one new name. Node's `mkdtemp` callers pass a name
 * fragment, and Node itself would happily treat `../x` or `a/b` as a path; here such a fragment is
 * refused, so the name made is always one entry directly inside the authorized directory. Each
 * thing really created (the directory, and for a file the file inside it) is asked for as its own
 * write before it is made, and a scoped form removes exactly the directory it made.
 *
 * @internal
 */
import * as Crypto from "node:crypto"
import { Effect, PlatformError } from "effect"

/** The options the temporary-file methods take. @internal */
export interface TempOptions {
  readonly directory?: string | undefined
  readonly prefix?: string | undefined
  readonly suffix?: string | undefined
}

/**
 * A name fragment is refused when it could make the name anything but one entry of its directory:
 * a separator (`/`, and `\` for a tree that may travel to Windows), `..` anywhere (a fragment has
 * no business spelling it, and refusing it whole leaves no edge to reason about), or NUL.
 */
const badFragment = (value: string): string | undefined =>
  value.includes("/") || value.includes("\\")
    ? "must not contain a path separator"
    : value.includes("..")
      ? "must not contain '..'"
      : value.includes("\0")
        ? "must not contain a NUL byte"
        : undefined

/**
 * The options, checked: `BadArgument` when a fragment is not a string or could name anything but
 * one new entry, or when `directory` is not a string.
 *
 * @internal
 */
export const checkTempOptions = (
  method: string,
  options: TempOptions | undefined
): Effect.Effect<TempOptions | undefined, PlatformError.PlatformError> => {
  if (options === undefined || options === null) return Effect.succeed(undefined)
  if (typeof options !== "object") {
    return Effect.fail(PlatformError.badArgument({ module: "FileSystem", method, description: "options must be an object" }))
  }
  for (const key of ["directory", "prefix", "suffix"] as const) {
    const value = options[key]
    if (value === undefined) continue
    if (typeof value !== "string") {
      return Effect.fail(PlatformError.badArgument({ module: "FileSystem", method, description: `${key} must be a string` }))
    }
    if (key === "directory") {
      if (value.includes("\0")) {
        return Effect.fail(
          PlatformError.badArgument({ module: "FileSystem", method, description: "directory must not contain a NUL byte" })
        )
      }
      continue
    }
    const bad = badFragment(value)
    if (bad !== undefined) {
      return Effect.fail(
        PlatformError.badArgument({
          module: "FileSystem",
          method,
          description: `${key} is a fragment of a file name and ${bad}`
        })
      )
    }
  }
  return Effect.succeed(options)
}

/** A fresh random name part (12 hex digits: collisions are refused, never reused). @internal */
export const randomPart = (): string => Crypto.randomBytes(6).toString("hex")

/** Mode of every temporary directory made: nobody else may enter it, as `mkdtemp` gives. @internal */
export const tempDirectoryMode = 0o700

/** What making a temporary entry through the executor needs. @internal */
export interface TempContext {
  readonly path: import("effect").Path.Path
  /** Authorizes the named directory (both phases) for writing. */
  readonly authorizeDirectory: (directory: string) => Effect.Effect<void, PlatformError.PlatformError>
  /** Asks the store about one entry about to be created (its logical spelling). */
  readonly checkCreated: (entry: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly makeDirectory: (at: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly makeFile: (at: string) => Effect.Effect<void, PlatformError.PlatformError>
  readonly remove: (at: string) => Effect.Effect<void, PlatformError.PlatformError>
}

/**
 * A fresh directory inside `directory` (absolute, normalized): the directory is authorized as the
 * client authorizes a write to it, then the entry about to be created is asked about as well, then
 * it is made (exclusive: a name taken fails) with mode 0700. A file, when asked for, is made inside
 * it the same way; if the file is refused, the empty directory made for it goes too.
 *
 * @internal
 */
export const makeTempIn = (
  context: TempContext,
  directory: string,
  options: TempOptions | undefined,
  file: boolean
): Effect.Effect<string, PlatformError.PlatformError> =>
  Effect.gen(function* () {
    yield* context.authorizeDirectory(directory)
    const made = context.path.join(directory, `${options?.prefix ?? ""}${randomPart()}`)
    yield* context.checkCreated(made)
    yield* context.makeDirectory(made)
    if (!file) return made
    const name = context.path.join(made, `${randomPart()}${options?.suffix ?? ""}`)
    yield* Effect.andThen(context.checkCreated(name), context.makeFile(name)).pipe(
      Effect.tapError(() => Effect.ignore(context.remove(made)))
    )
    return name
  })
