/**
 * `fs.Stats`-shaped answers for `PinnedRoot.stat` (and any other method that describes a file, such
 * as a file handle's `stat`): built from the addon's lstat record, field for field as
 * `node:fs/promises` `lstat` answers, with the type tests as methods.
 *
 * Node's choice is kept: numbers by default (`size`, `ino`, `dev`, … as `number`; exact below 2^53,
 * which every size and every inode number on a real file system is), and `{ bigint: true }` for
 * every integer as `bigint` (`dev:ino` identities of any width, compared exactly). One addition:
 * `type`, the file's kind as one word (`"File"`, `"Directory"`, `"SymbolicLink"`, …), as Effect's
 * `File.Info` names it. The bigint form's `atimeNs`/`mtimeNs`/`ctimeNs`/`birthtimeNs` are the
 * addon's own whole nanoseconds, exact (the `…Ms` doubles hold a nanosecond fraction only to about
 * a quarter of a microsecond, so they are never read for it).
 *
 * A birth time the file system does not keep is `0` (the epoch), as Node reports it.
 *
 * @since 0.1.0
 */
import type { FileInfo, FileType } from "../PinnedRoot.ts"

/** Node's `Date` of a millisecond time: rounded, as `fs.Stats` builds it. */
const dateOf = (ms: number): Date => new Date(Math.round(ms))

/** The native record's birth time, where -1 says none is kept: Node reports 0 there. */
const birthOf = (info: FileInfo): number => Math.max(info.birthtimeMs, 0)

/** Each type test of `fs.Stats`, with the `type` it answers true for. */
const typeTests = {
  isFile: "File",
  isDirectory: "Directory",
  isSymbolicLink: "SymbolicLink",
  isFIFO: "FIFO",
  isSocket: "Socket",
  isBlockDevice: "BlockDevice",
  isCharacterDevice: "CharacterDevice"
} as const satisfies Record<string, FileType>

/** The type tests of `fs.Stats`, read from `type`: one method per row of `typeTests`. */
type TypeTests = { readonly [K in keyof typeof typeTests]: () => boolean }

// Declaration merging gives the class the methods' types; the loop below gives it their bodies, on
// the prototype (not own properties), as `fs.Stats` has them.
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: every merged method is defined just below
abstract class Described {
  readonly type: FileType
  readonly atime: Date
  readonly mtime: Date
  readonly ctime: Date
  readonly birthtime: Date
  /** The kind, and the four times as `Date`s from their milliseconds (access, modification, change, birth). */
  constructor(type: FileType, ms: readonly [number, number, number, number]) {
    this.type = type
    this.atime = dateOf(ms[0])
    this.mtime = dateOf(ms[1])
    this.ctime = dateOf(ms[2])
    this.birthtime = dateOf(ms[3])
  }
}
interface Described extends TypeTests {}
for (const [method, type] of Object.entries(typeTests)) {
  Object.defineProperty(Described.prototype, method, {
    value(this: Described): boolean {
      return this.type === type
    },
    writable: true,
    configurable: true
  })
}

/**
 * What `stat(path)` answers: `fs.Stats`'s fields and methods, plus `type`.
 *
 * @since 0.1.0
 * @category models
 */
export class Stats extends Described {
  readonly dev: number
  readonly ino: number
  readonly mode: number
  readonly nlink: number
  readonly uid: number
  readonly gid: number
  readonly rdev: number
  readonly size: number
  readonly blksize: number
  readonly blocks: number
  readonly atimeMs: number
  readonly mtimeMs: number
  readonly ctimeMs: number
  readonly birthtimeMs: number
  /** @internal */
  constructor(info: FileInfo) {
    super(info.type, [info.atimeMs, info.mtimeMs, info.ctimeMs, birthOf(info)])
    this.dev = Number(info.dev)
    this.ino = Number(info.ino)
    this.mode = info.mode
    this.nlink = Number(info.nlink)
    this.uid = info.uid
    this.gid = info.gid
    this.rdev = Number(info.rdev)
    this.size = Number(info.size)
    this.blksize = Number(info.blksize)
    this.blocks = Number(info.blocks)
    this.atimeMs = info.atimeMs
    this.mtimeMs = info.mtimeMs
    this.ctimeMs = info.ctimeMs
    this.birthtimeMs = birthOf(info)
  }
}

/**
 * What `stat(path, { bigint: true })` answers: `fs.BigIntStats`'s fields (every integer and every
 * `…Ms` a `bigint`, the `…Ms` whole milliseconds as Node's are, the `…Ns` exact nanoseconds) and
 * methods, plus `type`.
 *
 * @since 0.1.0
 * @category models
 */
export class BigIntStats extends Described {
  readonly dev: bigint
  readonly ino: bigint
  readonly mode: bigint
  readonly nlink: bigint
  readonly uid: bigint
  readonly gid: bigint
  readonly rdev: bigint
  readonly size: bigint
  readonly blksize: bigint
  readonly blocks: bigint
  readonly atimeMs: bigint
  readonly mtimeMs: bigint
  readonly ctimeMs: bigint
  readonly birthtimeMs: bigint
  readonly atimeNs: bigint
  readonly mtimeNs: bigint
  readonly ctimeNs: bigint
  readonly birthtimeNs: bigint
  /** @internal */
  constructor(info: FileInfo) {
    const birth = birthOf(info)
    // Whole milliseconds, as Node's bigint times are; the Dates are built from the same.
    const ms = [info.atimeMs, info.mtimeMs, info.ctimeMs, birth].map(Math.floor) as [number, number, number, number]
    super(info.type, ms)
    this.dev = info.dev
    this.ino = info.ino
    this.mode = BigInt(info.mode)
    this.nlink = info.nlink
    this.uid = BigInt(info.uid)
    this.gid = BigInt(info.gid)
    this.rdev = info.rdev
    this.size = info.size
    this.blksize = info.blksize
    this.blocks = info.blocks
    this.atimeMs = BigInt(ms[0])
    this.mtimeMs = BigInt(ms[1])
    this.ctimeMs = BigInt(ms[2])
    this.birthtimeMs = BigInt(ms[3])
    this.atimeNs = info.atimeNs ?? this.atimeMs * 1_000_000n
    this.mtimeNs = info.mtimeNs ?? this.mtimeMs * 1_000_000n
    this.ctimeNs = info.ctimeNs ?? this.ctimeMs * 1_000_000n
    this.birthtimeNs = info.birthtimeNs ?? this.birthtimeMs * 1_000_000n
  }
}

/**
 * The `fs.Stats`-shaped answer for an lstat record: `Stats`, or `BigIntStats` when `bigint`.
 *
 * @since 0.1.0
 */
export function statsOf(info: FileInfo, bigint?: false): Stats
export function statsOf(info: FileInfo, bigint: true): BigIntStats
export function statsOf(info: FileInfo, bigint?: boolean): Stats | BigIntStats
export function statsOf(info: FileInfo, bigint = false): Stats | BigIntStats {
  return bigint ? new BigIntStats(info) : new Stats(info)
}
