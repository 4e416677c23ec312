/**
 * Keeping each turn of the event loop short. A preparation's own work on the JavaScript thread
 * (settling hundreds of validated paths, planning the layers, rendering the arguments) is split at
 * its steps, and descriptors closed on this thread are closed a slice at a time, so a program's
 * timers and I/O wait at most one step, not the whole preparation.
 *
 * @internal
 */
import { closeHeld, type Release } from "./wire.ts"

/** Lets everything else waiting on the loop run before going on. */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** Descriptors closed per turn when they are closed on the JavaScript thread. */
const releaseSlice = 64

/** Closes `held` a slice per turn. */
export const releaseInSlices = async (held: ReadonlyArray<Release>): Promise<void> => {
  for (let i = 0; i < held.length; i += releaseSlice) {
    if (i > 0) await nextTurn()
    for (const { fd } of held.slice(i, i + releaseSlice)) closeHeld(fd)
  }
}
