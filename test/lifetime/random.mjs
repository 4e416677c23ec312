// Reproducible moments for the termination rounds: xorshift32 from a seed, so a failing round can
// be replayed with the seed its run printed.

/** A generator of numbers in [0, 1) from `seed` (a 32-bit integer). */
export const seeded = (seed) => {
  let state = Number(seed) >>> 0
  return () => {
    state ^= state << 13
    state >>>= 0
    state ^= state >>> 17
    state ^= state << 5
    state >>>= 0
    return state / 2 ** 32
  }
}
