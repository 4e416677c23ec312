/**
 * The bounds of the dev pipeline's reads: every allocation sized by the disk is capped here.
 *
 * @since 0.1.0
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"

/**
 * @since 0.1.0
 * @category models
 */
export interface Limits {
  /** Largest file admitted as text; a larger one is unreadable ("too large"). Default 4 MiB. */
  readonly maxFileBytes: number
  /**
   * Most bytes of content one re-read trip may carry (the batch answer budget). A file larger than
   * what is left of it is refused by the native read before a byte is read. Default 64 MiB, and
   * never less than `maxFileBytes`.
   */
  readonly readBudgetBytes: number
  /** Most paths in one batch trip; a larger envelope takes several. Default 4096. */
  readonly batchMembers: number
  /**
   * Most pre-step bytes a step's rollback holds in memory; the rest go to a private directory
   * beside the workspace (see `rollback.ts`). Default 64 MiB.
   */
  readonly backupMemoryBytes: number
}

/** @since 0.1.0 @category constants */
export const defaultLimits: Limits = {
  maxFileBytes: 4 * 1024 * 1024,
  readBudgetBytes: 64 * 1024 * 1024,
  batchMembers: 4096,
  backupMemoryBytes: 64 * 1024 * 1024
}

const positive = (value: unknown, name: string, fallback: number): number => {
  if (value === undefined) return fallback
  if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
    throw badArgumentPinnedFsError(`${name} must be a positive integer`)
  }
  return value
}

/**
 * Fills in defaults and checks the caller's values.
 *
 * @since 0.1.0
 * @category constructors
 */
export const limitsOf = (partial: Partial<Limits> | undefined): Limits => {
  const maxFileBytes = positive(partial?.maxFileBytes, "maxFileBytes", defaultLimits.maxFileBytes)
  const readBudgetBytes = Math.max(maxFileBytes, positive(partial?.readBudgetBytes, "readBudgetBytes", defaultLimits.readBudgetBytes))
  const batchMembers = positive(partial?.batchMembers, "batchMembers", defaultLimits.batchMembers)
  const backupMemoryBytes =
    partial?.backupMemoryBytes === 0 ? 0 : positive(partial?.backupMemoryBytes, "backupMemoryBytes", defaultLimits.backupMemoryBytes)
  return { maxFileBytes, readBudgetBytes, batchMembers, backupMemoryBytes }
}
