/**
 * Effect's `File.Info` from Node's bigint stats, field for field as `@effect/platform-node-shared`'s
 * `NodeFileSystem` builds it, so a caller sees the same record from the fallback, the native
 * extension and Effect's own Node file system.
 *
 * @internal
 */
import { BigInt as BI, ByteSize, type FileSystem, Option } from "effect"
import type { BigIntStats } from "node:fs"

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

// Node fills bigint stats from a BigInt64Array: unsigned 64-bit values at or above 2^63 arrive
// negative, and Effect widens them back.
const u64 = (value: bigint): bigint => BigInt.asUintN(64, value)

const u64Option = (value: bigint | undefined): Option.Option<bigint> => Option.map(Option.fromNullishOr(value), u64)

const numberOption = (value: bigint | undefined): Option.Option<number> =>
  Option.flatMap(Option.fromNullishOr(value), BI.toNumber)

/** @internal */
export const fileInfo = (st: BigIntStats): FileSystem.File.Info => {
  const mode = Number(st.mode)
  if (!Number.isSafeInteger(mode)) throw new RangeError(`mode exceeds the safe integer range: ${st.mode}`)
  return {
    type: typeOf(st),
    mtime: Option.fromNullishOr(st.mtime),
    atime: Option.fromNullishOr(st.atime),
    birthtime: Option.fromNullishOr(st.birthtime),
    dev: u64(st.dev),
    rdev: u64Option(st.rdev),
    ino: u64Option(st.ino),
    mode,
    nlink: u64Option(st.nlink),
    uid: numberOption(st.uid),
    gid: numberOption(st.gid),
    size: ByteSize.bytes(st.size),
    blksize: st.blksize !== undefined ? Option.some(ByteSize.bytes(st.blksize)) : Option.none(),
    blocks: Option.fromNullishOr(st.blocks)
  }
}
