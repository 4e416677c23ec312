/**
 * The extension's `open` member: a regular file opened beneath the pinned root by the same
 * resolution as every request (`PinnedRoot.open`'s descriptor: no link followed, one link, a regular
 * file, the root path re-checked in the same trip), answered as Effect's `FileSystem.File`.
 *
 * A handle is a live descriptor, not a value a request can carry, so it is a member of its own and
 * not a request. It lives for its scope, and closing the extension closes every handle still open:
 * a handle never outlives the extension that vouched for it.
 *
 * @since 0.2.0
 */
import { Effect, FileSystem, Option, type PlatformError, type Scope } from "effect"
import type { NativeRootHandle } from "../internal/native.ts"
import { badArgument, fromNativeError, outsideRoots } from "../protocol/errors.ts"
import type { OpenFileRequest } from "../protocol/extensions.ts"
import { make as infoOf } from "../protocol/fileInfo.ts"
import { type HandleFlag, type HandleOwner, openHandle, type PinnedFileHandle } from "../root/handle.ts"
import { verifyOf, withRoot } from "./pinning.ts"
import { decodeRoots } from "./requests.ts"
import { locate } from "./roots.ts"
import type { RootCache } from "./rootCache.ts"

const method = "open"

/** Effect's flags a pinned handle has: the `+` forms of `w` and `a` read as well, which no pinned descriptor does. */
const flags: ReadonlySet<string> = new Set(["r", "r+", "w", "wx", "a", "ax"])

const failure = (name: string, path: string) => (u: unknown) => fromNativeError(u, name, path)

/** Runs one handle call, its rejection as a `PlatformError` naming the absolute path. */
const call = <A>(name: string, path: string, act: () => Promise<A>): Effect.Effect<A, PlatformError.PlatformError> =>
  Effect.tryPromise({ try: act, catch: failure(name, path) })

const negative = (name: string) => badArgument(name, "position must not be negative")

/** `File.Info` of the handle's own descriptor. */
const statOf = (handle: PinnedFileHandle, path: string) =>
  Effect.map(
    call("stat", path, () => handle.stat({ bigint: true })),
    (s) =>
      infoOf({
        ...s,
        mode: Number(s.mode),
        // Accessors on the prototype, as Node's own: a spread does not carry them.
        atime: s.atime,
        mtime: s.mtime,
        birthtime: s.birthtimeMs === 0n ? undefined : s.birthtime
      })
  )

/**
 * The handle as Effect's `File`: positions kept here, as `@effect/platform-node` keeps them, every
 * read and write at an explicit offset (an append goes where the kernel puts it).
 */
const fileOf = (handle: PinnedFileHandle, path: string, append: boolean): FileSystem.File => {
  let position = 0n
  const readAt = (buffer: Uint8Array, explicit: bigint | undefined) =>
    Effect.map(
      call("read", path, () => handle.read(buffer, 0, buffer.byteLength, Number(explicit ?? position))),
      ({ bytesRead }) => {
        if (explicit === undefined) position += BigInt(bytesRead)
        return bytesRead
      }
    )
  const write = (name: string) => (buffer: Uint8Array) =>
    Effect.map(
      call(name, path, () => handle.write(buffer, append ? null : Number(position))),
      ({ bytesWritten }) => {
        if (!append) position += BigInt(bytesWritten)
        return bytesWritten
      }
    )
  return {
    [FileSystem.FileTypeId]: FileSystem.FileTypeId,
    stat: Effect.suspend(() => statOf(handle, path)),
    seek: (offset, from) =>
      Effect.suspend(() => {
        const to = from === "start" ? offset : position + offset
        if (to < 0n) return Effect.fail(badArgument("seek", "Cannot seek before the start of the file"))
        position = to
        return Effect.succeed(to)
      }),
    sync: Effect.suspend(() => call("sync", path, () => handle.sync())),
    read: (buffer, options) =>
      Effect.suspend(() =>
        options?.position !== undefined && options.position < 0n ? Effect.fail(negative("read")) : readAt(buffer, options?.position)
      ),
    readAlloc: (size, options) =>
      Effect.suspend(() => {
        if (!Number.isSafeInteger(size) || size < 0) return Effect.fail(badArgument("readAlloc", "size must be a non-negative integer"))
        if (options?.position !== undefined && options.position < 0n) return Effect.fail(negative("readAlloc"))
        const buffer = Buffer.allocUnsafe(size)
        return Effect.map(readAt(buffer, options?.position), (n) => (n === 0 ? Option.none() : Option.some(buffer.subarray(0, n))))
      }),
    truncate: (length) =>
      Effect.suspend(() =>
        Effect.map(
          call("truncate", path, () => handle.truncate(length ?? 0)),
          () => {
            if (!append && position > BigInt(length ?? 0)) position = BigInt(length ?? 0)
          }
        )
      ),
    write: write("write"),
    writeAll: (buffer) => Effect.asVoid(write("writeAll")(buffer))
  }
}

/** A root lent to one open: its descriptor, root path re-checked in the same trip as the open. */
const ownerOf = (root: string, readLimit: number, handle: NativeRootHandle, verify: true | string): HandleOwner => ({
  path: root,
  readLimit,
  handle: { openPath: (path, flag, mode) => handle.openPath(path, flag, mode, verify) }
})

/**
 * The `open` member over one extension's root cache; `open` handles are kept in `live` until they
 * close, so that the extension's `close` can close them.
 *
 * @since 0.2.0
 * @category constructors
 */
export const makeOpen =
  (cache: RootCache, readLimit: number, live: Set<PinnedFileHandle>) =>
  (request: OpenFileRequest): Effect.Effect<FileSystem.File, PlatformError.PlatformError, Scope.Scope> =>
    Effect.suspend(() => {
      const r = request as unknown as Record<string, unknown>
      const roots = decodeRoots(method, r)
      if (roots._tag === "Failure") return Effect.fail(roots.failure)
      const path = r["path"]
      if (typeof path !== "string" || path.includes("\0") || !path.startsWith("/")) {
        return Effect.fail(badArgument(method, "path must be an absolute string without NUL bytes"))
      }
      const located = locate(roots.success, path)
      if (located === undefined) return Effect.fail(outsideRoots(method, path))
      const options = (r["options"] ?? {}) as { readonly flag?: unknown; readonly mode?: unknown }
      const flag = options.flag ?? "r"
      if (typeof flag !== "string" || !flags.has(flag)) {
        return Effect.fail(badArgument(method, `flag must be one of r, r+, w, wx, a, ax; got ${String(flag).slice(0, 20)}`))
      }
      const opened = withRoot(cache, roots.success, method, (handle) =>
        call(method, path, () =>
          openHandle(
            ownerOf(roots.success.boundaryRoot, readLimit, handle, verifyOf(roots.success)),
            path,
            flag as HandleFlag,
            options.mode,
            located.relative
          )
        )
      )
      return Effect.map(
        Effect.acquireRelease(
          Effect.tap(opened, (handle) => Effect.sync(() => live.add(handle))),
          (handle) =>
            Effect.promise(() => {
              live.delete(handle)
              return handle.close()
            })
        ),
        (handle) => fileOf(handle, path, flag === "a" || flag === "ax")
      )
    })
