/**
 * Effect's `File.Info`, built in one place for every executor: field for field the way
 * `@effect/platform-node`'s `NodeFileSystem` builds it from `fs.lstat(path, { bigint: true })`
 * (64-bit quantities stay `bigint`, sizes are `ByteSize`, times are `Date`s in `Option`s), so a
 * caller sees the same record from the native extension, the path-based fallback and Effect's own
 * Node file system. The two sources differ only in how they spell a stat; each is read into
 * {@link Stat} and built by {@link make}.
 *
 * @since 0.1.0
 */
import { BigInt as BI, ByteSize, type FileSystem, Option } from "effect"
import type { BigIntStats } from "node:fs"
import {
  ATIME_MS,
  BIRTHTIME_MS,
  exactOf,
  GID,
  MODE,
  MTIME_MS,
  type StatRecord,
  typeOf as recordTypeOf,
  UID,
  X_BLKSIZE,
  X_BLOCKS,
  X_DEV,
  X_INO,
  X_NLINK,
  X_RDEV,
  X_SIZE
} from "../internal/statRecord.ts"

/**
 * A stat as either source gives it, before it becomes a `File.Info`. An absent time is one the
 * platform did not report.
 *
 * @since 0.1.0
 * @category models
 */
export interface Stat {
  readonly type: FileSystem.File.Type
  readonly dev: bigint
  readonly ino: bigint
  readonly mode: number
  readonly nlink: bigint
  readonly uid: bigint | number
  readonly gid: bigint | number
  readonly rdev: bigint
  readonly size: bigint
  readonly blksize: bigint
  readonly blocks: bigint
  readonly atime: Date
  readonly mtime: Date
  readonly birthtime: Date | undefined
}

// Node fills bigint stats from a BigInt64Array: unsigned 64-bit values at or above 2^63 arrive
// negative, and Effect widens them back. The native addon's values are already unsigned.
const u64 = (value: bigint): bigint => BigInt.asUintN(64, value)

const id = (value: bigint | number): Option.Option<number> => (typeof value === "number" ? Option.some(value) : BI.toNumber(value))

/**
 * The one `File.Info` builder. `birthtime` is `Option.none()` exactly when the platform did not
 * report one, as `File.Info` specifies for optional metadata.
 *
 * @since 0.1.0
 * @category constructors
 */
export const make = (stat: Stat): FileSystem.File.Info => ({
  type: stat.type,
  mtime: Option.some(stat.mtime),
  atime: Option.some(stat.atime),
  birthtime: Option.fromNullishOr(stat.birthtime),
  dev: u64(stat.dev),
  rdev: Option.some(u64(stat.rdev)),
  ino: Option.some(u64(stat.ino)),
  mode: stat.mode,
  nlink: Option.some(u64(stat.nlink)),
  uid: id(stat.uid),
  gid: id(stat.gid),
  size: ByteSize.bytes(stat.size),
  blksize: Option.some(ByteSize.bytes(stat.blksize)),
  blocks: Option.some(stat.blocks)
})

/**
 * From the addon's stat record (src/internal/statRecord.ts), read slot by slot: the exact 64-bit
 * integers, and the times in milliseconds (`Date` keeps whole milliseconds, truncating toward zero
 * as Node's bigint stats do); a missing birth time is `-1` there.
 *
 * It reads the slots itself rather than going through `fileInfoOf` and {@link make}: spreading
 * that nineteen-field object into {@link Stat} cost V8 about 5 µs, more than the rest of an
 * extension `stat` on the JavaScript thread, and the nanosecond times it builds go unused here.
 * The exact integers come from an unsigned view, so `make`'s widening has nothing to do.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromNative = (r: StatRecord): FileSystem.File.Info => {
  const x = exactOf(r)
  const birth = r[BIRTHTIME_MS]!
  return {
    type: recordTypeOf(r),
    mtime: Option.some(new Date(r[MTIME_MS]!)),
    atime: Option.some(new Date(r[ATIME_MS]!)),
    birthtime: birth < 0 ? Option.none() : Option.some(new Date(birth)),
    dev: x[X_DEV]!,
    rdev: Option.some(x[X_RDEV]!),
    ino: Option.some(x[X_INO]!),
    mode: r[MODE]!,
    nlink: Option.some(x[X_NLINK]!),
    uid: Option.some(r[UID]!),
    gid: Option.some(r[GID]!),
    size: ByteSize.bytes(x[X_SIZE]!),
    blksize: Option.some(ByteSize.bytes(x[X_BLKSIZE]!)),
    blocks: Option.some(x[X_BLOCKS]!)
  }
}

const typeOf = (st: BigIntStats): FileSystem.File.Type =>
  st.isFile()
    ? "File"
    : st.isDirectory()
      ? "Directory"
      : st.isSymbolicLink()
        ? "SymbolicLink"
        : st.isBlockDevice()
          ? "BlockDevice"
          : st.isCharacterDevice()
            ? "CharacterDevice"
            : st.isFIFO()
              ? "FIFO"
              : st.isSocket()
                ? "Socket"
                : "Unknown"

/**
 * From Node's bigint stats (the path-based executor's source). A mode beyond the safe integer range
 * cannot be a mode and is refused rather than rounded.
 *
 * @since 0.1.0
 * @category constructors
 */
export const fromNodeStats = (st: BigIntStats): FileSystem.File.Info => {
  const mode = Number(st.mode)
  if (!Number.isSafeInteger(mode)) throw new RangeError(`mode exceeds the safe integer range: ${st.mode}`)
  return make({
    type: typeOf(st),
    dev: st.dev,
    ino: st.ino,
    mode,
    nlink: st.nlink,
    uid: st.uid,
    gid: st.gid,
    rdev: st.rdev,
    size: st.size,
    blksize: st.blksize,
    blocks: st.blocks,
    atime: st.atime,
    mtime: st.mtime,
    birthtime: st.birthtime
  })
}
