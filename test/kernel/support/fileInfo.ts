/**
 * `File.Info` from Node's bigint stats, for the test double's answers.
 *

 */
import type { BigIntStats } from "node:fs"
import { ByteSize, type FileSystem, Option } from "effect"

const typeOf = (stat: BigIntStats): FileSystem.File.Type =>
  stat.isFile()
    ? "File"
    : stat.isDirectory()
    ? "Directory"
    : stat.isSymbolicLink()
    ? "SymbolicLink"
    : stat.isBlockDevice()
    ? "BlockDevice"
    : stat.isCharacterDevice()
    ? "CharacterDevice"
    : stat.isFIFO()
    ? "FIFO"
    : stat.isSocket()
    ? "Socket"
    : "Unknown"

/** @internal */
export const fileInfo = (stat: BigIntStats): FileSystem.File.Info => ({
  type: typeOf(stat),
  mtime: Option.some(stat.mtime),
  atime: Option.some(stat.atime),
  birthtime: Option.fromNullishOr(stat.birthtime),
  dev: BigInt.asUintN(64, stat.dev),
  ino: Option.some(BigInt.asUintN(64, stat.ino)),
  mode: Number(stat.mode),
  nlink: Option.some(stat.nlink),
  uid: Option.some(Number(stat.uid)),
  gid: Option.some(Number(stat.gid)),
  rdev: Option.some(BigInt.asUintN(64, stat.rdev)),
  size: ByteSize.bytes(stat.size),
  blksize: Option.some(ByteSize.bytes(stat.blksize)),
  blocks: Option.some(stat.blocks)
})

/** The `"dev:ino"` an entry answers with, or `undefined` when it reports no inode. @internal */
export const identityOf = (info: FileSystem.File.Info): string | undefined =>
  Option.isSome(info.ino) ? `${info.dev}:${info.ino.value}` : undefined
