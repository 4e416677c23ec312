/**
 * The process's budget of file content in flight: bytes read into native memory and not yet handed
 * to JavaScript (a read's content, a batch's answers until they are settled). One read is held to
 * its own limit (`readLimit`, at most 2 GiB - 1), but nothing else bounds many of them at once:
 * eight concurrent reads of 400 MiB sparse files cost an attacker nothing and would need 3.2 GB.
 * The budget bounds their sum for the whole process, worker threads included.
 *
 * A read that would take the process past the budget fails at once, never waits: a
 * {@link PinnedFsError} with code `ENOMEM` whose description names the budget (a batch member fails
 * alone). Waiting would hold a thread of libuv's pool, which `node:fs`, `dns` and `zlib` share,
 * until other callers' answers were settled, and a batch holding part of the budget could wait on
 * itself. Retry once other reads have settled, or raise the budget. An allocation the system
 * refuses within the budget fails the same way (`ENOMEM`, "out of memory"), never aborting the
 * process.
 *
 * @since 0.1.0
 */
import { badArgumentPinnedFsError } from "./internal/errors.ts"
import { native } from "./internal/native.ts"

/**
 * The budget when none was set: 2 GiB, so one read of the largest content there is always fits
 * when nothing else is in flight.
 *
 * @since 0.1.0
 * @category constants
 */
export const defaultContentBudget = 2 ** 31

/**
 * The budget and what of it is in use now.
 *
 * @since 0.1.0
 * @category models
 */
export interface ContentBudget {
  /** Most bytes of content in flight at once, for the whole process. */
  readonly budget: number
  /** Bytes of content in flight now. */
  readonly inFlight: number
}

/**
 * Reads the process's content budget, or sets it first when `bytes` is given (a positive integer;
 * `0` restores {@link defaultContentBudget}). Process-wide: every root, extension and worker
 * thread shares it.
 *
 * @since 0.1.0
 * @category configuration
 */
export const contentBudget = (bytes?: number): ContentBudget => {
  if (bytes !== undefined && !(Number.isSafeInteger(bytes) && bytes >= 0)) {
    throw badArgumentPinnedFsError(`content budget must be a non-negative safe integer, got ${String(bytes)}`)
  }
  const [budget, inFlight] = native.contentBudget(bytes)
  return { budget, inFlight }
}
