/**
 * The grant-free view `confined(fs, root)` builds: every path method is one executor request
 * against the root pinned here, the path sent as the caller gave it (normalized against that root),
 * with nothing asked and nothing resolved first: the executor confines. Every method that is not
 * one such request is refused.
 *
 * @internal
 */
import { Effect, FileSystem, type Path, PlatformError, Result, Sink, Stream } from "effect"
import type { AtomicFileSystem, AtomicRequest, AtomicResult } from "../../protocol/wire.ts"
import type { Root } from "../../protocol/root.ts"
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
  const made = FileSystem.make({
    access: (value) => refuse("access", value),
    copy: (from) => refuse("copy", from),
    copyFile: (from) => refuse("copyFile", from),
    chmod: (value, mode) => on("chmod", value, (p) => ({ operation: "chmod", path: p, options: { mode } })),
    chown: (value, uid, gid) => on("chown", value, (p) => ({ operation: "chown", path: p, options: { uid, gid } })),
    link: (from) => refuse("link", from),
    lstat: (value) => on("lstat", value, (p) => ({ operation: "stat", path: p })),
    makeDirectory: (value, options) => on("makeDirectory", value, (p) => ({ operation: "makeDirectory", path: p, options })),
    makeTempDirectory: () => refuse("makeTempDirectory", logicalRoot),
    makeTempDirectoryScoped: () => refuse("makeTempDirectoryScoped", logicalRoot),
    makeTempFile: () => refuse("makeTempFile", logicalRoot),
    makeTempFileScoped: () => refuse("makeTempFileScoped", logicalRoot),
    open: (value) => refuse("open", value),
    readDirectory: (value, options) => on("readDirectory", value, (p) => ({ operation: "readDirectory", path: p, options })),
    readDirectoryEntries: (value) =>
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
    readFile: (value) => on("readFile", value, (p) => ({ operation: "readFile", path: p })),
    readLink: (value) => on("readLink", value, (p) => ({ operation: "readLink", path: p })),
    realPath: (value) => on("realPath", value, (p) => ({ operation: "realPath", path: p })),
    remove: (value, options) => on("remove", value, (p) => ({ operation: "remove", path: p, options })),
    rename: (from, to) =>
      Effect.flatMap(at("rename", from), (a) => Effect.flatMap(at("rename", to), (b) => run({ operation: "rename", from: a, to: b }))),
    stat: (value) => on("stat", value, (p) => ({ operation: "stat", path: p })),
    symlink: (_from, to) => refuse("symlink", to),
    truncate: (value) => refuse("truncate", value),
    utimes: (value) => refuse("utimes", value),
    watch: (value) => Stream.fail(unconfined("watch", typeof value === "string" ? path.resolve(logicalRoot, value) : logicalRoot)),
    writeFile: (value, data, options) => {
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
  })
  return {
    ...made,
    glob: (pattern, options) =>
      Effect.gen(function* () {
        const base = options?.root === undefined ? logicalRoot : yield* at("glob", options.root)
        const full = path.resolve(base, yield* checked("glob", pattern))
        const absolute = path.isAbsolute(pattern)
        // The same request the guarded layer sends (see its glob for which excludes can match).
        return yield* run({
          operation: "glob",
          pattern: full,
          root: base,
          options: options === undefined ? undefined : { exclude: (options.exclude ?? []).filter((e) => e.startsWith("/") === absolute) }
        })
      }),
    exists: (value) => on("exists", value, (p) => ({ operation: "exists", path: p })),
    readFileString: (value, encoding) => on("readFileString", value, (p) => ({ operation: "readFileString", path: p, encoding })),
    writeFileString: (value, data, options) =>
      on("writeFileString", value, (p) => ({ operation: "writeFileString", path: p, data, options })),
    stream: (value) => Stream.fail(unconfined("stream", typeof value === "string" ? path.resolve(logicalRoot, value) : logicalRoot)),
    sink: (value) => Sink.fail(unconfined("sink", typeof value === "string" ? path.resolve(logicalRoot, value) : logicalRoot))
  }
}
