/**
 * `readDirectory`, `readDirectoryEntries` and `glob`: the listing is authorized as one read (the
 * directory, or a glob's literal prefix), as the client's kernel authorizes it, then filtered by
 * the read grants so that a name the caller may not read is not shown (see `listing.ts`).
 *
 * @internal
 */
import { Effect, type FileSystem, type PlatformError, Result } from "effect"
import { readable, readableNames } from "../listing.ts"
import { childOf, globPrefix, logicalOf } from "../paths.ts"
import { badArgument, type Guard, pathArgument } from "./context.ts"

type Method<K extends keyof FileSystem.FileSystem> = FileSystem.FileSystem[K]

/** What a listing of `base` may show. */
const shown = <A>(guard: Guard, base: string, items: ReadonlyArray<A>, resourceOf: (item: A) => string | undefined) => {
  const { auth } = guard
  return readable({
    path: auth.path,
    base: logicalOf(auth.path, auth.root, base),
    items,
    resourceOf,
    decide: (resource) => auth.decide("fs:read", resource),
    grantsBelow: (directory) => auth.grantsBelow("fs:read", directory)
  })
}

/**
 * The names of a listing of `directory` the caller may read, in their order.
 *
 * @since 0.1.0
 * @internal
 */
export const shownNames = (guard: Guard, directory: string, names: ReadonlyArray<string>) =>
  readableNames({
    path: guard.auth.path,
    inside: guard.inWorkspace(directory),
    base: logicalOf(guard.auth.path, guard.auth.root, directory),
    names,
    resourceOf: (name) => guard.inWorkspace(childOf(guard.auth.path, directory, name)),
    decide: (resource) => guard.auth.decide("fs:read", resource),
    grantsBelow: (at) => guard.auth.grantsBelow("fs:read", at)
  })

/**
 * The type of each shown name, by one `stat` request each (no link followed: a link is a link),
 * in batches when the host has a batch protocol. A name that cannot be looked at is `Unknown`.
 */
const statTypes = (guard: Guard, directory: string, names: ReadonlyArray<string>) => {
  const { atomic, path, run } = guard.auth
  const typeOf = (r: Result.Result<FileSystem.File.Type, PlatformError.PlatformError>): FileSystem.File.Type =>
    Result.isSuccess(r) ? r.success : "Unknown"
  const size = atomic.batchLimits?.size
  if (size === undefined || names.length === 0) {
    return Effect.forEach(
      names,
      (name) => Effect.map(Effect.result(Effect.map(run({ operation: "stat", path: path.join(directory, name) }), (i) => i.type)), typeOf),
      { concurrency: 16 }
    )
  }
  const chunks: Array<ReadonlyArray<string>> = []
  for (let i = 0; i < names.length; i += size) chunks.push(names.slice(i, i + size))
  return Effect.map(
    Effect.forEach(chunks, (chunk) =>
      Effect.map(
        run({ operation: "batch", requests: chunk.map((name) => ({ operation: "stat", path: path.join(directory, name) })) }),
        (out) => {
          const byIndex = new Map(out.entries.map((entry) => [entry.index, entry.result] as const))
          return chunk.map((_, i): FileSystem.File.Type => {
            const r = byIndex.get(i)
            return r !== undefined && Result.isSuccess(r) && r.success.operation === "stat" ? r.success.value.type : "Unknown"
          })
        }
      )
    ),
    (parts) => parts.flat()
  )
}

/**
 * @since 0.1.0
 * @internal
 */
export const readDirectory = (guard: Guard): Method<"readDirectory"> =>
  Effect.fn("FileSystem.readDirectory")((value, raw) =>
    Effect.flatMap(guard.options("readDirectory", raw), (opts) =>
      Effect.flatMap(guard.argument("readDirectory", value), (p) => {
        // A listing refuses every link on its path, the last component's included (it opens a
        // directory, never a link): it may stand in for the second resolution, as a read does (see
        // `authorizeThen`). Its names are filtered afterwards either way.
        const list = guard.auth.run({ operation: "readDirectory", path: p, options: opts })
        return Effect.flatMap(
          guard.auth.authorizeThen(
            { action: "fs:read", value: p },
            list,
            (outcome) => (Result.isSuccess(outcome) ? outcome : undefined),
            list
          ),
          (names) => shownNames(guard, p, names)
        )
      })
    )
  )

/**
 * @since 0.1.0
 * @internal
 */
export const readDirectoryEntries = (guard: Guard): Method<"readDirectoryEntries"> =>
  Effect.fn("FileSystem.readDirectoryEntries")((value) =>
    guard.one("fs:read", "readDirectoryEntries", value, (p) =>
      Effect.gen(function* () {
        const names = yield* shownNames(guard, p, yield* guard.auth.run({ operation: "readDirectory", path: p }))
        const types = yield* statTypes(guard, p, names)
        return names.map((name, i): FileSystem.DirectoryEntry => ({ name, type: types[i]! }))
      })
    )
  )

/**
 * @since 0.1.0
 * @internal
 */
export const glob = (guard: Guard): Method<"glob"> => {
  const { auth } = guard
  const { path, root } = auth
  return Effect.fn("FileSystem.glob")(function* (pattern: string, raw?: Parameters<FileSystem.FileSystem["glob"]>[1]) {
    const checked = yield* pathArgument("glob", pattern, "pattern")
    const opts = yield* guard.options("glob", raw)
    const base = opts?.root === undefined ? root.logicalRoot : yield* guard.argument("glob", opts.root, "root")
    const absolute = path.isAbsolute(checked)
    // Normalized before anything is asked, as the client normalizes it. `dot` is not carried by
    // the request: dropped, as the client drops it.
    const full = auth.normalize(checked, base)
    const exclude = opts?.exclude
    if (exclude !== undefined && (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string"))) {
      return yield* Effect.fail(badArgument("glob", "exclude must be an array of strings"))
    }
    yield* auth.authorize([{ action: "fs:read", value: full, glob: true }])
    const found = yield* auth.run({
      operation: "glob",
      pattern: full,
      root: base,
      // Effect matches an exclude against the path as its walk spells it: relative for a relative
      // pattern, absolute for an absolute one, so the other kind can never match and is not sent
      // (the executor reads a relative exclude against `root`, as the pattern was).
      options: opts === undefined ? undefined : { exclude: (exclude ?? []).filter((e) => e.startsWith("/") === absolute) }
    })
    return yield* shown(guard, globPrefix(path, root, full).prefix, found, guard.inWorkspace)
  })
}
