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
import { type RawPath, rawOf, rawOfBytes } from "./raw.ts"

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
  "writezero",
  "changed"
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
  /** The anchor is a mount at this path (components) inside the directory the patterns are relative to. */
  readonly prefix?: ReadonlyArray<RawPath> | undefined
}

export interface DiscoverAnswer {
  readonly anchor: string
  readonly truncated: "entries" | "matches" | "depth" | null
  readonly directories: number
  readonly entries: number
  readonly matches: ReadonlyArray<{ readonly path: RawPath; readonly type: EntryType; readonly pattern: number; readonly identity: string }>
  readonly unreadable: ReadonlyArray<{
    readonly path: RawPath
    readonly errno: number
    readonly access: "none" | "read-only" | "inaccessible"
  }>
  readonly probes: ReadonlyArray<
    | { readonly status: "missing"; readonly errno: number }
    | { readonly status: "present"; readonly type: EntryType; readonly identity: string }
    | { readonly status: "refused"; readonly error: PinnedFsError }
    /** The path lies beneath one of `mounts`: probed from there. */
    | { readonly status: "beneath" }
  >
  readonly skipped: ReadonlyArray<RawPath>
  /** Directories the walk would have entered that are mounts (anchor-relative). */
  readonly mounts: ReadonlyArray<RawPath>
  /** A directory listed that was no longer as listed when the walk ended: its listing may have missed what moved. */
  readonly unstable: RawPath | null
}

export interface HeldMember {
  /** moved: it, or a directory on the way to it, is not where it was a moment ago. */
  readonly status: "held" | "missing" | "refused" | "moved"
  readonly type: EntryType
  readonly identity: string
  readonly nlink: bigint
  /** An O_PATH descriptor now owned by the caller, or -1. */
  readonly fd: number
  readonly error: PinnedFsError | null
  /** The directories between the anchor and it ("dev:ino", shortest path first). */
  readonly chain: ReadonlyArray<string>
  /** A lease (flock LOCK_SH) on an empty directory asked to be leased, owned by the caller, or -1. */
  readonly lease: number
}

/** A path for the final validation, and whether an empty directory there is leased. */
export interface HoldPath {
  readonly path: RawPath
  readonly lease: boolean
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
    .list(request.prefix ?? [], (w, s) => w.str(s))
  const r = new Reader(await call(root, w.bytes(), signal))
  const anchor = r.text()
  const truncated = truncationName[r.u8()] ?? null
  const directories = r.u32()
  const entries = r.u32()
  const matches = r.list((r) => ({ path: r.str(), type: typeName[r.u8()] ?? "unknown", pattern: r.u32(), identity: r.text() }))
  const unreadable = r.list((r) => ({ path: r.str(), errno: r.i32(), access: accessName[r.u8()] ?? "inaccessible" }))
  const probes = r.list((r): DiscoverAnswer["probes"][number] => {
    const status = r.u8()
    const type = typeName[r.u8()] ?? "unknown"
    const errno = r.i32()
    const error = r.error()
    const identity = r.text()
    if (status === 1) return { status: "present", type, identity }
    if (status === 3) return { status: "beneath" }
    if (status === 2)
      return {
        status: "refused",
        error: error ?? fromNative({ code: "EINVAL", errno: -22, syscall: "probe", path: "", refusal: "", description: "refused" })
      }
    return { status: "missing", errno }
  })
  const skipped = r.list((r) => r.str())
  const mounts = r.list((r) => r.str())
  const changed = r.u8() === 1
  const where = r.str()
  const unstable = changed ? where : null
  return { anchor, truncated, directories, entries, matches, unreadable, probes, skipped, mounts, unstable }
}

/**
 * Opens every path afresh beneath `root` with no link followed and answers a descriptor for each
 * (closed by the caller), with the root's path rechecked before and after.
 */
export const hold = async (root: PinnedRoot, paths: ReadonlyArray<RawPath>): Promise<HoldAnswer> => {
  const w = new Writer().u8(2).list(paths, (w, p) => w.str(p).u8(0))
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
  /** `purge`: the private temporary root; `permanent`: kept after the launch, never recorded. */
  readonly create: ReadonlyArray<{ readonly path: RawPath; readonly mode: number; readonly purge?: boolean; readonly permanent?: boolean }>
  readonly hold: ReadonlyArray<HoldPath>
}

/** Where launch records live: `parent`/`name` (see runtime.ts). */
export interface RuntimePlace {
  readonly parent: RawPath
  readonly name: RawPath
}

/** A launch's record: the descriptor (locked for the launch's life) and what it was created as. */
export interface RecordHandle {
  readonly fd: number
  readonly identity: string
  readonly name: string
  readonly place: RuntimePlace
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
  const status = (["held", "missing", "refused", "moved"] as const)[r.u8()] ?? "refused"
  const type = typeName[r.u8()] ?? "unknown"
  const identity = r.text()
  const nlink = r.u64()
  const fd = r.i32()
  const error = r.error()
  const chain = r.list((r) => `${r.u64()}:${r.u64()}`)
  const lease = r.i32()
  return { status, type, identity, nlink, fd, error, chain, lease }
}

/**
 * Pins every anchor afresh, makes every missing directory (one mkdirs program per anchor), then
 * holds every path of the final validation: one trip for all of it. Answers per anchor, in order;
 * the caller owns every descriptor and every directory answered, whatever failed.
 */
export const prepareDirectories = async (
  strategy: Strategy,
  anchors: ReadonlyArray<PrepareAnchorRequest>,
  record: { readonly place: RuntimePlace; readonly name: string } | null = null
): Promise<{ readonly record: RecordHandle | null; readonly anchors: Array<PreparedAnchor> }> => {
  const w = new Writer()
    .u8(3)
    .u8(strategyCode[strategy])
    .u8(record === null ? 0 : 1)
  if (record !== null) w.str(record.place.parent).str(record.place.name).str(rawOf(record.name))
  w.list(anchors, (w, a) => {
    const [dev, ino] = identityParts(a.expected)
    w.str(a.anchor)
      .u8(a.expected === null ? 0 : 1)
      .u64(dev)
      .u64(ino)
      .list(a.create, (w, c) =>
        w
          .str(c.path)
          .u32(c.mode)
          .u8((c.purge ? 1 : 0) | (c.permanent ? 2 : 0))
      )
      .list(a.hold, (w, p) => w.str(p.path).u8(p.lease ? 1 : 0))
  })
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  const recordFd = r.i32()
  const recordIdentity = r.text()
  const handle = record === null || recordFd < 0 ? null : { fd: recordFd, identity: recordIdentity, name: record.name, place: record.place }
  const answered = r.list((r): PreparedAnchor => {
    const identity = r.text()
    const error = r.error()
    const created = r.list((r) => ({ path: r.str(), identity: r.text() }))
    const stopped = r.error()
    if (r.u8() === 0) return { identity, error, created, stopped, held: null, holdError: null }
    const anchor = r.text()
    const members = r.list(readMember)
    return { identity, error, created, stopped, held: { anchor, members }, holdError: r.error() }
  })
  return { record: handle, anchors: answered }
}

export interface CleanupAnchorRequest {
  readonly anchor: RawPath
  /** As pinned when prepared: another directory there is refused whole. */
  readonly identity: string
  /** `purge`: the private temporary root, removed with everything in it; the others only when empty and not leased. */
  readonly owned: ReadonlyArray<{ readonly path: RawPath; readonly identity: string; readonly optional: boolean; readonly purge: boolean }>
}

/** What a sweep did with one thing a dead launch left. */
export interface SweptItem {
  readonly path: string
  readonly status: "removed" | "kept" | "refused"
  readonly why: string
}

export interface SweepAnswer {
  readonly items: ReadonlyArray<SweptItem>
  /** Records of dead launches removed whole. */
  readonly records: number
  /** Records of live launches, left alone. */
  readonly live: number
}

const sweptStatus = ["removed", "kept", "refused"] as const
const readSwept = (r: Reader): SweepAnswer => {
  const records = r.u32()
  const live = r.u32()
  const items = r.list((r) => ({ path: r.text(), status: sweptStatus[r.u8()] ?? "refused", why: r.text() }))
  return { items, records, live }
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
  anchors: ReadonlyArray<CleanupAnchorRequest>,
  record: RecordHandle | null = null,
  sweep = false
): Promise<{ readonly anchors: Array<CleanedAnchor>; readonly swept: SweepAnswer }> => {
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
            .u8((o.optional ? 1 : 0) | (o.purge ? 2 : 0) | 4)
        })
    })
  const [dev, ino] = identityParts(record?.identity ?? null)
  w.u32(record === null ? 0xffffffff : record.fd)
    .u64(dev)
    .u64(ino)
    .str(record?.place.parent ?? "")
    .str(record?.place.name ?? "")
    .str(rawOf(record?.name ?? ""))
    .u8(sweep && record !== null ? 1 : 0)
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  r.u32() // descriptors that named something else by then: not ours any more, left alone
  const cleaned = r.list((r): CleanedAnchor => {
    const error = r.error()
    const members = r.list((r) => ({ path: r.str(), status: rmdirStatus[r.u8()] ?? "refused", error: r.error() }))
    return { error, members }
  })
  return { anchors: cleaned, swept: readSwept(r) }
}

/** Sweeps the records of dead launches in `place` (all but `own`): one trip. */
export const sweepRecords = async (strategy: Strategy, place: RuntimePlace, own = ""): Promise<SweepAnswer> => {
  const w = new Writer().u8(5).u8(strategyCode[strategy]).str(place.parent).str(place.name).str(rawOf(own))
  return readSwept(new Reader(await call(await entryRoot(), w.bytes())))
}

/** Removes what bubblewrap made on the host for a refused sandbox's moved destinations: one trip. */
export const removeStrays = async (
  strategy: Strategy,
  sinceNs: bigint,
  record: RecordHandle | null,
  anchors: ReadonlyArray<{
    readonly path: RawPath
    readonly identity: string
    readonly dirs: ReadonlyArray<{ readonly path: RawPath; readonly identity: string }>
  }>
): Promise<{
  readonly removed: ReadonlyArray<RawPath>
  readonly kept: ReadonlyArray<{ readonly anchor: number; readonly path: RawPath; readonly identity: string }>
}> => {
  const [rdev, rino] = identityParts(record?.identity ?? null)
  const w = new Writer()
    .u8(7)
    .u8(strategyCode[strategy])
    .u64(sinceNs)
    .u32(record === null ? 0xffffffff : record.fd)
    .u64(rdev)
    .u64(rino)
    .list(anchors, (w, a) => {
      const [dev, ino] = identityParts(a.identity)
      w.str(a.path)
        .u64(dev)
        .u64(ino)
        .list(a.dirs, (w, d) => {
          const [dd, di] = identityParts(d.identity)
          w.str(d.path).u64(dd).u64(di)
        })
    })
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  const removed = r.list((r) => r.str())
  const kept = r.list((r) => ({ anchor: r.u32(), path: r.str(), identity: `${r.u64()}:${r.u64()}` }))
  return { removed, kept }
}

/** What one destination of the sandbox must be (see native/ops/verify_sandbox.cc). */
export interface ExpectedLayer {
  readonly anchor: number
  readonly path: RawPath
  readonly kind: "writable-bind" | "read-only-bind" | "mask-directory" | "mask-file"
  readonly identity: string | null
  readonly perms: number
  readonly steps: ReadonlyArray<{ readonly expect: "identity" | "tmpfs" | "any"; readonly identity: string | null }>
}

export interface VerifyRequest {
  readonly pid: number
  /** >= 0: wait until the sandbox blocks reading this descriptor (bubblewrap's --block-fd). */
  readonly blockFd: number
  readonly waitMs: number
  readonly record: RecordHandle | null
  readonly anchors: ReadonlyArray<{ readonly path: RawPath; readonly identity: string }>
  readonly layers: ReadonlyArray<ExpectedLayer>
}

const layerKind = { "writable-bind": 1, "read-only-bind": 2, "mask-directory": 3, "mask-file": 4 } as const
const stepKind = { identity: 0, tmpfs: 1, any: 2 } as const

/** Checks a started sandbox from outside (Linux): one trip on the thread pool. */
export const verifyRemote = async (
  request: VerifyRequest
): Promise<{ readonly ok: boolean; readonly moved: boolean; readonly died: boolean; readonly why: string }> => {
  const [dev, ino] = identityParts(request.record?.identity ?? null)
  const w = new Writer()
    .u8(6)
    .u32(request.pid)
    .u32(request.blockFd < 0 ? 0xffffffff : request.blockFd)
    .u32(request.waitMs)
    .u32(request.record === null ? 0xffffffff : request.record.fd)
    .u64(dev)
    .u64(ino)
    .list(request.anchors, (w, a) => {
      const [d, i] = identityParts(a.identity)
      w.str(a.path).u64(d).u64(i)
    })
    .list(request.layers, (w, l) => {
      const [d, i] = identityParts(l.identity)
      w.u32(l.anchor)
        .str(l.path)
        .u8(layerKind[l.kind])
        .u64(d)
        .u64(i)
        .u32(l.perms)
        .list(l.steps, (w, s) => {
          const [sd, si] = identityParts(s.identity)
          w.u8(stepKind[s.expect]).u64(sd).u64(si)
        })
    })
  const r = new Reader(await call(await entryRoot(), w.bytes()))
  return { ok: r.u8() === 1, moved: r.u8() === 1, died: r.u8() === 1, why: r.text() }
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
