/**
 * The byte form of the native confinement programs (`discover` and `hold` on a pinned anchor;
 * `prepare` and `cleanup`, which pin their own anchors), and the calls that run them. The layout is documented beside its C++ decoder
 * (`native/ops/confine_wire.cc`); both ends change together.
 *
 * @internal
 */
import * as fs from "node:fs"
import * as os from "node:os"
import { fromNative, PinnedFsError } from "../internal/errors.ts"
import type { NativeErrorInfo } from "../internal/native.ts"
import { PinnedRoot, type Strategy } from "../PinnedRoot.ts"
import { type RawPath, rawOfBytes } from "./raw.ts"

/** Access levels as the native side numbers them. */
export const accessCode = { "read-only": 1, inaccessible: 2 } as const
const accessName = ["none", "read-only", "inaccessible"] as const

export type EntryType = "unknown" | "file" | "directory" | "link" | "other"
const typeName: ReadonlyArray<EntryType> = ["unknown", "file", "directory", "link", "other"]
const truncationName = [null, "entries", "matches", "depth"] as const
const refusalName: ReadonlyArray<NativeErrorInfo["refusal"]> = [
  "",
  "symlink",
  "escape",
  "hardlink",
  "notregular",
  "badargument",
  "identity",
  "toolarge",
  "writezero"
]

class Writer {
  private buf = Buffer.allocUnsafe(4096)
  private at = 0
  private room(n: number): void {
    if (this.at + n <= this.buf.length) return
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.at + n))
    this.buf.copy(bigger, 0, 0, this.at)
    this.buf = bigger
  }
  u8(v: number): this {
    this.room(1)
    this.buf[this.at++] = v
    return this
  }
  u32(v: number): this {
    this.room(4)
    this.at = this.buf.writeUInt32LE(v >>> 0, this.at)
    return this
  }
  u64(v: bigint): this {
    this.room(8)
    this.at = this.buf.writeBigUInt64LE(v, this.at)
    return this
  }
  str(raw: RawPath): this {
    this.u32(raw.length) // one byte per character
    this.room(raw.length)
    this.at += this.buf.write(raw, this.at, "latin1")
    return this
  }
  list<A>(items: ReadonlyArray<A>, each: (w: this, a: A) => void): this {
    this.u32(items.length)
    for (const a of items) each(this, a)
    return this
  }
  bytes(): Uint8Array {
    return this.buf.subarray(0, this.at)
  }
}

class Reader {
  private at = 0
  private readonly b: Buffer
  constructor(b: Buffer) {
    this.b = b
  }
  u8(): number {
    return this.b.readUInt8(this.at++)
  }
  u32(): number {
    const v = this.b.readUInt32LE(this.at)
    this.at += 4
    return v
  }
  i32(): number {
    const v = this.b.readInt32LE(this.at)
    this.at += 4
    return v
  }
  u64(): bigint {
    const v = this.b.readBigUInt64LE(this.at)
    this.at += 8
    return v
  }
  str(): RawPath {
    const n = this.u32()
    const s = rawOfBytes(this.b.subarray(this.at, this.at + n))
    this.at += n
    return s
  }
  text(): string {
    const n = this.u32()
    const s = this.b.toString("utf8", this.at, this.at + n)
    this.at += n
    return s
  }
  list<A>(each: (r: this) => A): Array<A> {
    const n = this.u32()
    const out: Array<A> = []
    for (let i = 0; i < n; i++) out.push(each(this))
    return out
  }
  error(): PinnedFsError | null {
    const code = this.text()
    const errno = this.i32()
    const syscall = this.text()
    const path = this.text()
    const refusal = refusalName[this.u8()] ?? ""
    const description = this.text()
    if (errno === 0 && refusal === "") return null
    return fromNative({ code, errno: -errno, syscall, path, refusal, description })
  }
}

/** One pattern a discovery walk matches, relative to its anchor. */
export interface WirePattern {
  readonly glob: RawPath
  readonly access: "read-only" | "inaccessible"
}

export interface DiscoverRequest {
  readonly maxEntries: number
  readonly maxMatches: number
  readonly maxDepth: number
  readonly patterns: ReadonlyArray<WirePattern>
  readonly skip: ReadonlyArray<RawPath>
  readonly probes: ReadonlyArray<RawPath>
}

export interface DiscoverAnswer {
  readonly anchor: string
  readonly truncated: "entries" | "matches" | "depth" | null
  readonly directories: number
  readonly entries: number
  readonly matches: ReadonlyArray<{ readonly path: RawPath; readonly type: EntryType; readonly pattern: number }>
  readonly unreadable: ReadonlyArray<{
    readonly path: RawPath
    readonly errno: number
    readonly access: "none" | "read-only" | "inaccessible"
  }>
  readonly probes: ReadonlyArray<
    | { readonly status: "missing"; readonly errno: number }
    | { readonly status: "present"; readonly type: EntryType }
    | { readonly status: "refused"; readonly error: PinnedFsError }
  >
  readonly skipped: ReadonlyArray<RawPath>
}

export interface HeldMember {
  readonly status: "held" | "missing" | "refused"
  readonly type: EntryType
  readonly identity: string
  readonly nlink: bigint
  /** An O_PATH descriptor now owned by the caller, or -1. */
  readonly fd: number
  readonly error: PinnedFsError | null
}

export interface HoldAnswer {
  readonly anchor: string
  readonly members: ReadonlyArray<HeldMember>
}

const call = async (root: PinnedRoot, request: Uint8Array, signal?: AbortSignal): Promise<Buffer> => {
  signal?.throwIfAborted()
  let pending: [Promise<Buffer>, () => void]
  try {
    pending = root.handle.confine(request)
  } catch (u) {
    throw fromNative(u, root.path)
  }
  const [answer, cancel] = pending
  const onAbort = () => cancel()
  signal?.addEventListener("abort", onAbort, { once: true })
  try {
    return await answer
  } catch (u) {
    const e = fromNative(u, root.path)
    // The core's errno names stop short of ECANCELED: name it here, where cancelling is ours.
    if (e.errno === -os.constants.errno.ECANCELED) {
      throw new PinnedFsError({
        code: "ECANCELED",
        errno: e.errno,
        syscall: e.syscall,
        path: e.path,
        description: e.description,
        reason: "Unknown"
      })
    }
    throw e
  } finally {
    signal?.removeEventListener("abort", onAbort)
  }
}

/** Runs a discovery walk of `root`, off the JavaScript thread, cancelled by `signal`. */
export const discover = async (root: PinnedRoot, request: DiscoverRequest, signal?: AbortSignal): Promise<DiscoverAnswer> => {
  const w = new Writer()
    .u8(1)
    .u32(request.maxEntries)
    .u32(request.maxMatches)
    .u32(request.maxDepth)
    .list(request.patterns, (w, p) => w.str(p.glob).u8(accessCode[p.access]))
    .list(request.skip, (w, s) => w.str(s))
    .list(request.probes, (w, s) => w.str(s))
  const r = new Reader(await call(root, w.bytes(), signal))
  const anchor = r.text()
  const truncated = truncationName[r.u8()] ?? null
  const directories = r.u32()
  const entries = r.u32()
  const matches = r.list((r) => ({ path: r.str(), type: typeName[r.u8()] ?? "unknown", pattern: r.u32() }))
  const unreadable = r.list((r) => ({ path: r.str(), errno: r.i32(), access: accessName[r.u8()] ?? "inaccessible" }))
  const probes = r.list((r): DiscoverAnswer["probes"][number] => {
    const status = r.u8()
    const type = typeName[r.u8()] ?? "unknown"
    const errno = r.i32()
    const error = r.error()
    if (status === 1) return { status: "present", type }
    if (status === 2)
      return {
        status: "refused",
        error: error ?? fromNative({ code: "EINVAL", errno: -22, syscall: "probe", path: "", refusal: "", description: "refused" })
      }
    return { status: "missing", errno }
  })
  const skipped = r.list((r) => r.str())
  return { anchor, truncated, directories, entries, matches, unreadable, probes, skipped }
}

/**
 * Opens every path afresh beneath `root` with no link followed and answers a descriptor for each
 * (closed by the caller), with the root's path rechecked before and after.
 */
export const hold = async (root: PinnedRoot, paths: ReadonlyArray<RawPath>): Promise<HoldAnswer> => {
  const w = new Writer().u8(2).list(paths, (w, p) => w.str(p))
  const r = new Reader(await call(root, w.bytes()))
  const anchor = r.text()
  const members = r.list(readMember)
  return { anchor, members }
}

const strategyCode: Record<Strategy, number> = { auto: 0, openat2: 1, walk: 2 }

/** "dev:ino" as the two numbers the wire carries. */
const identityParts = (identity: string | null): [bigint, bigint] => {
  const m = identity === null ? null : /^(\d+):(\d+)$/.exec(identity)
  return m ? [BigInt(m[1]!), BigInt(m[2]!)] : [0n, 0n]
}

let entry: Promise<PinnedRoot> | undefined
/**
 * The handle `prepare` and `cleanup` are called on. They name their anchors by absolute path and
 * pin them inside their trip, so they run only on a handle of `/` (the native side refuses any
 * other): pinned once per thread rather than once per launch, which would cost each launch a trip.
 */
const entryRoot = (): Promise<PinnedRoot> => {
  entry ??= PinnedRoot.open("/").catch((e: unknown) => {
    entry = undefined
    throw e
  })
  return entry
}

export interface PrepareAnchorRequest {
  /** Absolute and canonical: pinned afresh inside the trip. */
  readonly anchor: RawPath
  /** The identity discovery saw there: another directory refuses the launch. */
  readonly expected: string | null
  readonly create: ReadonlyArray<{ readonly path: RawPath; readonly mode: number }>
  readonly hold: ReadonlyArray<RawPath>
}

export interface PreparedAnchor {
  /** As pinned in this trip ("" when the pin failed). */
  readonly identity: string
  /** Why nothing was made or held here (pin failed, anchor changed, malformed plan). */
  readonly error: PinnedFsError | null
  readonly created: ReadonlyArray<{ readonly path: RawPath; readonly identity: string }>
  /** Why the creation program stopped (what it made before is in `created`). */
  readonly stopped: PinnedFsError | null
  /** The final validation of this anchor, when it ran. */
  readonly held: HoldAnswer | null
  readonly holdError: PinnedFsError | null
}

const readMember = (r: Reader): HeldMember => {
  const status = (["held", "missing", "refused"] as const)[r.u8()] ?? "refused"
  const type = typeName[r.u8()] ?? "unknown"
  const identity = r.text()
  const nlink = r.u64()
  const fd = r.i32()
  const error = r.error()
  return { status, type, identity, nlink, fd, error }
}

/**
 * Pins every anchor afresh, makes every missing directory (one mkdirs program per anchor), then
 * holds every path of the final validation: one trip for all of it. Answers per anchor, in order;
 * the caller owns every descriptor and every directory answered, whatever failed.
 */
export const prepareDirectories = async (
  strategy: Strategy,
  anchors: ReadonlyArray<PrepareAnchorRequest>
): Promise<Array<PreparedAnchor>> => {
  const w = new Writer()
    .u8(3)
    .u8(strategyCode[strategy])
    .list(anchors, (w, a) => {
      const [dev, ino] = identityParts(a.expected)
      w.str(a.anchor)
        .u8(a.expected === null ? 0 : 1)
        .u64(dev)
        .u64(ino)
        .list(a.create, (w, c) => w.str(c.path).u32(c.mode))
        .list(a.hold, (w, p) => w.str(p))
    })
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  return r.list((r): PreparedAnchor => {
    const identity = r.text()
    const error = r.error()
    const created = r.list((r) => ({ path: r.str(), identity: r.text() }))
    const stopped = r.error()
    if (r.u8() === 0) return { identity, error, created, stopped, held: null, holdError: null }
    const anchor = r.text()
    const members = r.list(readMember)
    return { identity, error, created, stopped, held: { anchor, members }, holdError: r.error() }
  })
}

export interface CleanupAnchorRequest {
  readonly anchor: RawPath
  /** As pinned when prepared: another directory there is refused whole. */
  readonly identity: string
  readonly owned: ReadonlyArray<{ readonly path: RawPath; readonly identity: string; readonly optional: boolean }>
}

/** A descriptor a preparation handed out, and the identity of what it was opened on. */
export interface Release {
  readonly fd: number
  readonly identity: string
}

export interface CleanedAnchor {
  readonly error: PinnedFsError | null
  readonly members: ReadonlyArray<{
    readonly path: RawPath
    readonly status: "removed" | "kept" | "missing" | "refused"
    readonly error: PinnedFsError | null
  }>
}

const rmdirStatus = ["removed", "kept", "missing", "refused"] as const

/**
 * Closes `release` (descriptors a preparation handed out) on the thread pool, then removes each
 * anchor's directories with one rmdirs program, each anchor pinned afresh and refused whole if it
 * is no longer the directory prepared: one trip.
 */
export const cleanupDirectories = async (
  strategy: Strategy,
  release: ReadonlyArray<Release>,
  anchors: ReadonlyArray<CleanupAnchorRequest>
): Promise<Array<CleanedAnchor>> => {
  const w = new Writer()
    .u8(4)
    .u8(strategyCode[strategy])
    .list(release, (w, x) => {
      const [dev, ino] = identityParts(x.identity)
      w.u32(x.fd).u64(dev).u64(ino)
    })
    .list(anchors, (w, a) => {
      const [dev, ino] = identityParts(a.identity)
      w.str(a.anchor)
        .u64(dev)
        .u64(ino)
        .list(a.owned, (w, o) => {
          const [d, i] = identityParts(o.identity)
          w.str(o.path)
            .u64(d)
            .u64(i)
            .u8(o.optional ? 1 : 0)
        })
    })
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  r.u32() // descriptors that named something else by then: not ours any more, left alone
  return r.list((r): CleanedAnchor => {
    const error = r.error()
    const members = r.list((r) => ({ path: r.str(), status: rmdirStatus[r.u8()] ?? "refused", error: r.error() }))
    return { error, members }
  })
}

/**
 * Closes a descriptor the final validation handed out. Synchronously: an O_PATH descriptor's close
 * never waits on I/O, and a plan holds hundreds of them (one thread-pool trip each would cost more
 * than the validation).
 */
export const closeHeld = (fd: number): void => {
  try {
    fs.closeSync(fd)
  } catch {
    // already closed: nothing to release
  }
}
