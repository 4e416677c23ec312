/**
 * The grant-free view `confined(fs, root)` builds: every path method is one executor request
 * against the root pinned here, the path sent as the caller gave it (normalized against that root),
 * with nothing asked and nothing resolved first: the executor confines. Every method that is not
 * one such request is refused. Derived from the methods table (`methods.ts`): its regular rows
 * are sent as they are, its refused rows refused; only the other irregular methods are written here.
 *
 * @internal
 */
import { Effect, FileSystem, type Path, PlatformError, Result, Sink, Stream } from "effect"
import type { Root } from "../../protocol/root.ts"
import type { AtomicFileSystem, AtomicRequest, AtomicResult, WriteOptions } from "../../protocol/wire.ts"
import { irregularBody, type MethodName, type MethodRow, methodNames, methods, requestOf, subjectOf } from "./methods.ts"
import { unconfined } from "./refusing.ts"

/** @internal */
export const makeConfinedView = (atomic: AtomicFileSystem, path: Path.Path, root: Root<string | undefined>): FileSystem.FileSystem => {
  const { logicalRoot } = root
  const run = <R extends AtomicRequest>(request: R): Effect.Effect<AtomicResult<R>, PlatformError.PlatformError> =>
    atomic.execute<R>({ ...request, boundaryRoot: root.boundaryRoot, logicalRoot, rootIdentity: root.rootIdentity })
  /** A path argument normalized against the root, or `BadArgument`. */
  const checked = (method: string, value: unknown): Effect.Effect<string, PlatformError.PlatformError> =>
    typeof value !== "string" || value.includes("\0")
      ? Effect.fail(PlatformError.badArgument({ module: "FileSystem", method, description: "path must be a string without NUL bytes" }))
      : Effect.succeed(value)
  const at = (method: string, value: unknown) => Effect.map(checked(method, value), (p) => path.resolve(logicalRoot, p))
  const on = <R extends AtomicRequest>(method: string, value: unknown, request: (p: string) => R) =>
    Effect.flatMap(at(method, value), (p) => run(request(p)))
  const refuse = (method: string, value: unknown) =>
    Effect.suspend(() => Effect.fail(unconfined(method, typeof value === "string" ? path.resolve(logicalRoot, value) : logicalRoot)))
  const limit = atomic.contentLimit
  // The methods that are not one executor request on one path, written out.
  const irregular: Partial<Record<MethodName, unknown>> = {
    exists: (value: unknown) => on("exists", value, (p) => ({ operation: "exists", path: p })),
    glob: (pattern: string, options?: Parameters<FileSystem.FileSystem["glob"]>[1]) =>
      Effect.gen(function* () {
        const base = options?.root === undefined ? logicalRoot : yield* at("glob", options.root)
        const full = path.resolve(base, yield* checked("glob", pattern))
        const absolute = path.isAbsolute(pattern)
        // The same request the guarded layer sends (see its glob for which excludes can match).
        return yield* run({
          operation: "glob",
          pattern: full,
          root: base,
          options:
            options === undefined ? undefined : { exclude: (options.exclude ?? []).filter((e: string) => e.startsWith("/") === absolute) }
        })
      }),
    // A no-follow executor's stat does not follow the last component: it is lstat.
    lstat: (value: unknown) => on("lstat", value, (p) => ({ operation: "stat", path: p })),
    readDirectory: (value: unknown, options?: { readonly recursive?: boolean | undefined }) =>
      on("readDirectory", value, (p) => ({ operation: "readDirectory", path: p, options })),
    readDirectoryEntries: (value: unknown) =>
      Effect.flatMap(at("readDirectoryEntries", value), (p) =>
        Effect.flatMap(run({ operation: "readDirectory", path: p }), (names) =>
          Effect.forEach(
            names,
            (name) =>
              Effect.map(
                Effect.result(run({ operation: "stat", path: path.join(p, name) })),
                (info): FileSystem.DirectoryEntry => ({ name, type: Result.isSuccess(info) ? info.success.type : "Unknown" })
              ),
            { concurrency: 16 }
          )
        )
      ),
    remove: (value: unknown, options?: { readonly recursive?: boolean | undefined; readonly force?: boolean | undefined }) =>
      on("remove", value, (p) => ({ operation: "remove", path: p, options })),
    rename: (from: unknown, to: unknown) =>
      Effect.flatMap(at("rename", from), (a) => Effect.flatMap(at("rename", to), (b) => run({ operation: "rename", from: a, to: b }))),
    stat: (value: unknown) => on("stat", value, (p) => ({ operation: "stat", path: p })),
    writeFile: (value: unknown, data: Uint8Array, options?: WriteOptions) => {
      if (limit !== undefined && data.byteLength > limit) {
        return Effect.fail(
          PlatformError.badArgument({
            module: "FileSystem",
            method: "writeFile",
            description: `writeFile payload of ${data.byteLength} bytes exceeds the ${limit} byte limit advertised by the host`
          })
        )
      }
      return on("writeFile", value, (p) => ({
        operation: "writeFile",
        path: p,
        data: Buffer.from(data.buffer, data.byteOffset, data.byteLength).toString("base64"),
        options
      }))
    }
  }
  const refused = (name: MethodName, row: MethodRow<MethodName>) => {
    // No grant store here: a temporary entry names the root it would be made under.
    const subject = (args: ReadonlyArray<unknown>) => (row.subject === "temporary" ? logicalRoot : subjectOf(row.subject, args))
    const named = (value: unknown) => unconfined(name, typeof value === "string" ? path.resolve(logicalRoot, value) : logicalRoot)
    return row.yields === "stream"
      ? (...args: ReadonlyArray<unknown>) => Stream.fail(named(subject(args)))
      : row.yields === "sink"
        ? (...args: ReadonlyArray<unknown>) => Sink.fail(named(subject(args)))
        : (...args: ReadonlyArray<unknown>) => refuse(name, subject(args))
  }
  const table: Record<string, unknown> = {}
  for (const name of methodNames) {
    const row: MethodRow<MethodName> = methods[name]
    table[name] =
      row.kind === "regular"
        ? (value: unknown, ...rest: ReadonlyArray<unknown>) => on(name, value, (p) => requestOf(row)(p, ...rest))
        : row.confined === "refused"
          ? refused(name, row)
          : irregularBody(irregular, name)
  }
  return { ...FileSystem.make(table as never), ...table } as FileSystem.FileSystem
}
