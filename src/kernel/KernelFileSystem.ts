/**
 * The permission kernel: a layer that takes the host's `FileSystem` out of context and puts a
 * guarded one in its place. Every path operation is authorized (the path resolved to the resource
 * it names through the executor's no-follow `resolve`, the grant store asked, the path resolved
 * again) and then executed as one request of the atomic host extension, stamped with the root that
 * was pinned when the layer was built.
 *
 * A host without the extension cannot confine anything: every method fails closed with
 * `PermissionDenied`, as the client's kernel does. Methods the wire protocol has no request for are
 * built from confined requests where that is safe (`open` and what derives from it, `truncate`,
 * `utimes`, `copyFile`, `access`, temporary files inside the workspace) and refused otherwise
 * (`link`, `symlink`, `watch`, copying a directory).
 *
 * @since 0.1.0
 */
import * as OS from "node:os"
import {
  Effect,
  FileSystem,
  Layer,
  Option,
  Path,
  PlatformError,
  Result,
  type Scope,
  Sink,
  Stream
} from "effect"
import {
  type AtomicFileSystem,
  AtomicFileSystemTypeId,
  type AtomicHostFileSystem
} from "../effect/wire.ts"
import { FileSystemFault } from "./Fault.ts"
import { FileSystemBatchTypeId } from "./FileSystemBatch.ts"
import { GrantStore } from "./GrantStore.ts"
import type { Action } from "./Permission.ts"
import { type Authorizer, makeAuthorizer } from "./internal/authorize.ts"
import { makeBatch } from "./internal/batch.ts"
import { openVerified, withVerifiedHandle } from "./internal/openFile.ts"
import { globPrefix, isInside, logicalOf, type PinnedRoot } from "./internal/paths.ts"
import { snapshot } from "./internal/snapshot.ts"
import { type Listed, readable } from "./internal/listing.ts"
import { authorizeTree, entriesBelow } from "./internal/tree.ts"
import { checkTempOptions, randomPart, tempDirectoryMode, type TempOptions } from "./internal/temp.ts"
import { description, refusing, unconfined } from "./internal/unconfined.ts"
import { Workspace } from "./Workspace.ts"

/**
 * The name that stands for the host's temporary directory in a capability: a temporary file made
 * without an explicit `directory` is authorized as a write to `<system-temp>` beside the workspace
 * root, a resource no workspace grant can cover by accident.
 *
 * @since 0.1.0
 * @category models
 */
export const systemTemporaryDirectoryName = "<system-temp>"

/**
 * What every refusal of an unconfinable operation says.
 *
 * @since 0.1.0
 * @category models
 */
export const unconfinedDescription: string = description

const ConfinedTypeId = Symbol.for("pinnedfs/kernel/Confined")

/** The extension a host carries, if any. */
const atomicOf = (fileSystem: FileSystem.FileSystem): AtomicFileSystem | undefined =>
  (fileSystem as Partial<AtomicHostFileSystem>)[AtomicFileSystemTypeId]

/**
 * Whether `confined` can build a view over this file system: it carries the atomic host extension,
 * or it is already a confined view or a guarded service. A plain path-based host answers `false`.
 *
 * @since 0.1.0
 * @category guards
 */
export const isConfinable = (fileSystem: FileSystem.FileSystem): boolean =>
  ConfinedTypeId in fileSystem || AtomicFileSystemTypeId in fileSystem

const identify = (fileSystem: FileSystem.FileSystem, atomic: AtomicFileSystem, path: string) =>
  atomic.identifyRoot !== undefined
    ? atomic.identifyRoot(path)
    : Effect.flatMap(fileSystem.stat(path), (info) =>
      Option.isSome(info.ino)
        ? Effect.succeed(`${info.dev}:${info.ino.value}`)
        : Effect.fail(unconfined("fs:read", "identifyRoot", path)))

/** Pins the root: its canonical path and its identity, once. */
const pin = (fileSystem: FileSystem.FileSystem, atomic: AtomicFileSystem, logicalRoot: string) =>
  Effect.gen(function*() {
    const boundaryRoot = yield* fileSystem.realPath(logicalRoot)
    const rootIdentity = yield* identify(fileSystem, atomic, boundaryRoot)
    return { boundaryRoot, logicalRoot, rootIdentity } satisfies PinnedRoot
  })

const base64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

const contentTooLarge = (method: string, size: number, limit: number) =>
  PlatformError.badArgument({
    module: "FileSystem",
    method,
    description: `${method} payload of ${size} bytes exceeds the ${limit} byte limit the host advertises`
  })

/**
 * Builds the guarded file system over `host` with `auth` (which holds the grant store, or none
 * for a confined view).
 */
const assemble = (
  host: FileSystem.FileSystem,
  auth: Authorizer,
  grants: GrantStore["Service"] | undefined
): FileSystem.FileSystem => {
  const { atomic, path, root, run } = auth
  const { logicalRoot } = root
  const limit = atomic.contentLimit

  /** Authorizes, then runs what `use` builds against the authorized resource. */
  const guarded = <A>(
    action: Action,
    method: string,
    value: string,
    mode: "follow" | "leaf",
    use: (resource: string) => Effect.Effect<A, PlatformError.PlatformError>
  ) => Effect.flatMap(auth.guard(action, method, value, mode), use)

  /** The resource an absolute path names (logical spelling), or `undefined` outside the workspace. */
  const inWorkspace = (absolutePath: string) => {
    const resource = logicalOf(path, root, absolutePath)
    return isInside(path, logicalRoot, resource) ? resource : undefined
  }

  /** What a listing may show: every name read-granted, with every directory holding it below `base`. */
  const shown = <A>(method: string, base: string, listed: ReadonlyArray<Listed<A>>) =>
    readable({ path, base, listed, check: (action, resource) => auth.check(action, method, resource) })

  /** Names listed under `directory` (relative to it), filtered. */
  const shownNames = (method: string, directory: string, names: ReadonlyArray<string>) =>
    shown(method, directory, names.map((name) => ({ item: name, resource: inWorkspace(path.join(directory, name)) })))

  const treeCheck = (method: string) => (capability: { readonly action: Action; readonly resource: string }) =>
    auth.check(capability.action, method, capability.resource)

  const refuse = (action: Action, method: string, value: string) =>
    Effect.fail(unconfined(action, method, auth.normalize(value)))

  const systemTemp = path.resolve(logicalRoot, "..", systemTemporaryDirectoryName)

  /**
   * A fresh directory made through the executor inside `directory`: the directory named is
   * authorized as the client's kernel does, then the entry really created is asked for too. mkdir
   * is exclusive: a name taken fails, it is never reused.
   */
  const tempDirectoryIn = (method: string, directory: string, prefix: string | undefined) =>
    guarded("fs:write", method, directory, "follow", (parent) => {
      const name = path.join(parent, `${prefix ?? ""}${randomPart()}`)
      return auth.check("fs:write", method, name).pipe(
        Effect.andThen(run({ operation: "makeDirectory", path: name, options: { mode: tempDirectoryMode } })),
        // The umask may have narrowed the mode; it never widens it. Set it exactly.
        Effect.andThen(run({ operation: "chmod", path: name, options: { mode: tempDirectoryMode } })),
        Effect.as(name)
      )
    })

  const makeTempDirectory = (
    method: string,
    options: TempOptions | undefined
  ): Effect.Effect<string, PlatformError.PlatformError> => {
    if (options?.directory !== undefined) return tempDirectoryIn(method, options.directory, options.prefix)
    // The host's temporary directory is outside the workspace: its own capability, then the host.
    const tmp = path.resolve(OS.tmpdir())
    if (isInside(path, root.boundaryRoot, tmp) || isInside(path, logicalRoot, tmp)) {
      return refuse("fs:write", method, systemTemp)
    }
    return Effect.andThen(
      auth.check("fs:write", method, systemTemp),
      host.makeTempDirectory(options)
    )
  }

  const makeTempFile = (
    method: string,
    options: TempOptions | undefined
  ): Effect.Effect<string, PlatformError.PlatformError> =>
    Effect.gen(function*() {
      if (options?.directory === undefined) {
        const tmp = path.resolve(OS.tmpdir())
        if (isInside(path, root.boundaryRoot, tmp) || isInside(path, logicalRoot, tmp)) {
          return yield* refuse("fs:write", method, systemTemp)
        }
        yield* auth.check("fs:write", method, systemTemp)
        return yield* host.makeTempFile(options)
      }
      const directory = yield* tempDirectoryIn(method, options.directory, options.prefix)
      const name = path.join(directory, `${randomPart()}${options.suffix ?? ""}`)
      yield* auth.check("fs:write", method, name).pipe(
        Effect.andThen(run({ operation: "writeFile", path: name, data: "", options: { flag: "wx" } })),
        // The directory is ours and empty: do not leave it behind when its file is refused.
        Effect.tapError(() => Effect.ignore(run({ operation: "remove", path: directory, options: { recursive: true } })))
      )
      return name
    })

  /** Removes exactly what a scoped temporary made: the directory it created, never its parent. */
  const cleanup = (made: string) =>
    isInside(path, logicalRoot, made)
      ? Effect.ignore(run({ operation: "remove", path: made, options: { recursive: true, force: true } }))
      : Effect.ignore(host.remove(made, { recursive: true, force: true }))

  const statEntries = (directory: string, names: ReadonlyArray<string>) => {
    const typeOf = (r: Result.Result<FileSystem.File.Type, PlatformError.PlatformError>): FileSystem.File.Type =>
      Result.isSuccess(r) ? r.success : "Unknown"
    const one = (name: string) =>
      Effect.result(Effect.map(run({ operation: "stat", path: path.join(directory, name) }), (info) => info.type))
    const size = atomic.batchLimits?.size
    if (size === undefined || names.length === 0) {
      return Effect.forEach(names, (name) => Effect.map(one(name), typeOf), { concurrency: 16 })
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

  const copyFileOf = (method: string, from: string, to: string, overwrite: boolean) =>
    Effect.gen(function*() {
      const source = yield* auth.guard("fs:read", method, from, "follow")
      const target = yield* auth.guard("fs:write", method, to, "follow")
      const info = yield* run({ operation: "stat", path: source })
      if (info.type !== "File") {
        return yield* Effect.fail(unconfined("fs:read", method, source))
      }
      const bytes = yield* run({ operation: "readFile", path: source })
      if (limit !== undefined && bytes.byteLength > limit) {
        return yield* Effect.fail(contentTooLarge(method, bytes.byteLength, limit))
      }
      yield* run({
        operation: "writeFile",
        path: target,
        data: base64(bytes),
        options: { flag: overwrite ? "w" : "wx", mode: info.mode & 0o7777 }
      })
    })

  const access = (
    value: string,
    options: { readonly ok?: boolean | undefined; readonly readable?: boolean | undefined; readonly writable?: boolean | undefined } | undefined
  ) =>
    guarded("fs:read", "access", value, "follow", (resource) =>
      Effect.flatMap(run({ operation: "stat", path: resource }), (info) => {
        // Mode bits against this process's ids: the descriptor-free answer the executor allows.
        const uid = process.getuid?.() ?? -1
        const gid = process.getgid?.() ?? -1
        if (uid === 0) return Effect.void
        const shift = Option.getOrUndefined(info.uid) === uid ? 6 : Option.getOrUndefined(info.gid) === gid ? 3 : 0
        const bits = (info.mode >> shift) & 7
        const missing = (options?.readable === true && (bits & 4) === 0) || (options?.writable === true && (bits & 2) === 0)
        return missing
          ? Effect.fail(PlatformError.systemError({
            _tag: "PermissionDenied",
            module: "FileSystem",
            method: "access",
            pathOrDescriptor: resource,
            syscall: "access",
            description: "permission denied"
          }))
          : Effect.void
      }))

  const made = FileSystem.make({
    access: (value, options) => {
      const captured = snapshot(options)
      return Effect.suspend(() => access(value, captured))
    },
    copy: (from, to, options) => {
      const captured = snapshot(options)
      return copyFileOf("copy", from, to, captured?.overwrite === true)
    },
    copyFile: (from, to) => copyFileOf("copyFile", from, to, true),
    chmod: (value, mode) =>
      guarded("fs:write", "chmod", value, "follow", (resource) =>
        run({ operation: "chmod", path: resource, options: { mode } })),
    chown: (value, uid, gid) =>
      guarded("fs:write", "chown", value, "follow", (resource) =>
        run({ operation: "chown", path: resource, options: { uid, gid } })),
    link: (from) => refuse("fs:write", "link", from),
    lstat: (value) => guarded("fs:read", "lstat", value, "leaf", (resource) => run({ operation: "stat", path: resource })),
    makeDirectory: (value, options) => {
      const captured = snapshot(options)
      return guarded("fs:write", "makeDirectory", value, "follow", (resource) =>
        run({ operation: "makeDirectory", path: resource, options: captured }))
    },
    makeTempDirectory: (options) => {
      const captured = snapshot(options)
      return Effect.flatMap(checkTempOptions("makeTempDirectory", captured), (checked) =>
        makeTempDirectory("makeTempDirectory", checked))
    },
    makeTempDirectoryScoped: (options) => {
      const captured = snapshot(options)
      return Effect.acquireRelease(
        Effect.flatMap(checkTempOptions("makeTempDirectoryScoped", captured), (checked) =>
          makeTempDirectory("makeTempDirectoryScoped", checked)),
        cleanup
      )
    },
    makeTempFile: (options) => {
      const captured = snapshot(options)
      return Effect.flatMap(checkTempOptions("makeTempFile", captured), (checked) => makeTempFile("makeTempFile", checked))
    },
    makeTempFileScoped: (options) => {
      const captured = snapshot(options)
      return Effect.acquireRelease(
        Effect.flatMap(checkTempOptions("makeTempFileScoped", captured), (checked) =>
          makeTempFile("makeTempFileScoped", checked)),
        // The file's fragments were checked: its parent is the directory made for it, nothing else.
        (file) => cleanup(path.dirname(file))
      )
    },
    open: (value, options) => {
      const captured = snapshot(options)
      return Effect.suspend((): Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope> =>
        openVerified(auth, value, captured)
      )
    },
    readDirectory: (value, options) => {
      const captured = snapshot(options)
      return guarded("fs:read", "readDirectory", value, "follow", (resource) =>
        Effect.flatMap(
          run({ operation: "readDirectory", path: resource, options: captured }),
          (names) => shownNames("readDirectory", resource, names)
        ))
    },
    readDirectoryEntries: (value) =>
      guarded("fs:read", "readDirectoryEntries", value, "follow", (resource) =>
        Effect.gen(function*() {
          const names = yield* shownNames("readDirectoryEntries", resource, yield* run({ operation: "readDirectory", path: resource }))
          const types = yield* statEntries(resource, names)
          return names.map((name, i): FileSystem.DirectoryEntry => ({ name, type: types[i]! }))
        })),
    readFile: (value) => guarded("fs:read", "readFile", value, "follow", (resource) => run({ operation: "readFile", path: resource })),
    readLink: (value) => guarded("fs:read", "readLink", value, "leaf", (resource) => run({ operation: "readLink", path: resource })),
    realPath: (value) => guarded("fs:read", "realPath", value, "follow", (resource) => run({ operation: "realPath", path: resource })),
    remove: (value, options) => {
      const captured = snapshot(options)
      return guarded("fs:write", "remove", value, "leaf", (resource) =>
        Effect.gen(function*() {
          if (captured?.recursive === true) {
            // Everything below is removed too: everything below must be writable.
            const entries = yield* entriesBelow(run, resource)
            yield* authorizeTree({
              path,
              method: "remove",
              entries,
              questions: [{ action: "fs:write", top: resource }],
              check: treeCheck("remove")
            })
          }
          return yield* run({ operation: "remove", path: resource, options: captured })
        }))
    },
    rename: (from, to) =>
      Effect.gen(function*() {
        const source = yield* auth.guard("fs:write", "rename", from, "leaf")
        const target = yield* auth.guard("fs:write", "rename", to, "leaf")
        // A rename reads what it moves: content the caller may not read must not reappear under a
        // name it may. The whole moved tree is written at both names and read at the old one.
        yield* auth.check("fs:read", "rename", source)
        const entries = yield* entriesBelow(run, source)
        yield* authorizeTree({
          path,
          method: "rename",
          entries,
          questions: [
            { action: "fs:write", top: source },
            { action: "fs:read", top: source },
            { action: "fs:write", top: target }
          ],
          check: treeCheck("rename")
        })
        return yield* run({ operation: "rename", from: source, to: target })
      }),
    stat: (value) => guarded("fs:read", "stat", value, "follow", (resource) => run({ operation: "stat", path: resource })),
    symlink: (_, to) => refuse("fs:write", "symlink", to),
    truncate: (value, length) =>
      Effect.scoped(Effect.flatMap(openVerified(auth, value, { flag: "r+" }, "truncate", ["fs:write"]), (file) => file.truncate(length))),
    utimes: (value, atime, mtime) =>
      withVerifiedHandle(auth, value, "utimes", "fs:write", (handle) => handle.utimes(atime, mtime)),
    watch: (value) => Stream.fail(unconfined("fs:read", "watch", auth.normalize(value))),
    writeFile: (value, data, options) => {
      // The payload is measured before anything is encoded: an oversized write is a typed
      // BadArgument, never a string the runtime cannot build.
      if (limit !== undefined && data.byteLength > limit) {
        return Effect.fail(contentTooLarge("writeFile", data.byteLength, limit))
      }
      const bytes = data.slice()
      const captured = snapshot(options)
      return guarded("fs:write", "writeFile", value, "follow", (resource) =>
        run({ operation: "writeFile", path: resource, data: base64(bytes), options: captured }))
    }
  })

  const glob: FileSystem.FileSystem["glob"] = (pattern, options) => {
    const captured = snapshot(options)
    return Effect.gen(function*() {
      if (captured?.dot === true) {
        // The wire's glob has no `dot`: answering without the dot-files asked for would be a
        // silent lie, so the option is refused (patterns may still name dot segments: `.*`).
        return yield* Effect.fail(PlatformError.badArgument({
          module: "FileSystem",
          method: "glob",
          description: "glob option `dot` is not carried by the atomic extension; name dot segments in the pattern"
        }))
      }
      const base = captured?.root === undefined ? logicalRoot : auth.normalize(captured.root)
      const shownBase = logicalOf(path, root, base)
      const absolute = path.isAbsolute(pattern)
      // Normalized before anything is asked, as the client normalizes it: `a/*/../secret/*` is
      // `a/secret/*`, authorized and walked as such (never a route around a denial, never one file
      // answered once per sibling directory).
      const full = auth.normalize(pattern, base)
      yield* auth.guard("fs:read", "glob", full, "glob")
      const found = yield* run({
        operation: "glob",
        pattern: full,
        root: base,
        // Effect matches an exclude against the path as its walk spells it: relative for a relative
        // pattern, absolute for an absolute one. The other kind can never match, so it is not sent
        // (the executor reads a relative exclude against `root`, as the pattern was).
        options: captured?.exclude === undefined
          ? undefined
          : { exclude: captured.exclude.filter((e) => e.startsWith("/") === absolute) }
      })
      // Beyond the prefix: every path the glob found is itself a read, dropped when not granted.
      const listedFrom = logicalOf(path, root, globPrefix(path, root, full).prefix)
      const kept = yield* shown("glob", listedFrom, found.map((entry) => ({ item: entry, resource: inWorkspace(entry) })))
      return kept.map((entry) => {
        const resource = logicalOf(path, root, path.resolve(base, entry))
        return absolute ? resource : path.relative(shownBase, resource).split(path.sep).join("/")
      })
    })
  }

  const exists: FileSystem.FileSystem["exists"] = (value) =>
    guarded("fs:read", "exists", value, "follow", (resource) => run({ operation: "exists", path: resource }))

  const readFileString: FileSystem.FileSystem["readFileString"] = (value, encoding) =>
    guarded("fs:read", "readFileString", value, "follow", (resource) =>
      run({ operation: "readFileString", path: resource, encoding }))

  const writeFileString: FileSystem.FileSystem["writeFileString"] = (value, data, options) => {
    if (limit !== undefined && Buffer.byteLength(data, "utf8") > limit) {
      return Effect.fail(contentTooLarge("writeFileString", Buffer.byteLength(data, "utf8"), limit))
    }
    const captured = snapshot(options)
    return guarded("fs:write", "writeFileString", value, "follow", (resource) =>
      run({ operation: "writeFileString", path: resource, data, options: captured }))
  }

  // `stream` and `sink` stay derived from the guarded `open`; their options are copied at the call,
  // since the derived stream reads `offset` and `bytesToRead` only after `open`'s checks.
  const stream: FileSystem.FileSystem["stream"] = (value, options) => made.stream(value, snapshot(options))
  const sink: FileSystem.FileSystem["sink"] = (value, options) => made.sink(value, snapshot(options))

  // `FileSystem.make` derives `glob`, `exists`, `readFileString` and `writeFileString` from the
  // primitives; the guarded ones are set after it so a derived, unguarded walk never wins.
  return { ...made, glob, exists, readFileString, writeFileString, stream, sink }
}

/**
 * Builds the guarded file system over the host in context.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make: Effect.Effect<
  FileSystem.FileSystem,
  PlatformError.PlatformError,
  FileSystem.FileSystem | Path.Path | Workspace | GrantStore
> = Effect.gen(function*() {
  const host = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const workspace = yield* Workspace
  const grants = yield* GrantStore
  const logicalRoot = path.normalize(path.resolve(workspace.root))
  const atomic = atomicOf(host)
  if (atomic === undefined) return refusing(logicalRoot, path, path.resolve(logicalRoot, "..", systemTemporaryDirectoryName))
  const root = yield* pin(host, atomic, logicalRoot)
  const auth = makeAuthorizer({ path, root, atomic, grants, host })
  const guarded = assemble(host, auth, grants)
  Object.assign(guarded, { [ConfinedTypeId]: logicalRoot })
  if (atomic.batchLimits === undefined) return guarded
  const verifyRoot = identify(host, atomic, logicalRoot).pipe(
    Effect.mapError((cause) => rootChanged(logicalRoot, cause)),
    Effect.flatMap((now) =>
      now === root.rootIdentity
        ? Effect.void
        : Effect.fail(rootChanged(
          logicalRoot,
          new FileSystemFault({ code: "workspace_identity_changed", message: "workspace descriptor identity changed" })
        ))
    )
  )
  return Object.assign(guarded, { [FileSystemBatchTypeId]: makeBatch(auth, atomic.batchLimits, verifyRoot) })
})

const rootChanged = (logicalRoot: string, cause: unknown) =>
  PlatformError.systemError({
    _tag: "Busy",
    module: "FileSystem",
    method: "batch",
    pathOrDescriptor: logicalRoot,
    description: "workspace_identity_changed: the workspace root no longer names the pinned directory",
    cause
  })

/**
 * The kernel as a layer: over a host `FileSystem` it provides the guarded `FileSystem`, so every
 * consumer of `FileSystem.FileSystem`, even one that never heard of the kernel, is guarded.
 *
 * @since 0.1.0
 * @category layers
 */
export const layer: Layer.Layer<
  FileSystem.FileSystem,
  PlatformError.PlatformError,
  FileSystem.FileSystem | Path.Path | Workspace | GrantStore
> = Layer.effect(FileSystem.FileSystem, make)

/**
 * The methods a confined view refuses: none of them is one executor request against the pinned
 * root (a descriptor handed out, a host path resolved again, a link made, the system temporary
 * directory), and the view has no grant store to ask about anything wider.
 */
const confinedRefusals = (path: Path.Path, logicalRoot: string): Partial<FileSystem.FileSystem> => {
  const at = (value: string) => path.resolve(logicalRoot, value)
  const no = (action: Action, method: string, value: string) => Effect.fail(unconfined(action, method, at(value)))
  return {
    access: (value) => no("fs:read", "access", value),
    copy: (from) => no("fs:read", "copy", from),
    copyFile: (from) => no("fs:read", "copyFile", from),
    link: (from) => no("fs:read", "link", from),
    makeTempDirectory: () => no("fs:write", "makeTempDirectory", logicalRoot),
    makeTempDirectoryScoped: () => no("fs:write", "makeTempDirectoryScoped", logicalRoot),
    makeTempFile: () => no("fs:write", "makeTempFile", logicalRoot),
    makeTempFileScoped: () => no("fs:write", "makeTempFileScoped", logicalRoot),
    open: (value) => no("fs:read", "open", value),
    symlink: (_, to) => no("fs:write", "symlink", to),
    truncate: (value) => no("fs:write", "truncate", value),
    utimes: (value) => no("fs:write", "utimes", value),
    watch: (value) => Stream.fail(unconfined("fs:read", "watch", at(value))),
    stream: (value) => Stream.fail(unconfined("fs:read", "stream", at(value))),
    sink: (value) => Sink.fail(unconfined("fs:write", "sink", at(value)))
  }
}

/**
 * A view of `fileSystem` confined to `root` without grant checks, for the kernel's own bookkeeping
 * (journals, caches): every path operation is still one executor request against a root pinned
 * here, so nothing it does leaves `root`. Refused over a host without the atomic extension.
 *
 * @since 0.1.0
 * @category constructors
 */
export const confined = (
  fileSystem: FileSystem.FileSystem,
  root: string
): Effect.Effect<FileSystem.FileSystem, PlatformError.PlatformError, Path.Path> =>
  Effect.gen(function*() {
    const path = yield* Path.Path
    const logicalRoot = path.normalize(path.resolve(root === "" ? "." : root))
    if ((fileSystem as { readonly [ConfinedTypeId]?: string })[ConfinedTypeId] === logicalRoot) return fileSystem
    const atomic = atomicOf(fileSystem)
    if (atomic === undefined) return yield* Effect.fail(unconfined("fs:write", "confined", logicalRoot))
    const pinned = yield* pin(fileSystem, atomic, logicalRoot)
    const view = assemble(fileSystem, makeAuthorizer({ path, root: pinned, atomic, grants: undefined, host: fileSystem }), undefined)
    return Object.assign({ ...view, ...confinedRefusals(path, logicalRoot) }, { [ConfinedTypeId]: logicalRoot })
  })
