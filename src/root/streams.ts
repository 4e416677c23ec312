/**
 * Node streams over pinned file handles: `PinnedRoot.createReadStream` / `createWriteStream`, and
 * the handle's own. Every read and write goes through the handle's gate (src/root/handle.ts), so a
 * stream can never act on a descriptor number after its handle was closed.
 *
 * An atomic write stream writes a temporary file beside the target (`.pinnedfs-<16 hex>.tmp`,
 * created exclusively through the root) and renames it over the target only when the stream
 * finishes: a stream destroyed, failed or killed halfway leaves the old file as it was.
 *
 * @since 0.2.0
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs"
import { posix } from "node:path"
import { Readable, Writable } from "node:stream"
import { badArgumentPinnedFsError, PinnedFsError } from "../internal/errors.ts"
import { type HandleFlag, type PinnedFileHandle, readChunkOf } from "./handle.ts"
import { ReadAhead } from "./streamsReadAhead.ts"

/** @since 0.2.0 @category models */
export interface ReadStreamOptions {
  /** First byte to read (default 0). */
  readonly start?: number | undefined
  /** Last byte to read, inclusive, as `fs.createReadStream` (default: to the end). */
  readonly end?: number | undefined
  /** Bytes per read (default 64 KiB, at most 64 MiB). */
  readonly highWaterMark?: number | undefined
}

/** @since 0.2.0 @category models */
export interface WriteStreamOptions {
  /** `w` (default), `wx`, `a`, `ax` or `r+`. */
  readonly flags?: HandleFlag | undefined
  /** Permission bits of a file the stream creates (the umask applies). */
  readonly mode?: number | undefined
  /**
   * Publish on finish: the data goes to a temporary beside the target, renamed over it once the
   * stream ends (`wx`: only where nothing has the name). Until then the target keeps its old
   * content; a destroyed or failed stream removes the temporary. `w` and `wx` only.
   */
  readonly atomic?: boolean | undefined
  readonly highWaterMark?: number | undefined
}

/** What a stream needs of its root. @internal */
export interface StreamRoot {
  open(path: string, flags?: HandleFlag, mode?: number): Promise<PinnedFileHandle>
  stat(path: string): Promise<{ readonly type: string; readonly mode: number }>
  rename(from: string, to: string, options?: { readonly noReplace?: boolean }): Promise<void>
  remove(path: string, options?: { readonly force?: boolean }): Promise<void>
}

const maxChunk = 64 * 1024 * 1024

const optional = (u: unknown, what: string, lo: number, hi: number): number | undefined => {
  if (u === undefined) return undefined
  if (typeof u !== "number" || !Number.isSafeInteger(u) || u < lo || u > hi) {
    throw badArgumentPinnedFsError(`${what} must be an integer from ${lo} to ${hi}, got ${String(u)}`)
  }
  return u
}

const optionsObject = (u: unknown, what: string): Record<string, unknown> => {
  if (u === undefined) return {}
  if (typeof u !== "object" || u === null) throw badArgumentPinnedFsError(`${what} must be an object`)
  return u as Record<string, unknown>
}

const readRange = (options: unknown) => {
  const o = optionsObject(options, "read stream options")
  for (const key of Object.keys(o)) {
    if (key !== "start" && key !== "end" && key !== "highWaterMark") throw badArgumentPinnedFsError(`unknown read stream option '${key}'`)
  }
  const start = optional(o["start"], "start", 0, Number.MAX_SAFE_INTEGER) ?? 0
  const end = optional(o["end"], "end", 0, Number.MAX_SAFE_INTEGER)
  if (end !== undefined && end < start) throw badArgumentPinnedFsError(`end (${end}) must not be before start (${start})`)
  const highWaterMark = optional(o["highWaterMark"], "highWaterMark", 1, maxChunk) ?? 65536
  return { start, end, highWaterMark }
}

/** A Readable over `handle` (opened by `open` first when given); `own`: close the handle at the end. */
export const handleReadStream = (
  handle: PinnedFileHandle | (() => Promise<PinnedFileHandle>),
  options: unknown,
  own: boolean
): Readable => {
  const { start, end, highWaterMark } = readRange(options)
  let h: PinnedFileHandle | undefined = typeof handle === "function" ? undefined : handle
  let ahead: ReadAhead | undefined
  const stream = new Readable({
    highWaterMark,
    construct(callback) {
      if (h !== undefined) return callback()
      ;(handle as () => Promise<PinnedFileHandle>)().then(
        (opened) => {
          h = opened
          callback()
        },
        (e: Error) => callback(e)
      )
    },
    read(size) {
      // The chunks fs.ReadStream emits, from larger reads one ahead (streamsReadAhead.ts), each
      // answered by callback (no promise per read) through the handle's gate.
      ahead ??= new ReadAhead((...a) => h![readChunkOf](...a), start, end, stream)
      ahead.want(size)
    },
    destroy(error, callback) {
      if (!own || h === undefined) return callback(error)
      h.close().then(
        () => callback(error),
        (e: Error) => callback(error ?? e)
      )
    }
  })
  return stream
}

/** A Writable over `handle`; `own`: close it when the stream ends or is destroyed. */
export const handleWriteStream = (handle: PinnedFileHandle, options: unknown, own: boolean): Writable => {
  const o = optionsObject(options, "write stream options")
  const highWaterMark = optional(o["highWaterMark"], "highWaterMark", 1, maxChunk)
  return writer(
    async () => handle,
    { ...(highWaterMark === undefined ? {} : { highWaterMark }) },
    own ? () => handle.close() : async () => {},
    own ? () => handle.close() : async () => {}
  )
}

/** The Writable all write streams are: `open` in construct, `publish` on final, `abandon` on failure. */
const writer = (
  open: () => Promise<PinnedFileHandle>,
  options: { readonly highWaterMark?: number },
  publish: (h: PinnedFileHandle) => Promise<void>,
  abandon: (h: PinnedFileHandle) => Promise<void>
): Writable => {
  let h: PinnedFileHandle | undefined
  let finished = false
  return new Writable({
    ...options,
    construct(callback) {
      open().then(
        (opened) => {
          h = opened
          callback()
        },
        (e: Error) => callback(e)
      )
    },
    write(chunk: Buffer, _encoding, callback) {
      h!.write(chunk).then(
        () => callback(),
        (e: Error) => callback(e)
      )
    },
    writev(chunks, callback) {
      h!.write(Buffer.concat(chunks.map((c) => c.chunk as Buffer))).then(
        () => callback(),
        (e: Error) => callback(e)
      )
    },
    final(callback) {
      publish(h!).then(
        () => {
          finished = true
          callback()
        },
        (e: Error) => callback(e)
      )
    },
    destroy(error, callback) {
      if (h === undefined || finished) return callback(error)
      abandon(h).then(
        () => callback(error),
        (e: Error) => callback(error ?? e)
      )
    }
  })
}

const writeFlags: ReadonlySet<string> = new Set(["w", "wx", "a", "ax", "r+"])

/**
 * `PinnedRoot.createWriteStream`: in place through a handle opened with `flags`, or, with `atomic`,
 * through a temporary renamed over `path` on finish.
 *
 * @internal
 */
export const rootWriteStream = (root: StreamRoot, path: string, options: unknown): Writable => {
  const o = optionsObject(options, "write stream options")
  for (const key of Object.keys(o)) {
    if (!["flags", "mode", "atomic", "highWaterMark"].includes(key)) throw badArgumentPinnedFsError(`unknown write stream option '${key}'`)
  }
  const flags = (o["flags"] ?? "w") as HandleFlag
  if (typeof flags !== "string" || !writeFlags.has(flags))
    throw badArgumentPinnedFsError(`write stream flags must be w, wx, a, ax or r+, got '${String(flags)}'`)
  const mode = optional(o["mode"], "mode", 0, 0o7777)
  const atomic = o["atomic"]
  if (atomic !== undefined && typeof atomic !== "boolean") throw badArgumentPinnedFsError("atomic must be a boolean")
  const highWaterMark = optional(o["highWaterMark"], "highWaterMark", 1, maxChunk)
  const streamOptions = highWaterMark === undefined ? {} : { highWaterMark }
  if (atomic !== true) {
    return writer(
      () => root.open(path, flags, mode),
      streamOptions,
      (h) => h.close(),
      (h) => h.close()
    )
  }
  if (flags !== "w" && flags !== "wx")
    throw badArgumentPinnedFsError(`atomic write streams replace the whole file: use 'w' or 'wx', not '${flags}'`)
  const temp = posix.join(posix.dirname(path), `.pinnedfs-${randomBytes(8).toString("hex")}.tmp`)
  const clear = (h: PinnedFileHandle) => h.close().then(() => root.remove(temp, { force: true }))
  return writer(
    async () => {
      const keep = await targetMode(root, path, flags)
      const h = await root.open(temp, "wx", mode ?? 0o666)
      // The replacement keeps the target's permission bits, as writeFile's does.
      if (keep !== undefined) await new Promise<void>((ok, no) => fs.fchmod(h.fd, keep, (e) => (e ? no(e) : ok())))
      return h
    },
    streamOptions,
    async (h) => {
      try {
        await h.close()
        await root.rename(temp, path, flags === "wx" ? { noReplace: true } : undefined)
      } catch (e) {
        await root.remove(temp, { force: true }).catch(() => undefined)
        throw e
      }
    },
    clear
  )
}

/**
 * What the replacement is checked against before a byte is written: the target must be a regular
 * file with one link (`stat` refuses a hard-linked one and a link on the way) or absent. A trailing
 * link or a directory is refused, as writeFile refuses them. Answers the mode bits to keep.
 */
const targetMode = async (root: StreamRoot, path: string, flags: HandleFlag): Promise<number | undefined> => {
  let info: { readonly type: string; readonly mode: number }
  try {
    info = await root.stat(path)
  } catch (e) {
    if (e instanceof PinnedFsError && e.code === "ENOENT") return undefined
    throw e
  }
  if (flags === "wx") throw new PinnedFsError({ code: "EEXIST", errno: -17, syscall: "open", path })
  if (info.type === "Directory") throw new PinnedFsError({ code: "EISDIR", errno: -21, syscall: "open", path })
  if (info.type === "SymbolicLink") {
    throw new PinnedFsError({
      code: "ELOOP",
      errno: -40,
      syscall: "open",
      path,
      refusal: "symlink",
      description: `'${path}' is a symbolic link`
    })
  }
  if (info.type !== "File") {
    throw new PinnedFsError({
      code: "EINVAL",
      errno: -22,
      syscall: "open",
      path,
      refusal: "notregular",
      description: "not a regular file: refused"
    })
  }
  return info.mode & 0o7777
}
