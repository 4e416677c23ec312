/**
 * What every tool handler is given: the allowed directories in force when the call starts, whether
 * writes fsync, and the bounds on what one call may walk. One object per server.
 *
 * @since 0.1.0
 */
import type { AllowedDirectories } from "./allowed.ts"
import { locate, type Target } from "./paths.ts"
import { mayNeedLookup, storedSpelling } from "./unicode.ts"

/** @since 0.1.0 @category models */
export interface Context {
  readonly allowed: () => AllowedDirectories
  /** fsync each published file and its directory (`--sync`); the reference never does. */
  readonly sync: boolean
  /** Most entries `directory_tree` and `search_files` visit in one call. */
  readonly maxEntries: number
}

/**
 * A requested path, located and then matched to its stored spelling. An ASCII path (every path a
 * benchmark or most clients send) is answered at once, with no promise to wait for: every call
 * takes this step, and the lookup is the only part of it that touches the disk. A refusal by
 * {@link locate} is thrown, synchronously; callers await the answer inside an async function.
 *
 * @since 0.1.0
 */
export const target = (ctx: Context, requested: string): Target | Promise<Target> => {
  const t = locate(requested, ctx.allowed())
  return mayNeedLookup(t) ? storedSpelling(t) : t
}
