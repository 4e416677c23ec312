/**
 * `{ signal }` for the operations a caller may want to stop (readFile, writeFile, readDirectory,
 * glob, remove). An aborted call rejects with an {@link AbortError} shaped as Node's (`name`
 * `"AbortError"`, `code` `"ABORT_ERR"`, `cause` the signal's reason).
 *
 * What an abort does depends on whether the operation changes anything:
 * - a signal already aborted: nothing is sent to the addon, nothing is read or changed;
 * - a read (readFile, readDirectory, glob) rejects at once; the addon's worker is told to stop and
 *   does at its next batch of directory entries, or a file read at its next 8 MiB chunk (the bytes
 *   read so far are dropped); a file handle's `readFile` stops between its chunks too;
 * - a change (writeFile, remove) is told to stop and the call settles with what really happened: a
 *   replacement stopped before its rename leaves the old content (AbortError); a recursive remove
 *   stops between two unlinks (AbortError; what it removed stays removed, as after any failing
 *   `fs.rm`); a change the worker finished before it saw the flag resolves normally, because it is
 *   done and a rejection would say it is not.
 *
 * The flag is an atomic the worker reads between acts; setting it never waits on the worker.
 *
 * @since 0.1.0
 */
import { constants } from "node:os"
import { badArgumentPinnedFsError, fromNative } from "../internal/errors.ts"

/**
 * The rejection of an aborted call, as Node's `AbortError` (`node:fs/promises` with a `signal`).
 *
 * @since 0.1.0
 * @category errors
 */
export class AbortError extends Error {
  readonly code = "ABORT_ERR"
  override readonly name = "AbortError"
  constructor(message = "The operation was aborted", options?: { readonly cause?: unknown }) {
    super(message, options)
  }
}

/** @internal */
export const abortError = (signal: AbortSignal): AbortError => new AbortError(undefined, { cause: signal.reason })

/** @internal Refuses anything but `undefined` or an `AbortSignal`. */
export const signalOf = (u: unknown): AbortSignal | undefined => {
  if (u === undefined) return undefined
  if (!(u instanceof AbortSignal)) throw badArgumentPinnedFsError("signal must be an AbortSignal")
  return u
}

/** What the addon's `cancellable` answers: the work, and the function that asks it to stop. */
export type Cancellable = readonly [Promise<unknown>, () => void]

const canceled = -constants.errno.ECANCELED

/** The addon's answer for a request it stopped at the caller's word. */
const isCancelled = (u: unknown): boolean =>
  typeof u === "object" && u !== null && ((u as { code?: unknown }).code === "ECANCELED" || (u as { errno?: unknown }).errno === canceled)

/**
 * Runs `start` under `signal`. `effect`: the call changes something, so it settles with the
 * worker's outcome (see the module note); otherwise it rejects as soon as the signal fires.
 * `shown`/`root` name the path in a native error, as `PinnedRoot.run` does.
 *
 * @internal
 */
export const abortable = async <A>(
  signal: AbortSignal,
  start: () => Cancellable,
  effect: boolean,
  shown: string | undefined,
  root: string
): Promise<A> => {
  if (signal.aborted) throw abortError(signal)
  const [work, cancel] = start()
  let onAbort: (() => void) | undefined
  const settled = work.then(
    (v) => v as A,
    (u) => {
      if (isCancelled(u) && signal.aborted) throw abortError(signal)
      throw fromNative(u, shown, root)
    }
  )
  try {
    if (effect) {
      onAbort = cancel
      signal.addEventListener("abort", onAbort, { once: true })
      return await settled
    }
    // A read: nothing to wait for once the caller has given up. The work's own outcome is dropped.
    settled.catch(() => undefined)
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => {
        cancel()
        reject(abortError(signal))
      }
      signal.addEventListener("abort", onAbort, { once: true })
    })
    return await Promise.race([settled, aborted])
  } finally {
    if (onAbort) signal.removeEventListener("abort", onAbort)
  }
}
