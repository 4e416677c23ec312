/**
 * The guarded file system: every method of Effect's `FileSystem`, authorized (see `authorize.ts`)
 * and then performed as one executor request on the path the caller gave, normalized against the
 * workspace root, exactly as the client's kernel sends it. A no-follow executor then refuses any
 * link on that path itself.
 *
 * Methods no executor request expresses are delegated to an isolated volume when the host is one,
 * and refused otherwise, as the client refuses them; except where pinnedfs performs them from
 * executor requests alone (`copy` and `copyFile` of a regular file, temporary entries inside a
 * named directory), which docs/kernel.md lists.
 *
 * @internal
 */
import { Effect, FileSystem, PlatformError, Result, Sink, Stream } from "effect"
import type { AtomicRequest } from "../../protocol/wire.ts"
import type { Action } from "../Permission.ts"
import type { Authorizer } from "./authorize.ts"
import { openIsolated } from "./isolatedOpen.ts"
import { type Listed, readable } from "./listing.ts"
import { globPrefix, isInside, logicalOf } from "./paths.ts"
import { unavailable } from "./refusing.ts"
import { captured } from "./snapshot.ts"
import { checkTempOptions, makeTempIn, tempDirectoryMode, type TempOptions } from "./temp.ts"
import { authorizeTree, entriesBelow } from "./tree.ts"

const badArgument = (method: string, description: string) =>
  PlatformError.badArgument({ module: "FileSystem", method, description })

/** A path argument: a string without NUL, or a `BadArgument` failure. */
const pathArgument = (method: string, value: unknown, what = "path"): Effect.Effect<string, PlatformError.PlatformError> =>
  typeof value !== "string"
    ? Effect.fail(badArgument(method, `${what} must be a string`))
    : value.includes("\0")
    ? Effect.fail(badArgument(method, `${what} must not contain a NUL byte`))
    : Effect.succeed(value)

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

const contentTooLarge = (method: string, size: number, limit: number) =>
  badArgument(method, `${method} payload of ${size} bytes exceeds the ${limit} byte limit advertised by the host`)

/** @internal */
export const makeGuarded = (options: {
  readonly auth: Authorizer
  /** The name a temporary entry made without a `directory` is authorized as. */
  readonly systemTemp: string
}): FileSystem.FileSystem => {
  const { auth, systemTemp } = options
  const { atomic, path, root, run } = auth
  const { logicalRoot } = root
  const isolated = atomic.isolated
  const limit = atomic.contentLimit

  /** A path argument normalized against the workspace root. */
  const argument = (method: string, value: unknown, what?: string) =>
    Effect.map(pathArgument(method, value, what), (checked) => auth.normalize(checked))

  const refuse = (action: Action, method: string, value: unknown) =>
    Effect.flatMap(argument(method, value), (normalized) => Effect.fail(unavailable(action, method, normalized)))

  /** Authorizes one path, then runs the request built on its normalized spelling. */
  const one = <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) =>
    Effect.flatMap(argument(method, value), (normalized) =>
      Effect.andThen(auth.authorize([{ action, value: normalized }]), use(normalized)))

  /** Two paths, in the client's order. */
  const two = <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) =>
    Effect.gen(function*() {
      const a = yield* argument(method, first[1])
      const b = yield* argument(method, second[1])
      yield* auth.authorize([{ action: first[0], value: a }, { action: second[0], value: b }])
      return yield* use(a, b)
    })

  /** A method only an isolated volume can perform: delegated after its checks, refused otherwise. */
  const isolatedOne = <A>(
    action: Action,
    method: string,
    value: unknown,
    use: (host: FileSystem.FileSystem, normalized: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => isolated === undefined ? refuse(action, method, value) : one(action, method, value, (normalized) => use(isolated, normalized))

  const isolatedTwo = <A>(
    first: readonly [Action, unknown],
    second: readonly [Action, unknown],
    method: string,
    use: (host: FileSystem.FileSystem, a: string, b: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => isolated === undefined ? refuse(first[0], method, first[1]) : two(first, second, method, (a, b) => use(isolated, a, b))

  const options_ = <T>(method: string, value: T) => captured(method, value)

  /** The resource an absolute path names (logical spelling), or `undefined` outside the workspace. */
  const inWorkspace = (absolutePath: string) => {
    const resource = logicalOf(path, root, absolutePath)
    return isInside(path, logicalRoot, resource) ? resource : undefined
  }

  /** What a listing may show (see `listing.ts`). */
  const shown = <A>(base: string, listed: ReadonlyArray<Listed<A>>) =>
    readable({ path, base: logicalOf(path, root, base), listed, decide: (resource) => auth.decide("fs:read", resource) })

  const shownNames = (directory: string, names: ReadonlyArray<string>) =>
    shown(directory, names.map((name) => ({ item: name, resource: inWorkspace(path.join(directory, name)) })))

  const treeDecide = (action: Action, resource: string) => auth.decide(action, resource)

  // --- temporary entries -------------------------------------------------------------------

  const tempContext = {
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

  type TempMethod = "makeTempDirectory" | "makeTempDirectoryScoped" | "makeTempFile" | "makeTempFileScoped"

  /** Either temporary method, unscoped: what it made and how to remove it. */
  const makeTemp = (method: TempMethod, raw: TempOptions | undefined, file: boolean) =>
    Effect.gen(function*() {
      const checked = yield* Effect.flatMap(options_(method, raw), (copy) => checkTempOptions(method, copy))
      if (isolated !== undefined) {
        const directory = checked?.directory
        const normalized = directory === undefined ? systemTemp : auth.normalize(directory)
        yield* auth.authorize([{ action: "fs:write", value: normalized }])
        const delegated = directory === undefined ? checked : { ...checked, directory: normalized }
        return yield* (file ? isolated.makeTempFile(delegated) : isolated.makeTempDirectory(delegated))
      }
      if (checked?.directory === undefined) return yield* Effect.fail(unavailable("fs:write", method, systemTemp))
      const directory = yield* argument(method, checked.directory, "directory")
      return yield* makeTempIn(tempContext, directory, checked, file)
    })

  /** Removes what a scoped temporary made: the directory it created, nothing above it. */
  const cleanup = (made: string) => Effect.ignore(tempContext.remove(made))

  const scopedTemp = (method: TempMethod, raw: TempOptions | undefined, file: boolean) => {
    if (isolated !== undefined) {
      // The volume's own scoped form removes what it made, on the volume.
      return Effect.gen(function*() {
        const checked = yield* Effect.flatMap(options_(method, raw), (copy) => checkTempOptions(method, copy))
        const directory = checked?.directory
        const normalized = directory === undefined ? systemTemp : auth.normalize(directory)
        yield* auth.authorize([{ action: "fs:write", value: normalized }])
        const delegated = directory === undefined ? checked : { ...checked, directory: normalized }
        return yield* (file ? isolated.makeTempFileScoped(delegated) : isolated.makeTempDirectoryScoped(delegated))
      })
    }
    return Effect.acquireRelease(
      makeTemp(method, raw, file),
      // A file's fragments were checked: its parent is the directory made for it, nothing else.
      (made) => cleanup(file ? path.dirname(made) : made)
    )
  }

  // --- copies from executor requests ------------------------------------------------------------

  const copyOf = (method: "copy" | "copyFile", from: unknown, to: unknown, overwrite: boolean) =>
    two(["fs:read", from], ["fs:write", to], method, (source, target) =>
        Effect.gen(function*() {
          const info = yield* run({ operation: "stat", path: source })
          // Only a regular file is one read and one write; a tree would be many, each unguarded.
          if (info.type !== "File") return yield* Effect.fail(unavailable("fs:read", method, source))
          const bytes = yield* run({ operation: "readFile", path: source })
          if (limit !== undefined && bytes.byteLength > limit) {
            return yield* Effect.fail(contentTooLarge(method, bytes.byteLength, limit))
          }
          yield* run({
            operation: "writeFile",
            path: target,
            data: base64(bytes),
            options: { flag: overwrite ? "w" : "wx", mode: info.mode & 0o777 }
          })
        }))

  // --- listings --------------------------------------------------------------------------------

  const statTypes = (directory: string, names: ReadonlyArray<string>) => {
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
        )),
      (parts) => parts.flat()
    )
  }

  const glob = Effect.fn("FileSystem.glob")(function*(
    pattern: string,
    raw?: Parameters<FileSystem.FileSystem["glob"]>[1]
  ) {
    const checked = yield* pathArgument("glob", pattern, "pattern")
    const opts = yield* options_("glob", raw)
    const base = opts?.root === undefined ? logicalRoot : yield* argument("glob", opts.root, "root")
    const absolute = path.isAbsolute(checked)
    // Normalized before anything is asked, as the client normalizes it. `dot` is not carried by
    // the request: dropped, as the client drops it.
    const full = auth.normalize(checked, base)
    const exclude = opts?.exclude
    if (exclude !== undefined && (!Array.isArray(exclude) || exclude.some((e) => typeof e !== "string"))) {
      return yield* Effect.fail(badArgument("glob", "exclude must be an array of strings"))
    }
    yield* auth.authorize([{ action: "fs:read", value: full, glob: true }])
    const found = yield* run({
      operation: "glob",
      pattern: full,
      root: base,
      // Effect matches an exclude against the path as its walk spells it: relative for a relative
      // pattern, absolute for an absolute one, so the other kind can never match and is not sent
      // (the executor reads a relative exclude against `root`, as the pattern was).
      options: opts === undefined ? undefined : { exclude: (exclude ?? []).filter((e) => e.startsWith("/") === absolute) }
    })
    return yield* shown(
      globPrefix(path, root, full).prefix,
      found.map((entry) => ({ item: entry, resource: inWorkspace(entry) }))
    )
  })

  // --- the service -----------------------------------------------------------------------------

  const readPath = <R extends AtomicRequest>(method: string, value: unknown, request: (normalized: string) => R) =>
    one("fs:read", method, value, (normalized) => run(request(normalized)))
  const writePath = <R extends AtomicRequest>(method: string, value: unknown, request: (normalized: string) => R) =>
    one("fs:write", method, value, (normalized) => run(request(normalized)))

  const made = FileSystem.make({
    access: Effect.fn("FileSystem.access")((value, raw) =>
      Effect.flatMap(options_("access", raw), (opts) => isolatedOne("fs:read", "access", value, (host, p) => host.access(p, opts)))
    ),
    copy: Effect.fn("FileSystem.copy")((from, to, raw) =>
      Effect.flatMap(options_("copy", raw), (opts) =>
        isolated !== undefined
          ? isolatedTwo(["fs:read", from], ["fs:write", to], "copy", (host, a, b) => host.copy(a, b, opts))
          : opts?.preserveTimestamps === true
          ? refuse("fs:read", "copy", from)
          : copyOf("copy", from, to, opts?.overwrite === true))
    ),
    copyFile: Effect.fn("FileSystem.copyFile")((from, to) =>
      isolated !== undefined
        ? isolatedTwo(["fs:read", from], ["fs:write", to], "copyFile", (host, a, b) => host.copyFile(a, b))
        : copyOf("copyFile", from, to, true)
    ),
    chmod: Effect.fn("FileSystem.chmod")((value, mode) =>
      writePath("chmod", value, (p) => ({ operation: "chmod", path: p, options: { mode } }))
    ),
    chown: Effect.fn("FileSystem.chown")((value, uid, gid) =>
      writePath("chown", value, (p) => ({ operation: "chown", path: p, options: { uid, gid } }))
    ),
    link: Effect.fn("FileSystem.link")((from, to) =>
      isolatedTwo(["fs:read", from], ["fs:write", to], "link", (host, a, b) => host.link(a, b))
    ),
    lstat: Effect.fn("FileSystem.lstat")((value) =>
      isolated !== undefined
        ? one("fs:read", "lstat", value, (p) => isolated.lstat(p))
        // A no-follow executor's stat does not follow the last component: it is lstat.
        : readPath("lstat", value, (p) => ({ operation: "stat", path: p }))
    ),
    makeDirectory: Effect.fn("FileSystem.makeDirectory")((value, raw) =>
      Effect.flatMap(options_("makeDirectory", raw), (opts) =>
        writePath("makeDirectory", value, (p) => ({ operation: "makeDirectory", path: p, options: opts })))
    ),
    makeTempDirectory: Effect.fn("FileSystem.makeTempDirectory")((raw) => makeTemp("makeTempDirectory", raw, false)),
    makeTempDirectoryScoped: Effect.fn("FileSystem.makeTempDirectoryScoped")((raw) =>
      scopedTemp("makeTempDirectoryScoped", raw, false)
    ),
    makeTempFile: Effect.fn("FileSystem.makeTempFile")((raw) => makeTemp("makeTempFile", raw, true)),
    makeTempFileScoped: Effect.fn("FileSystem.makeTempFileScoped")((raw) => scopedTemp("makeTempFileScoped", raw, true)),
    open: Effect.fn("FileSystem.open")((value, raw) =>
      Effect.flatMap(options_("open", raw), (opts) =>
        isolated === undefined ? refuse("fs:read", "open", value) : Effect.flatMap(argument("open", value), (p) =>
          openIsolated({
            isolated,
            path: p,
            authorize: (action) => Effect.asVoid(auth.authorize([{ action, value: p }])),
            stale: (action) => auth.deny(action, p, "descriptor no longer names the resource at its authorized path")
          }, opts)))
    ),
    readDirectory: Effect.fn("FileSystem.readDirectory")((value, raw) =>
      Effect.flatMap(options_("readDirectory", raw), (opts) =>
        one("fs:read", "readDirectory", value, (p) =>
          Effect.flatMap(run({ operation: "readDirectory", path: p, options: opts }), (names) => shownNames(p, names))))
    ),
    readDirectoryEntries: Effect.fn("FileSystem.readDirectoryEntries")((value) =>
      one("fs:read", "readDirectoryEntries", value, (p) =>
        Effect.gen(function*() {
          const names = yield* shownNames(p, yield* run({ operation: "readDirectory", path: p }))
          const types = yield* statTypes(p, names)
          return names.map((name, i): FileSystem.DirectoryEntry => ({ name, type: types[i]! }))
        }))
    ),
    readFile: Effect.fn("FileSystem.readFile")((value) => readPath("readFile", value, (p) => ({ operation: "readFile", path: p }))),
    readLink: Effect.fn("FileSystem.readLink")((value) => readPath("readLink", value, (p) => ({ operation: "readLink", path: p }))),
    realPath: Effect.fn("FileSystem.realPath")((value) => readPath("realPath", value, (p) => ({ operation: "realPath", path: p }))),
    remove: Effect.fn("FileSystem.remove")((value, raw) =>
      Effect.flatMap(options_("remove", raw), (opts) =>
        one("fs:write", "remove", value, (p) =>
          Effect.gen(function*() {
            if (opts?.recursive === true) {
              // Everything below is removed too: everything below must be writable.
              const entries = yield* entriesBelow(run, p)
              const top = logicalOf(path, root, p)
              yield* authorizeTree({ path, method: "write", entries, questions: [{ action: "fs:write", top }], decide: treeDecide })
            }
            return yield* run({ operation: "remove", path: p, options: opts })
          })))
    ),
    rename: Effect.fn("FileSystem.rename")((from, to) =>
      two(["fs:write", from], ["fs:write", to], "rename", (source, target) =>
        Effect.gen(function*() {
          const old = logicalOf(path, root, source)
          const next = logicalOf(path, root, target)
          // A rename reads what it moves: content the caller may not read must not reappear under
          // a name it may. The whole moved tree is written at both names and read at the old one.
          yield* auth.check("fs:read", old)
          const entries = yield* entriesBelow(run, source)
          yield* authorizeTree({
            path,
            method: "write",
            entries,
            questions: [{ action: "fs:write", top: old }, { action: "fs:read", top: old }, { action: "fs:write", top: next }],
            decide: treeDecide
          })
          return yield* run({ operation: "rename", from: source, to: target })
        }))
    ),
    stat: Effect.fn("FileSystem.stat")((value) => readPath("stat", value, (p) => ({ operation: "stat", path: p }))),
    symlink: Effect.fn("FileSystem.symlink")((from, to) =>
      isolatedOne("fs:write", "symlink", to, (host, p) => host.symlink(from, p))
    ),
    truncate: Effect.fn("FileSystem.truncate")((value, length) =>
      isolatedOne("fs:write", "truncate", value, (host, p) => host.truncate(p, length))
    ),
    utimes: Effect.fn("FileSystem.utimes")((value, atime, mtime) =>
      isolatedOne("fs:write", "utimes", value, (host, p) => host.utimes(p, atime, mtime))
    ),
    watch: (value, raw) =>
      Stream.unwrap(
        Effect.fn("FileSystem.watch")(() =>
          Effect.flatMap(options_("watch", raw), (opts) =>
            isolatedOne("fs:read", "watch", value, (host, p) => Effect.succeed(host.watch(p, opts))))
        )()
      ),
    writeFile: Effect.fn("FileSystem.writeFile")((value, data, raw) =>
      Effect.gen(function*() {
        const opts = yield* options_("writeFile", raw)
        if (!(data instanceof Uint8Array)) return yield* Effect.fail(badArgument("writeFile", "data must be a Uint8Array"))
        const bytes = data.slice()
        if (isolated !== undefined) return yield* one("fs:write", "writeFile", value, (p) => isolated.writeFile(p, bytes, opts))
        // Measured before anything is encoded or asked: an oversized write is a typed BadArgument,
        // never a string the runtime cannot build.
        if (limit !== undefined && bytes.byteLength > limit) {
          return yield* Effect.fail(contentTooLarge("writeFile", bytes.byteLength, limit))
        }
        return yield* writePath("writeFile", value, (p) => ({ operation: "writeFile", path: p, data: base64(bytes), options: opts }))
      })
    )
  })

  return {
    ...made,
    glob,
    exists: Effect.fn("FileSystem.exists")((value) => readPath("exists", value, (p) => ({ operation: "exists", path: p }))),
    readFileString: Effect.fn("FileSystem.readFileString")((value, encoding) =>
      readPath("readFileString", value, (p) => ({ operation: "readFileString", path: p, encoding }))
    ),
    writeFileString: Effect.fn("FileSystem.writeFileString")((value, data, raw) =>
      Effect.flatMap(options_("writeFileString", raw), (opts) =>
        writePath("writeFileString", value, (p) => ({ operation: "writeFileString", path: p, data, options: opts })))
    ),
    stream: (value, raw) =>
      Stream.unwrap(
        Effect.fn("FileSystem.stream")(() =>
          Effect.flatMap(options_("stream", raw), (opts) =>
            isolatedOne("fs:read", "stream", value, (host, p) => Effect.succeed(host.stream(p, opts))))
        )()
      ),
    sink: (value, raw) =>
      Sink.unwrap(
        Effect.fn("FileSystem.sink")(() =>
          Effect.flatMap(options_("sink", raw), (opts) =>
            isolatedOne("fs:write", "sink", value, (host, p) => Effect.succeed(host.sink(p, opts))))
        )()
      )
  }
}
