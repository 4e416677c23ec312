/**
 * The addon's stat answer as Effect's `File.Info`, field for field the way
 * `@effect/platform-node`'s `NodeFileSystem` builds it from `fs.lstat(path, { bigint: true })`:
 * 64-bit quantities stay `bigint`, sizes are `ByteSize`, times are `Date`s in `Option`s.
 *
 * @since 0.1.0
 */
import { ByteSize, type FileSystem, Option } from "effect"
import type { FileInfo } from "../PinnedRoot.ts"

/**
 * A `Date` from the addon's milliseconds. `Date` keeps whole milliseconds (it truncates toward
 * zero, as Node's bigint stats do when they divide nanoseconds by a million).
 */
const date = (ms: number): Date => new Date(ms)

/**
 * Converts the addon's stat answer. `birthtime` is `Option.none()` where the platform did not
 * report one (the addon answers -1): `File.Info` says optional metadata is `none` exactly when the
 * platform does not report it.
 *
 * @since 0.1.0
 * @category conversions
 */
export const toFileInfo = (info: FileInfo): FileSystem.File.Info => ({
  type: info.type,
  mtime: Option.some(date(info.mtimeMs)),
  atime: Option.some(date(info.atimeMs)),
  birthtime: info.birthtimeMs < 0 ? Option.none() : Option.some(date(info.birthtimeMs)),
  dev: info.dev,
  rdev: Option.some(info.rdev),
  ino: Option.some(info.ino),
  mode: info.mode,
  nlink: Option.some(info.nlink),
  uid: Option.some(info.uid),
  gid: Option.some(info.gid),
  size: ByteSize.bytes(info.size),
  blksize: Option.some(ByteSize.bytes(info.blksize)),
  blocks: Option.some(info.blocks)
})
