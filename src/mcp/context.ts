/**
 * What every tool handler is given: the allowed directories in force when the call starts, whether
 * writes fsync, and the bounds on what one call may walk. One object per server.
 *
 * @since 0.1.0
 */
import type { AllowedDirectories } from "./allowed.ts"
import { locate, type Target } from "./paths.ts"
import { storedSpelling } from "./unicode.ts"

/** @since 0.1.0 @category models */
export interface Context {
  readonly allowed: () => AllowedDirectories
  /** fsync each published file and its directory (`--sync`); the reference never does. */
  readonly sync: boolean
  /** Most entries `directory_tree` and `search_files` visit in one call. */
  readonly maxEntries: number
}

/** A requested path, located and then matched to its stored spelling. @since 0.1.0 */
export const target = async (ctx: Context, requested: string): Promise<Target> => storedSpelling(locate(requested, ctx.allowed()))
