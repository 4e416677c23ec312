/**
 * The addon's stat answer: one `Float64Array`, not an object. Building an object of twenty named
 * properties and eleven `BigInt`s through Node-API cost the JavaScript thread more than the `statx`
 * itself; a typed array is one copy, and JavaScript reads it at the speed of an array. The layout
 * (native/binding/results.h) comes from the addon itself, so the two sides cannot disagree:
 *
 * - the number form: each field as the double Node's own `fs.Stats` carries, `type` a code;
 * - then seven exact unsigned 64-bit integers (`dev`, `ino`, `nlink`, `rdev`, `size`, `blksize`,
 *   `blocks`), read through a `BigUint64Array` over the same bytes, only when `bigint` is asked;
 * - then the four times in exact signed nanoseconds, through a `BigInt64Array`.
 *
 * Every consumer that wants the public {@link FileInfo} shape gets it from {@link fileInfoOf}; the
 * hot paths (`PinnedRoot.stat`, the extension's `File.Info`) read the slots directly.
 *
 * @internal
 */
// The header's @internal marks the first statement, which the declarations then leave out: that
// must be the value import, never the types the declarations use.
import { native } from "./native.ts"
import type { FileInfo, FileType } from "../PinnedRoot.ts"

/** A stat answer as the addon gives it (and as {@link recordOf} makes one from a `FileInfo`). */
export type StatRecord = Float64Array

const { numbers, exact, nanos, types } = native.statRecord

const slotOf = (names: ReadonlyArray<string>, name: string): number => {
  const i = names.indexOf(name)
  if (i < 0) throw new Error(`pinnedfs: the addon's stat record has no ${name} slot`)
  return i
}

/** The number form's slots. */
export const TYPE = slotOf(numbers, "type")
export const DEV = slotOf(numbers, "dev")
export const INO = slotOf(numbers, "ino")
export const MODE = slotOf(numbers, "mode")
export const NLINK = slotOf(numbers, "nlink")
export const UID = slotOf(numbers, "uid")
export const GID = slotOf(numbers, "gid")
export const RDEV = slotOf(numbers, "rdev")
export const SIZE = slotOf(numbers, "size")
export const BLKSIZE = slotOf(numbers, "blksize")
export const BLOCKS = slotOf(numbers, "blocks")
export const ATIME_MS = slotOf(numbers, "atimeMs")
export const MTIME_MS = slotOf(numbers, "mtimeMs")
export const CTIME_MS = slotOf(numbers, "ctimeMs")
/** -1 where the platform reported no birth time. */
export const BIRTHTIME_MS = slotOf(numbers, "birthtimeMs")

/** Indexes into {@link exactOf}'s array. */
export const X_DEV = slotOf(exact, "dev")
export const X_INO = slotOf(exact, "ino")
export const X_NLINK = slotOf(exact, "nlink")
export const X_RDEV = slotOf(exact, "rdev")
export const X_SIZE = slotOf(exact, "size")
export const X_BLKSIZE = slotOf(exact, "blksize")
export const X_BLOCKS = slotOf(exact, "blocks")
/** Indexes into {@link nanosOf}'s array; the birth time's is 0 where none was reported. */
export const N_ATIME = slotOf(nanos, "atimeNs")
export const N_MTIME = slotOf(nanos, "mtimeNs")
export const N_CTIME = slotOf(nanos, "ctimeNs")
export const N_BIRTHTIME = slotOf(nanos, "birthtimeNs")

const LENGTH = numbers.length + exact.length + nanos.length
const EXACT_AT = numbers.length * 8
const NANOS_AT = (numbers.length + exact.length) * 8

/** Whether an addon answer is a stat record. */
export const isStatRecord = (v: unknown): v is StatRecord => v instanceof Float64Array && v.length === LENGTH

/** The record's kind. */
export const typeOf = (r: StatRecord): FileType => (types[r[TYPE]!] ?? "Unknown") as FileType

/** The exact 64-bit integers, unsigned. */
export const exactOf = (r: StatRecord): BigUint64Array => new BigUint64Array(r.buffer, r.byteOffset + EXACT_AT, exact.length)

/** The exact nanosecond times, signed (a time before 1970 is negative). */
export const nanosOf = (r: StatRecord): BigInt64Array => new BigInt64Array(r.buffer, r.byteOffset + NANOS_AT, nanos.length)

/**
 * The public `FileInfo` of a record: what `batch`'s stat members and the MCP server's reads answer.
 *
 * @internal
 */
export const fileInfoOf = (r: StatRecord): FileInfo => {
  const x = exactOf(r)
  const t = nanosOf(r)
  return {
    type: typeOf(r),
    dev: x[X_DEV]!,
    ino: x[X_INO]!,
    mode: r[MODE]!,
    nlink: x[X_NLINK]!,
    uid: r[UID]!,
    gid: r[GID]!,
    rdev: x[X_RDEV]!,
    size: x[X_SIZE]!,
    blksize: x[X_BLKSIZE]!,
    blocks: x[X_BLOCKS]!,
    atimeMs: r[ATIME_MS]!,
    mtimeMs: r[MTIME_MS]!,
    ctimeMs: r[CTIME_MS]!,
    birthtimeMs: r[BIRTHTIME_MS]!,
    atimeNs: t[N_ATIME]!,
    mtimeNs: t[N_MTIME]!,
    ctimeNs: t[N_CTIME]!,
    birthtimeNs: t[N_BIRTHTIME]!
  }
}

/** Whole nanoseconds of a millisecond time, where a record made elsewhere carries none. */
const nsOf = (ms: number): bigint => BigInt(Math.floor(ms)) * 1_000_000n

/**
 * A record from a `FileInfo` made elsewhere (a file handle's `fstat`), so that `Stats` has one
 * source. Each double is the one the addon would have written: 64-bit values rounded to the
 * nearest, as `Number` rounds them.
 *
 * @internal
 */
export const recordOf = (info: FileInfo): StatRecord => {
  const r = new Float64Array(LENGTH)
  const type = types.indexOf(info.type)
  r[TYPE] = type < 0 ? types.indexOf("Unknown") : type
  r[DEV] = Number(info.dev)
  r[INO] = Number(info.ino)
  r[MODE] = info.mode
  r[NLINK] = Number(info.nlink)
  r[UID] = info.uid
  r[GID] = info.gid
  r[RDEV] = Number(info.rdev)
  r[SIZE] = Number(info.size)
  r[BLKSIZE] = Number(info.blksize)
  r[BLOCKS] = Number(info.blocks)
  r[ATIME_MS] = info.atimeMs
  r[MTIME_MS] = info.mtimeMs
  r[CTIME_MS] = info.ctimeMs
  r[BIRTHTIME_MS] = info.birthtimeMs
  const x = exactOf(r)
  x[X_DEV] = info.dev
  x[X_INO] = info.ino
  x[X_NLINK] = info.nlink
  x[X_RDEV] = info.rdev
  x[X_SIZE] = info.size
  x[X_BLKSIZE] = info.blksize
  x[X_BLOCKS] = info.blocks
  const t = nanosOf(r)
  t[N_ATIME] = info.atimeNs ?? nsOf(info.atimeMs)
  t[N_MTIME] = info.mtimeNs ?? nsOf(info.mtimeMs)
  t[N_CTIME] = info.ctimeNs ?? nsOf(info.ctimeMs)
  t[N_BIRTHTIME] = info.birthtimeNs ?? nsOf(Math.max(info.birthtimeMs, 0))
  return r
}
