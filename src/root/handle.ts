/**
 * `PinnedRoot.open`'s file handle: a descriptor the addon opened beneath the pinned root (checked on
 * that very descriptor: a regular file with one link, no link followed anywhere), then read and
 * written through `node:fs` on its number, which runs each call on libuv's thread pool as Node's own
 * `FileHandle` does.
 *
 * A descriptor number is only safe while it is ours: closed once, and never while a call on it is in
 * flight (the number could by then name a file someone else opened). So every call enters a gate,
 * `close()` waits for the calls in flight, and whatever closes a handle (its `close()`, its root's
 * `close()`, or the collector finding it unreachable) closes the descriptor exactly once.
 *
 * @since 0.2.0
 */
import * as fs from "node:fs"
import type { Readable, Writable } from "node:stream"
import { badArgumentPinnedFsError, fromNative, PinnedFsError, tooLarge } from "../internal/errors.ts"
import { native } from "../internal/native.ts"
import { abortError, signalOf } from "./abort.ts"
import type { FileInfo, FileType } from "../PinnedRoot.ts"
import { type BigIntStats, type Stats, statsOf } from "./stats.ts"
import { handleReadStream, handleWriteStream, type ReadStreamOptions } from "./streams.ts"

/**
 * The flags a handle opens with. `w` empties an existing file only once its descriptor has been
 * checked; `wx`, `ax` create or fail (`EEXIST`).
 *
 * @since 0.2.0
 * @category models
 */
export type HandleFlag = "r" | "r+" | "w" | "wx" | "a" | "ax"

const handleFlags: ReadonlySet<string> = new Set(["r", "r+", "w", "wx", "a", "ax"])

/** The most one read of `readFile` asks for: an abort is seen between two of them. */
const readChunk = 8 * 1024 * 1024

/**
 * The options of a handle's `readFile`.
 *
 * @since 0.2.0
 * @category models
 */
export interface HandleReadFileOptions {
  /** Most bytes to read (default: the root's read limit). */
  readonly limit?: number | undefined
  readonly encoding?: "utf8" | "utf-8" | undefined
  /** Stops the read between two chunks. */
  readonly signal?: AbortSignal | undefined
}

/** What a root lends its handles: enough to open and to name errors, nothing of its API. @internal */
export interface HandleOwner {
  readonly path: string
  readonly readLimit: number
  readonly handle: { openPath(path: string, flag: number, mode: number | undefined): Promise<number> }
}

/** One descriptor's life, shared by its handle, its root's list and the collector's registry. */
interface FdState {
  fd: number
  pending: number
  closing: Promise<void> | undefined
  finish: (() => void) | undefined
  readonly owner: Set<FdState>
}

/** A node:fs callback. */
type Done<A> = (e: NodeJS.ErrnoException | null, a?: A) => void

/**
 * The key of a handle's callback read, kept off its public surface: streams use it.
 *
 * @internal
 */
export const readChunkOf: unique symbol = Symbol("pinnedfs.readChunk")

/** Each root's open descriptors, so that closing the root closes them. */
const byRoot = new WeakMap<object, Set<FdState>>()

const release = (state: FdState): void => {
  const fd = state.fd
  if (fd < 0) return
  state.fd = -1
  state.owner.delete(state)
  collected.unregister(state)
  fs.close(fd, () => state.finish?.())
}

/** A handle the collector found unreachable still closes its descriptor (once nothing is in flight). */
const collected = new FinalizationRegistry<FdState>((state) => {
  if (state.pending === 0) release(state)
  else state.closing ??= new Promise<void>((done) => (state.finish = done))
})

/**
 * Closes every handle `root` opened; calls already in flight finish first. What `PinnedRoot.close`
 * does to its handles.
 *
 * @internal
 */
export const closeHandlesOf = (root: object): Promise<void> => {
  const states = byRoot.get(root)
  if (states === undefined) return Promise.resolve()
  return Promise.all([...states].map(startClose)).then(() => undefined)
}

const startClose = (state: FdState): Promise<void> => {
  if (state.closing !== undefined) return state.closing
  state.closing = new Promise<void>((done) => {
    state.finish = done
  })
  if (state.pending === 0) release(state)
  return state.closing
}

const systemError = (u: unknown, path: string, root: string): PinnedFsError => {
  const e = u as NodeJS.ErrnoException
  if (typeof e?.code === "string") {
    return new PinnedFsError({ code: e.code, errno: e.errno, syscall: e.syscall ?? "", path, root })
  }
  return fromNative(u, path, root)
}

const typeOf = (s: fs.BigIntStats): FileType =>
  s.isFile()
    ? "File"
    : s.isDirectory()
      ? "Directory"
      : s.isSymbolicLink()
        ? "SymbolicLink"
        : s.isBlockDevice()
          ? "BlockDevice"
          : s.isCharacterDevice()
            ? "CharacterDevice"
            : s.isFIFO()
              ? "FIFO"
              : s.isSocket()
                ? "Socket"
                : "Unknown"

const ms = (ns: bigint): number => Number(ns) / 1e6

/** `fstat` in `PinnedRoot.stat`'s shape. @internal */
export const fileInfoOf = (s: fs.BigIntStats): FileInfo => ({
  type: typeOf(s),
  dev: s.dev,
  ino: s.ino,
  mode: Number(s.mode),
  nlink: s.nlink,
  uid: Number(s.uid),
  gid: Number(s.gid),
  rdev: s.rdev,
  size: s.size,
  blksize: s.blksize,
  blocks: s.blocks,
  atimeMs: ms(s.atimeNs),
  mtimeMs: ms(s.mtimeNs),
  ctimeMs: ms(s.ctimeNs),
  birthtimeMs: s.birthtimeNs === 0n ? -1 : ms(s.birthtimeNs),
  atimeNs: s.atimeNs,
  mtimeNs: s.mtimeNs,
  ctimeNs: s.ctimeNs,
  birthtimeNs: s.birthtimeNs
})

const integerIn = (u: unknown, what: string, lo: number, hi: number): number => {
  if (typeof u !== "number" || !Number.isSafeInteger(u) || u < lo || u > hi) {
    throw badArgumentPinnedFsError(`${what} must be an integer from ${lo} to ${hi}, got ${String(u)}`)
  }
  return u
}

/** A position: a byte offset, or `null`/`undefined` for the descriptor's current one. */
const positionOf = (u: unknown): number | null =>
  u === undefined || u === null ? null : integerIn(u, "position", 0, Number.MAX_SAFE_INTEGER)

/**
 * A regular file opened beneath a pinned root. Use it as `fs.promises`' `FileHandle`; close it
 * (or `await using` it). Closing its root closes it too.
 *
 * @since 0.2.0
 * @category models
 */
export class PinnedFileHandle implements AsyncDisposable {
  /** The path it was opened by, relative to its root. */
  readonly path: string
  /** The root's absolute path, for errors. */
  readonly root: string
  readonly #state: FdState
  readonly #readLimit: number

  /** @internal */
  constructor(state: FdState, path: string, root: string, readLimit: number) {
    this.#state = state
    this.path = path
    this.root = root
    this.#readLimit = readLimit
  }

  /** The descriptor number, or -1 once closed. Closing it behind the handle's back is the caller's bug. */
  get fd(): number {
    return this.#state.fd
  }

  /**
   * Runs `act` on the descriptor inside the gate: refused once closing, counted while in flight, and
   * `done` is called exactly once. Callback-shaped so that a stream's chunk costs no promise; `#use`
   * wraps it for the promise methods.
   */
  #gate<A>(syscall: string, act: (fd: number, done: Done<A>) => void, done: (e: Error | null, a?: A) => void): void {
    const state = this.#state
    if (state.closing !== undefined || state.fd < 0) {
      done(new PinnedFsError({ code: "EBADF", errno: -9, syscall, path: this.path, root: this.root, description: "file handle is closed" }))
      return
    }
    state.pending++
    const leave = () => {
      state.pending--
      if (state.pending === 0 && state.closing !== undefined) release(state)
    }
    try {
      act(state.fd, (e, a) => {
        leave()
        done(e ? systemError(e, this.path, this.root) : null, a)
      })
    } catch (u) {
      // node:fs refused the arguments before queueing anything: nothing is in flight.
      leave()
      done(u as Error)
    }
  }

  #use<A>(syscall: string, act: (fd: number, done: Done<A>) => void): Promise<A> {
    return new Promise<A>((resolve, reject) => this.#gate<A>(syscall, act, (e, a) => (e ? reject(e) : resolve(a as A))))
  }

  /**
   * One read for a stream, through the gate, answered by callback (no promise per chunk).
   *
   * @internal
   */
  [readChunkOf](buffer: Uint8Array, offset: number, length: number, position: number, done: (e: Error | null, n?: number) => void): void {
    this.#gate<number>("read", (fd, d) => fs.read(fd, buffer, offset, length, position, d), done)
  }

  /**
   * Reads into `buffer` (default: a fresh 16 KiB one) at `offset`, at most `length` bytes, from
   * `position` (`null`: the current position, which then advances), as `FileHandle.read`.
   */
  read<B extends Uint8Array = Buffer>(
    buffer?: B,
    offset = 0,
    length?: number,
    position?: number | null
  ): Promise<{ bytesRead: number; buffer: B }> {
    // Not an async function: the hot path pays one promise, and a bad argument still rejects.
    let buf: B, off: number, len: number, pos: number | null
    try {
      buf = (buffer ?? Buffer.alloc(16384)) as B
      if (!(buf instanceof Uint8Array)) throw badArgumentPinnedFsError("buffer must be a Uint8Array")
      off = integerIn(offset, "offset", 0, buf.byteLength)
      len = integerIn(length ?? buf.byteLength - off, "length", 0, buf.byteLength - off)
      pos = positionOf(position)
    } catch (e) {
      return Promise.reject(e)
    }
    return this.#use<{ bytesRead: number; buffer: B }>("read", (fd, done) =>
      fs.read(fd, buf, off, len, pos, (e, n) => done(e, { bytesRead: n, buffer: buf }))
    )
  }

  /** Writes `data` (bytes or UTF-8 text), all of it, at `position` (`null`: the current one; appends: the end). */
  async write(data: Uint8Array | string, position?: number | null): Promise<{ bytesWritten: number }> {
    const bytes = typeof data === "string" ? Buffer.from(data) : data
    if (!(bytes instanceof Uint8Array)) throw badArgumentPinnedFsError("data must be a Uint8Array or a string")
    let pos = positionOf(position)
    let at = 0
    while (at < bytes.byteLength) {
      const n = await this.#use<number>("write", (fd, done) => fs.write(fd, bytes, at, bytes.byteLength - at, pos, done))
      if (n === 0) {
        throw new PinnedFsError({ code: "EIO", errno: -5, syscall: "write", path: this.path, root: this.root, refusal: "writezero" })
      }
      at += n
      if (pos !== null) pos += n
    }
    return { bytesWritten: at }
  }

  /**
   * The rest of the file from the current position, bounded by the root's read limit (or
   * `limit`): a file over it, or one that grows past it while read, is `toolarge`. With an
   * `encoding`, decoded as UTF-8 text (invalid bytes become U+FFFD). With a `signal`, an abort stops
   * the read between two 8 MiB chunks (an `AbortError`; the descriptor's position is left where the
   * last chunk ended, as after any failed read).
   */
  async readFile(options: HandleReadFileOptions & { readonly encoding: "utf8" | "utf-8" }): Promise<string>
  async readFile(options?: HandleReadFileOptions & { readonly encoding?: undefined }): Promise<Buffer>
  async readFile(options?: HandleReadFileOptions): Promise<Buffer | string> {
    const limit = options?.limit === undefined ? this.#readLimit : integerIn(options.limit, "read limit", 1, 2 ** 31 - 1)
    const signal = signalOf(options?.signal)
    if (signal?.aborted) throw abortError(signal)
    const encoding = options?.encoding
    if (encoding !== undefined && encoding !== "utf8" && encoding !== "utf-8")
      throw badArgumentPinnedFsError(`unknown encoding '${String(encoding)}'`)
    const size = Number((await this.stat()).size)
    const over = () => tooLarge(`file exceeds the read limit of ${limit} bytes`, this.path)
    if (size > limit) throw over()
    const chunks: Array<Buffer> = []
    let total = 0
    for (;;) {
      // A chunk at a time, so that an abort lands between two reads rather than after the file.
      if (signal?.aborted) throw abortError(signal)
      const want = Math.min(Math.max(size - total, 65536), limit + 1 - total, readChunk)
      const { bytesRead, buffer } = await this.read(Buffer.allocUnsafe(want), 0, want, null)
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      total += bytesRead
      if (total > limit) throw over()
    }
    const whole = Buffer.concat(chunks, total)
    return encoding === undefined ? whole : new TextDecoder("utf-8").decode(whole)
  }

  /** Writes `data` from the current position, as `FileHandle.writeFile` (nothing is truncated first). */
  async writeFile(data: Uint8Array | string): Promise<void> {
    await this.write(data)
  }

  /** `fstat` of the descriptor, shaped as `PinnedRoot.stat` answers: `Stats`, or `BigIntStats` with `{ bigint: true }`. */
  async stat(options?: { readonly bigint?: false | undefined }): Promise<Stats>
  /** `fstat` of the descriptor as `fs.BigIntStats` (every integer a bigint). */
  async stat(options: { readonly bigint: true }): Promise<BigIntStats>
  async stat(options?: { readonly bigint?: boolean | undefined }): Promise<Stats | BigIntStats> {
    const bigint = options?.bigint ?? false
    if (typeof bigint !== "boolean") throw badArgumentPinnedFsError(`bigint must be a boolean, got ${String(bigint)}`)
    const s = await this.#use<fs.BigIntStats>("fstat", (fd, done) => fs.fstat(fd, { bigint: true }, done))
    return statsOf(fileInfoOf(s), bigint)
  }

  /** Sets the file's length (`ftruncate`): shorter cuts, longer pads with zeros. */
  async truncate(length = 0): Promise<void> {
    const len = integerIn(length, "length", 0, Number.MAX_SAFE_INTEGER)
    await this.#use<void>("ftruncate", (fd, done) => fs.ftruncate(fd, len, done))
  }

  async sync(): Promise<void> {
    await this.#use<void>("fsync", (fd, done) => fs.fsync(fd, done))
  }

  async datasync(): Promise<void> {
    await this.#use<void>("fdatasync", (fd, done) => fs.fdatasync(fd, done))
  }

  /** A `Readable` of the file from `start` to `end` (inclusive), through this handle; it does not close it. */
  createReadStream(options?: ReadStreamOptions): Readable {
    return handleReadStream(this, options, false)
  }

  /** A `Writable` into the file through this handle, from its current position; it does not close it. */
  createWriteStream(options?: { readonly highWaterMark?: number }): Writable {
    return handleWriteStream(this, options, false)
  }

  /** Closes the descriptor once the calls in flight have finished; later calls are refused (`EBADF`). Idempotent. */
  close(): Promise<void> {
    return startClose(this.#state)
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }
}

/**
 * Opens `path` beneath `root` with `flags` and, for a file it creates, `mode`.
 *
 * @internal
 */
export const openHandle = async (
  root: HandleOwner,
  path: unknown,
  flags: unknown,
  mode: unknown,
  rel: string
): Promise<PinnedFileHandle> => {
  const flag = flags ?? "r"
  if (typeof flag !== "string" || !handleFlags.has(flag)) {
    throw badArgumentPinnedFsError(
      `open flags must be one of r, r+, w, wx, a, ax; got ${typeof flag === "string" ? `'${flag.slice(0, 20)}'` : typeof flag}`
    )
  }
  const m = mode === undefined ? undefined : integerIn(mode, "mode", 0, 0o7777)
  let fd: number
  try {
    fd = await root.handle.openPath(rel, native.flags[flag as HandleFlag], m)
  } catch (u) {
    throw fromNative(u, String(path), root.path)
  }
  let owner = byRoot.get(root)
  if (owner === undefined) byRoot.set(root, (owner = new Set()))
  const state: FdState = { fd, pending: 0, closing: undefined, finish: undefined, owner }
  owner.add(state)
  const handle = new PinnedFileHandle(state, rel, root.path, root.readLimit)
  collected.register(handle, state, state)
  return handle
}
