/**
 * `open` without a native open operation, built from confined primitives so that no pathname is
 * ever trusted:
 *
 * 1. authorize the path (read, write or both, as the flag needs);
 * 2. create the file, when the flag creates, through the executor (`writeFile` with `wx`: exclusive,
 *    descriptor-relative, no link followed), never with `O_CREAT` on a host path;
 * 3. open the host path with neither `O_CREAT` nor `O_TRUNC`, so whatever a swapped link leads the
 *    open to is not changed by it. On Linux the first open is `O_PATH|O_NOFOLLOW`: no driver's open
 *    runs (a device reached through a swapped link is never opened), and the descriptor is
 *    reopened through `/proc/self/fd` only once verified. Elsewhere the open carries `O_NONBLOCK`
 *    so a FIFO or device cannot block;
 * 4. `fstat` the descriptor (a regular file with one link) and ask the executor's no-follow `stat`
 *    of the authorized resource: the two `dev:ino` must be equal, so the descriptor is the file that
 *    lives at the authorized path beneath the pinned root, and nothing else;
 * 5. only then truncate (`w` flags).
 *
 * The handle binds that `dev:ino`. Every later operation authorizes the path again and refuses once
 * the path names another file (renamed away, replaced), as the client's kernel does.
 *
 * @internal
 */
import type { FileHandle } from "node:fs/promises"
import * as NFS from "node:fs"
import { Effect, FileSystem, Option, PlatformError, type Scope } from "effect"
import type { Action } from "../Permission.ts"
import type { Authorizer } from "./authorize.ts"
import { fileInfo, identityOf } from "./fileInfo.ts"
import { fromNodeError } from "./nodeError.ts"
import { toBoundary } from "./paths.ts"

const readable: ReadonlySet<FileSystem.OpenFlag> = new Set(["r", "r+", "w+", "wx+", "a+", "ax+"])
const writable: ReadonlySet<FileSystem.OpenFlag> = new Set(["r+", "w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"])
const creating: ReadonlySet<FileSystem.OpenFlag> = new Set(["w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"])
const exclusive: ReadonlySet<FileSystem.OpenFlag> = new Set(["wx", "wx+", "ax", "ax+"])
const truncating: ReadonlySet<FileSystem.OpenFlag> = new Set(["w", "wx", "w+", "wx+"])
const appending: ReadonlySet<FileSystem.OpenFlag> = new Set(["a", "ax", "a+", "ax+"])
const flags: ReadonlySet<string> = new Set([...readable, ...writable])

const hostFlags = (flag: FileSystem.OpenFlag): number => {
  const { O_APPEND, O_NOFOLLOW, O_NONBLOCK, O_RDONLY, O_RDWR, O_WRONLY } = NFS.constants
  const access = readable.has(flag) && writable.has(flag) ? O_RDWR : writable.has(flag) ? O_WRONLY : O_RDONLY
  return access | O_NOFOLLOW | O_NONBLOCK | (appending.has(flag) ? O_APPEND : 0)
}

const attempt = <A>(method: string, at: string | number, f: () => Promise<A>) =>
  Effect.tryPromise({ try: f, catch: fromNodeError(method, at) })

/** The access a flag needs: read, write, or both (read first, as the client asks). @internal */
export const actionsOf = (flag: FileSystem.OpenFlag): ReadonlyArray<Action> =>
  readable.has(flag) && writable.has(flag) ? ["fs:read", "fs:write"] : writable.has(flag) ? ["fs:write"] : ["fs:read"]

/** Authorizes `value` for every action in `actions`, answering the resource. @internal */
export const authorizeAll = (
  auth: Authorizer,
  method: string,
  value: string,
  actions: ReadonlyArray<Action>
): Effect.Effect<string, PlatformError.PlatformError> =>
  Effect.gen(function*() {
    let resource = ""
    for (const action of actions) resource = yield* auth.guard(action, method, value, "follow")
    return resource
  })

/**
 * Confirms that the authorized path still names the file with identity `bound`: one executor
 * `stat`, no link followed, hard links refused.
 *
 * @internal
 */
export const verifyIdentity = (
  auth: Authorizer,
  action: Action,
  method: string,
  resource: string,
  bound: string
): Effect.Effect<void, PlatformError.PlatformError> =>
  auth.run({ operation: "stat", path: resource }).pipe(
    Effect.mapError((cause) =>
      auth.deny(action, method, resource, "descriptor no longer names the resource at its authorized path", cause)
    ),
    Effect.flatMap((info) =>
      info.type === "File" && identityOf(info) === bound
        ? Effect.void
        : Effect.fail(auth.deny(action, method, resource, "descriptor no longer names the resource at its authorized path"))
    )
  )

// O_PATH is Linux's; its value is the same on every architecture Node supports there.
const O_PATH = 0o10000000
const procReopen = process.platform === "linux" && NFS.existsSync("/proc/self/fd")

const acquire = (method: string, resource: string, open: () => Promise<FileHandle>) =>
  Effect.acquireRelease(
    attempt(method, resource, open),
    (handle) => Effect.promise(() => handle.close().catch(() => undefined))
  )

/**
 * Opens the host path without creating or truncating anything, and proves the descriptor is the
 * regular, singly linked file at the authorized resource (steps 3 and 4 above).
 */
const openAndVerify = (
  auth: Authorizer,
  host: string,
  resource: string,
  flag: FileSystem.OpenFlag,
  method: string,
  action: Action
): Effect.Effect<{ readonly handle: FileHandle; readonly bound: string }, PlatformError.PlatformError, Scope.Scope> =>
  Effect.gen(function*() {
    const first = yield* acquire(
      method,
      resource,
      () => NFS.promises.open(host, procReopen ? O_PATH | NFS.constants.O_NOFOLLOW : hostFlags(flag))
    )
    const opened = fileInfo(yield* attempt(method, resource, () => first.stat({ bigint: true })))
    if (opened.type !== "File") {
      return yield* Effect.fail(PlatformError.systemError({
        _tag: "BadResource",
        module: "FileSystem",
        method,
        pathOrDescriptor: resource,
        description: "only regular files are opened through the kernel"
      }))
    }
    if (Option.getOrElse(opened.nlink, () => 1n) !== 1n) {
      return yield* Effect.fail(auth.deny(action, method, resource, "hard-linked files cannot be confined to the workspace"))
    }
    const bound = identityOf(opened)!
    yield* verifyIdentity(auth, action, method, resource, bound)
    if (!procReopen) return { handle: first, bound }
    // The magic link names the verified inode itself: no path is resolved again.
    const handle = yield* acquire(method, resource, () => NFS.promises.open(`/proc/self/fd/${first.fd}`, hostFlags(flag) & ~NFS.constants.O_NOFOLLOW))
    const reopened = fileInfo(yield* attempt(method, resource, () => handle.stat({ bigint: true })))
    yield* Effect.promise(() => first.close().catch(() => undefined))
    if (identityOf(reopened) !== bound) {
      return yield* Effect.fail(auth.deny(action, method, resource, "descriptor no longer names the resource at its authorized path"))
    }
    return { handle, bound }
  })

/** Opens `value` as the module comment describes. @internal */
export const openVerified = (
  auth: Authorizer,
  value: string,
  options: { readonly flag?: FileSystem.OpenFlag | undefined; readonly mode?: number | undefined } | undefined,
  method = "open",
  authorizeAs?: ReadonlyArray<Action>
): Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope> =>
  Effect.gen(function*() {
    const flag = options?.flag ?? "r"
    if (!flags.has(flag)) {
      return yield* Effect.fail(
        PlatformError.badArgument({ module: "FileSystem", method, description: `unknown open flag ${String(flag)}` })
      )
    }
    const actions = authorizeAs ?? actionsOf(flag)
    const resource = yield* authorizeAll(auth, method, value, actions)
    const host = toBoundary(auth.path, auth.root, resource)!
    if (creating.has(flag)) {
      yield* auth.run({
        operation: "writeFile",
        path: resource,
        data: "",
        options: { flag: "wx", ...(options?.mode === undefined ? {} : { mode: options.mode }) }
      }).pipe(
        Effect.catchIf(
          (error) => !exclusive.has(flag) && error.reason._tag === "AlreadyExists",
          () => Effect.void
        )
      )
    }
    const { bound, handle } = yield* openAndVerify(auth, host, resource, flag, method, actions[actions.length - 1]!)
    if (truncating.has(flag)) yield* attempt(method, resource, () => handle.truncate(0))
    return guardedFile(auth, value, handle, bound, appending.has(flag))
  })

/**
 * A verified descriptor for the kernel's own use (`utimes`): opened and verified as `open` does,
 * closed when `use` ends.
 *
 * @internal
 */
export const withVerifiedHandle = <A>(
  auth: Authorizer,
  value: string,
  method: string,
  action: Action,
  use: (handle: FileHandle) => Promise<A>
): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.scoped(Effect.gen(function*() {
    const resource = yield* auth.guard(action, method, value, "follow")
    const host = toBoundary(auth.path, auth.root, resource)!
    const { handle } = yield* openAndVerify(auth, host, resource, "r", method, action)
    return yield* attempt(method, resource, () => use(handle))
  }))

const negativePosition = (method: string) =>
  PlatformError.badArgument({ module: "FileSystem", method, description: "position must not be negative" })

/** A file handle whose every use re-authorizes its path and re-verifies the bound identity. @internal */
const guardedFile = (
  auth: Authorizer,
  value: string,
  handle: FileHandle,
  bound: string,
  append: boolean
): FileSystem.File => {
  let position = 0n
  const admit = (action: Action, method: string) =>
    auth.guard(action, method, value, "follow").pipe(
      Effect.flatMap((resource) => verifyIdentity(auth, action, method, resource, bound))
    )
  const readAt = (method: string, buffer: Uint8Array, explicit: bigint | undefined) =>
    Effect.gen(function*() {
      if (explicit !== undefined && explicit < 0n) return yield* Effect.fail(negativePosition(method))
      yield* admit("fs:read", method)
      const at = explicit ?? position
      const { bytesRead } = yield* attempt(method, handle.fd, () => handle.read(buffer, 0, buffer.byteLength, Number(at)))
      if (explicit === undefined) position = at + BigInt(bytesRead)
      return bytesRead
    })
  const write = (buffer: Uint8Array) =>
    Effect.gen(function*() {
      yield* admit("fs:write", "write")
      const at = position
      const { bytesWritten } = yield* attempt(
        "write",
        handle.fd,
        () => handle.write(buffer, 0, buffer.byteLength, append ? null : Number(at))
      )
      if (!append) position = at + BigInt(bytesWritten)
      return bytesWritten
    })
  return {
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    stat: Effect.suspend(() =>
      admit("fs:read", "stat").pipe(
        Effect.andThen(attempt("stat", handle.fd, () => handle.stat({ bigint: true }))),
        Effect.map(fileInfo)
      )
    ),
    seek: (offset, from) =>
      Effect.suspend(() => {
        const next = from === "start" ? offset : position + offset
        if (next < 0n) {
          return Effect.fail(PlatformError.badArgument({
            module: "FileSystem",
            method: "seek",
            description: "cannot seek before the start of the file"
          }))
        }
        position = next
        return Effect.succeed(next)
      }),
    sync: Effect.suspend(() => admit("fs:write", "sync").pipe(Effect.andThen(attempt("sync", handle.fd, () => handle.sync())))),
    read: (buffer, options) => readAt("read", buffer, options?.position),
    readAlloc: (size, options) =>
      Effect.suspend(() => {
        if (!Number.isInteger(size) || size < 0) {
          return Effect.fail(PlatformError.badArgument({
            module: "FileSystem",
            method: "readAlloc",
            description: "size must be a non-negative integer"
          }))
        }
        const buffer = Buffer.allocUnsafeSlow(size)
        return Effect.map(
          readAt("readAlloc", buffer, options?.position),
          (n) => n === 0 ? Option.none() : Option.some(n === size ? buffer : Uint8Array.prototype.slice.call(buffer, 0, n))
        )
      }),
    truncate: (length) =>
      Effect.gen(function*() {
        yield* admit("fs:write", "truncate")
        yield* attempt("truncate", handle.fd, () => handle.truncate(length ?? 0))
        if (!append && position > BigInt(length ?? 0)) position = BigInt(length ?? 0)
      }),
    write: (buffer) => write(buffer),
    writeAll: (buffer) =>
      Effect.gen(function*() {
        let offset = 0
        while (offset < buffer.byteLength) {
          const n = yield* write(buffer.subarray(offset))
          if (n === 0) {
            return yield* Effect.fail(PlatformError.systemError({
              _tag: "WriteZero",
              module: "FileSystem",
              method: "writeAll",
              pathOrDescriptor: handle.fd,
              description: "write returned 0 bytes written"
            }))
          }
          offset += n
        }
      })
  }
}
