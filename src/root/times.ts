/**
 * `utimes`, `truncate` and `lchown` beneath a pinned root: Node's argument shapes checked, then one
 * native trip each (native/ops/times.cc, truncate.cc).
 *
 * @internal
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { native } from "../internal/native.ts"
import { checkIds, relativePath } from "../PinnedRoot.ts"
import type { Runner } from "./runner.ts"

/** A time as `fs.promises.utimes` takes it: a `Date`, or seconds since the epoch. */
const seconds = (value: unknown, name: string): number => {
  const s = value instanceof Date ? value.getTime() / 1000 : value
  if (typeof s !== "number" || !Number.isFinite(s)) {
    throw badArgumentPinnedFsError(`utimes ${name} must be a valid Date or a finite number of seconds`)
  }
  return s
}

/** @internal */
export const utimes = (root: Runner, path: string, atime: Date | number, mtime: Date | number): Promise<void> =>
  root.run({ op: native.ops.utimes, path: relativePath(path), atime: seconds(atime, "atime"), mtime: seconds(mtime, "mtime") }, path)

/** @internal */
export const truncate = (root: Runner, path: string, len = 0): Promise<void> => {
  if (typeof len !== "number" || !Number.isSafeInteger(len)) throw badArgumentPinnedFsError("truncate length must be an integer")
  // As Node's: a negative length truncates to empty.
  return root.run({ op: native.ops.truncate, path: relativePath(path), length: Math.max(0, len) }, path)
}

/** @internal */
export const lchown = (root: Runner, path: string, uid: number, gid: number): Promise<void> => {
  checkIds(uid, gid)
  return root.run({ op: native.ops.lchown, path: relativePath(path), uid, gid }, path)
}
