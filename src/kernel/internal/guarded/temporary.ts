/**
 * The four `makeTemp*` methods. Over an isolated volume they are authorized as a write to the
 * directory named (or to the system-temp name when none is) and delegated. Over an executor a
 * temporary entry is made only inside a directory the caller names, from executor requests, each
 * entry really created asked for as its own write (see `temp.ts`); without a directory there is no
 * confined place to make it, so the request is refused.
 *
 * @internal
 */
import { Effect, type FileSystem } from "effect"
import { logicalOf } from "../paths.ts"
import { unavailable } from "../refusing.ts"
import { checkTempOptions, makeTempIn, tempDirectoryMode, type TempOptions } from "../temp.ts"
import type { Guard } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

type TempMethod = "makeTempDirectory" | "makeTempDirectoryScoped" | "makeTempFile" | "makeTempFileScoped"

/** What `temp.ts` needs from the executor, every request stamped with the pinned root. */
const tempContext = (guard: Guard) => {
  const { auth } = guard
  const { path, root, run } = auth
  return {
    path,
    authorizeDirectory: (directory: string) => Effect.asVoid(auth.authorize([{ action: "fs:write", value: directory }])),
    checkCreated: (entry: string) => auth.check("fs:write", logicalOf(path, root, entry)),
    makeDirectory: (at: string) =>
      Effect.andThen(
        run({ operation: "makeDirectory", path: at, options: { mode: tempDirectoryMode } }),
        // The umask may have narrowed the mode; it never widens it. Set it exactly.
        run({ operation: "chmod", path: at, options: { mode: tempDirectoryMode } })
      ),
    makeFile: (at: string) => run({ operation: "writeFile", path: at, data: "", options: { flag: "wx" } }),
    remove: (at: string) => run({ operation: "remove", path: at, options: { recursive: true } })
  }
}

/** The checked options, and over an isolated volume the directory as it is authorized and delegated. */
const isolatedTemp = (guard: Guard, method: TempMethod, raw: TempOptions | undefined) =>
  Effect.gen(function* () {
    const checked = yield* Effect.flatMap(guard.options(method, raw), (copy) => checkTempOptions(method, copy))
    const directory = checked?.directory
    const normalized = directory === undefined ? guard.systemTemp : guard.auth.normalize(directory)
    yield* guard.auth.authorize([{ action: "fs:write", value: normalized }])
    return directory === undefined ? checked : { ...checked, directory: normalized }
  })

/** Either temporary method, unscoped: what it made. */
const makeTemp = (guard: Guard, method: TempMethod, raw: TempOptions | undefined, file: boolean) =>
  Effect.gen(function* () {
    const isolated = guard.isolated
    if (isolated !== undefined) {
      const delegated = yield* isolatedTemp(guard, method, raw)
      return yield* file ? isolated.makeTempFile(delegated) : isolated.makeTempDirectory(delegated)
    }
    const checked = yield* Effect.flatMap(guard.options(method, raw), (copy) => checkTempOptions(method, copy))
    if (checked?.directory === undefined) return yield* Effect.fail(unavailable("fs:write", method, guard.systemTemp))
    const directory = yield* guard.argument(method, checked.directory, "directory")
    return yield* makeTempIn(tempContext(guard), directory, checked, file)
  })

const scopedTemp = (guard: Guard, method: TempMethod, raw: TempOptions | undefined, file: boolean) => {
  const isolated = guard.isolated
  if (isolated !== undefined) {
    // The volume's own scoped form removes what it made, on the volume.
    return Effect.flatMap(isolatedTemp(guard, method, raw), (delegated) =>
      file ? isolated.makeTempFileScoped(delegated) : isolated.makeTempDirectoryScoped(delegated)
    )
  }
  const { path } = guard.auth
  return Effect.acquireRelease(
    makeTemp(guard, method, raw, file),
    // Removes what a scoped temporary made: the directory it created, nothing above it. A file's
    // fragments were checked: its parent is the directory made for it, nothing else.
    (made) => Effect.ignore(tempContext(guard).remove(file ? path.dirname(made) : made))
  )
}

/**
 * @since 0.1.0
 * @internal
 */
export const makeTempDirectory = (guard: Guard): Method<"makeTempDirectory"> =>
  Effect.fn("FileSystem.makeTempDirectory")((raw) => makeTemp(guard, "makeTempDirectory", raw, false))

/**
 * @since 0.1.0
 * @internal
 */
export const makeTempDirectoryScoped = (guard: Guard): Method<"makeTempDirectoryScoped"> =>
  Effect.fn("FileSystem.makeTempDirectoryScoped")((raw) => scopedTemp(guard, "makeTempDirectoryScoped", raw, false))

/**
 * @since 0.1.0
 * @internal
 */
export const makeTempFile = (guard: Guard): Method<"makeTempFile"> =>
  Effect.fn("FileSystem.makeTempFile")((raw) => makeTemp(guard, "makeTempFile", raw, true))

/**
 * @since 0.1.0
 * @internal
 */
export const makeTempFileScoped = (guard: Guard): Method<"makeTempFileScoped"> =>
  Effect.fn("FileSystem.makeTempFileScoped")((raw) => scopedTemp(guard, "makeTempFileScoped", raw, true))
