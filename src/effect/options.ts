/**
 * The extension's options and the settings they become. Checked once, synchronously, when the
 * extension is built: a bad option is a programming error (`RangeError`), not a request failure,
 * so no request ever runs under a limit nobody meant.
 *
 * @since 0.1.0
 */
import type { Strategy } from "../PinnedRoot.ts"
import type { Limits } from "./requests.ts"

/**
 * How the extension is built.
 *
 * @since 0.1.0
 * @category models
 */
export interface Options {
  /**
   * How paths are resolved beneath a root: `"auto"` (default) uses the kernel's confined lookup
   * where it exists (Linux `openat2`) and the portable walk elsewhere; tests force each.
   */
  readonly strategy?: Strategy | undefined
  /** Most members in one batch (default 256) and most bytes of file content one answer carries (default 64 MiB). */
  readonly batchLimits?: { readonly size?: number | undefined; readonly response?: number | undefined } | undefined
  /**
   * Most bytes of one `writeFile` payload and of one file read (`readFile`, `readFileString`, each
   * batch member); default 64 MiB, at most 2^31. A larger file, or one that grows past it while it
   * is read, fails with `BadArgument` (`toolarge`) before its content is held in memory.
   */
  readonly contentLimit?: number | undefined
  /** Most roots kept pinned at once (default 32); the least recently used is closed first. */
  readonly rootCacheSize?: number | undefined
  /**
   * Every write survives a crash of the machine, not only of the process: a whole-file write's data
   * is fsynced before the rename publishes it and its directory after, an append's file after it
   * (default false: every whole-file write is crash-safe, none is fsynced).
   */
  readonly durable?: boolean | undefined
}

/**
 * Defaults: 256 members and 64 MiB of content a batch, 64 MiB a `writeFile`, 32 pinned roots, writes
 * not fsynced.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaults = {
  batchSize: 256,
  batchResponse: 64 * 1024 * 1024,
  contentLimit: 64 * 1024 * 1024,
  rootCacheSize: 32,
  durable: false
} as const

/**
 * Options checked and filled in: what every part of the extension reads.
 *
 * @since 0.1.0
 * @category models
 */
export interface Settings {
  readonly strategy: Strategy
  readonly batchLimits: { readonly size: number; readonly response: number }
  readonly contentLimit: number
  /** `contentLimit` capped at the native core's ceiling for one file (2^31 - 1 bytes). */
  readonly readLimit: number
  /** What the request decoder needs to refuse an oversized request before it reaches the addon. */
  readonly limits: Limits
  readonly rootCacheSize: number
}

const positive = (name: string, value: number | undefined, fallback: number, max: number): number => {
  if (value === undefined) return fallback
  if (!Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new RangeError(`pinnedfs: ${name} must be an integer between 1 and ${max}, got ${String(value)}`)
  }
  return value
}

/**
 * Checks `options` and fills in the defaults; throws `RangeError` naming the option at fault.
 *
 * @since 0.1.0
 * @category constructors
 */
export const settings = (options?: Options): Settings => {
  const strategy = options?.strategy ?? "auto"
  if (strategy !== "auto" && strategy !== "openat2" && strategy !== "walk") {
    throw new RangeError(`pinnedfs: strategy must be 'auto', 'openat2' or 'walk', got '${String(strategy)}'`)
  }
  const batchLimits = {
    // The addon refuses more than 2^20 members and more than 2^53 bytes whatever we ask.
    size: positive("batchLimits.size", options?.batchLimits?.size, defaults.batchSize, 1 << 20),
    response: positive("batchLimits.response", options?.batchLimits?.response, defaults.batchResponse, 2 ** 53)
  }
  const contentLimit = positive("contentLimit", options?.contentLimit, defaults.contentLimit, 2 ** 31)
  const durable = options?.durable ?? defaults.durable
  if (typeof durable !== "boolean") throw new RangeError(`pinnedfs: durable must be a boolean, got ${typeof durable}`)
  return {
    strategy,
    batchLimits,
    contentLimit,
    // The native core's ceiling for one file is 2^31 - 1 bytes, one less than contentLimit may be.
    readLimit: Math.min(contentLimit, 2 ** 31 - 1),
    limits: { batchSize: batchLimits.size, contentLimit, durable },
    rootCacheSize: positive("rootCacheSize", options?.rootCacheSize, defaults.rootCacheSize, 4096)
  }
}
