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
import {
  ATIME_MS,
  BIRTHTIME_MS,
  BLKSIZE,
  BLOCKS,
  CTIME_MS,
  DEV,
  exactOf,
  GID,
  INO,
  MODE,
  MTIME_MS,
  N_ATIME,
  N_BIRTHTIME,
  N_CTIME,
  N_MTIME,
  NLINK,
  nanosOf,
  RDEV,
  recordOf,
  SIZE,
  type StatRecord,
  typeOf,
  UID,
  X_BLKSIZE,
  X_BLOCKS,
  X_DEV,
  X_INO,
  X_NLINK,
  X_RDEV,
  X_SIZE
} from "../internal/statRecord.ts"
import type { FileInfo, FileType } from "../PinnedRoot.ts"

/** Node's `Date` of a millisecond time: rounded, as `fs.Stats` builds it. */
const dateOf = (ms: number | bigint): Date => new Date(Math.round(Number(ms)))

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

/** The four `Date`s, each built from its milliseconds field. */
type Dates = { atime: Date; mtime: Date; ctime: Date; birthtime: Date }

/** Each `Date` field beside the milliseconds field it is built from. */
const dateFields = [
  ["atime", "atimeMs"],
  ["mtime", "mtimeMs"],
  ["ctime", "ctimeMs"],
  ["birthtime", "birthtimeMs"]
] as const

// Declaration merging gives the class the methods' and the Dates' types; the loops below give them
// their bodies, on the prototype (not own properties), as `fs.Stats` has them. The Dates are built
// on first read and kept, as Node (22 and later) builds its own: most callers of a stat never read
// one, and then none is built.
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: every merged member is defined just below
abstract class Described {
  readonly type: FileType
  /** The Dates read (or assigned) so far, by `dateFields` index; made on the first. */
  #dates: Array<Date | undefined> | undefined = undefined
  abstract readonly atimeMs: number | bigint
  abstract readonly mtimeMs: number | bigint
  abstract readonly ctimeMs: number | bigint
  abstract readonly birthtimeMs: number | bigint
  constructor(type: FileType) {
    this.type = type
  }
  static {
    // Enumerable accessors, as Node's own: a spread carries none of them (nor does Node's).
    for (const [i, [field, ms]] of dateFields.entries()) {
      Object.defineProperty(Described.prototype, field, {
        get(this: Described): Date {
          const dates = (this.#dates ??= [])
          return (dates[i] ??= dateOf(this[ms]))
        },
        set(this: Described, value: Date) {
          ;(this.#dates ??= [])[i] = value
        },
        enumerable: true,
        configurable: true
      })
    }
  }
}
interface Described extends TypeTests, Dates {}
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
  constructor(r: StatRecord) {
    super(typeOf(r))
    this.dev = r[DEV]!
    this.ino = r[INO]!
    this.mode = r[MODE]!
    this.nlink = r[NLINK]!
    this.uid = r[UID]!
    this.gid = r[GID]!
    this.rdev = r[RDEV]!
    this.size = r[SIZE]!
    this.blksize = r[BLKSIZE]!
    this.blocks = r[BLOCKS]!
    this.atimeMs = r[ATIME_MS]!
    this.mtimeMs = r[MTIME_MS]!
    this.ctimeMs = r[CTIME_MS]!
    // No birth time kept (-1): Node reports the epoch.
    this.birthtimeMs = Math.max(r[BIRTHTIME_MS]!, 0)
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
  constructor(r: StatRecord) {
    super(typeOf(r))
    const x = exactOf(r)
    const t = nanosOf(r)
    this.dev = x[X_DEV]!
    this.ino = x[X_INO]!
    this.mode = BigInt(r[MODE]!)
    this.nlink = x[X_NLINK]!
    this.uid = BigInt(r[UID]!)
    this.gid = BigInt(r[GID]!)
    this.rdev = x[X_RDEV]!
    this.size = x[X_SIZE]!
    this.blksize = x[X_BLKSIZE]!
    this.blocks = x[X_BLOCKS]!
    // Whole milliseconds, as Node's bigint times are; the Dates are built from the same.
    this.atimeMs = BigInt(Math.floor(r[ATIME_MS]!))
    this.mtimeMs = BigInt(Math.floor(r[MTIME_MS]!))
    this.ctimeMs = BigInt(Math.floor(r[CTIME_MS]!))
    this.birthtimeMs = BigInt(Math.floor(Math.max(r[BIRTHTIME_MS]!, 0)))
    this.atimeNs = t[N_ATIME]!
    this.mtimeNs = t[N_MTIME]!
    this.ctimeNs = t[N_CTIME]!
    this.birthtimeNs = t[N_BIRTHTIME]!
  }
}

/**
 * The `fs.Stats`-shaped answer for the addon's stat record: `Stats`, or `BigIntStats` when `bigint`.
 *
 * @since 0.1.0
 */
export function statsOfRecord(r: StatRecord, bigint?: false): Stats
export function statsOfRecord(r: StatRecord, bigint: true): BigIntStats
export function statsOfRecord(r: StatRecord, bigint?: boolean): Stats | BigIntStats
export function statsOfRecord(r: StatRecord, bigint = false): Stats | BigIntStats {
  return bigint ? new BigIntStats(r) : new Stats(r)
}

/**
 * The `fs.Stats`-shaped answer for an lstat record made elsewhere (a file handle's `fstat`):
 * `Stats`, or `BigIntStats` when `bigint`.
 *
 * @since 0.1.0
 */
export function statsOf(info: FileInfo, bigint?: false): Stats
export function statsOf(info: FileInfo, bigint: true): BigIntStats
export function statsOf(info: FileInfo, bigint?: boolean): Stats | BigIntStats
export function statsOf(info: FileInfo, bigint = false): Stats | BigIntStats {
  return statsOfRecord(recordOf(info), bigint)
}
