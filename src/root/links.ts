/**
 * `symlink` and `link` beneath a pinned root: the argument checks, then one native trip each
 * (native/ops/symlink.cc says what is refused and why).
 *
 * @internal
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { native } from "../internal/native.ts"
import { relativePath } from "../PinnedRoot.ts"
import type { Runner } from "./runner.ts"

const linkTypes: ReadonlySet<unknown> = new Set([undefined, null, "file", "dir", "junction"])

/** @internal */
export const symlink = (root: Runner, target: string, path: string, type?: string | null): Promise<void> => {
  if (typeof target !== "string") throw badArgumentPinnedFsError("symlink target must be a string")
  // Node's type only matters on Windows; anything else is still a mistake worth naming.
  if (!linkTypes.has(type)) throw badArgumentPinnedFsError("symlink type must be 'file', 'dir' or 'junction'")
  return root.run({ op: native.ops.symlink, path: relativePath(path), target }, path)
}

/** @internal */
export const link = (root: Runner, existingPath: string, newPath: string): Promise<void> =>
  root.run({ op: native.ops.link, path: relativePath(existingPath, "existingPath"), to: relativePath(newPath, "newPath") }, existingPath)
