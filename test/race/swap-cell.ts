/**
 * One swap-race cell of the race suite (race.test.ts), run and judged the same way wherever a root
 * is raced (within.test.ts runs the cells again with symlinks "within"): the path-based control
 * first, which must escape where it has a window and must not where it has none, then the root
 * `open` gives, which must meet the attack (swaps, a refusal only the attack explains) and never
 * escape or answer anything the attack does not explain.
 */
import { expect } from "vitest"
import type { PinnedRoot } from "../../src/index.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { makeWithCheckThenUseWindow } from "../../src/fallback/testing.ts"
import { type AttackName, openPathBased, raceOps, runCell, type RaceOp } from "../../scripts/race/run.mjs"

// Tries planned per cell; when the attack has caused no refusal by then the cell goes on, up to
// fifteen times as many tries (1,500 for a read: a hard link exchanged into a write's narrow window
// has taken more than 1,000), and never past `seconds`.
const budget = (op: RaceOp) => ({ iterations: op.mutates ? 40 : 100, seconds: 4, untilRefused: 15 })
// The control stops at its first escape; it gets a fifth of a second to find one by racing.
// The control is the path-based fallback itself, its test seam opening the check-then-use window.
const make = (window?: () => Promise<void>) => (window === undefined ? PathAtomicFileSystem.make() : makeWithCheckThenUseWindow(window))
export const control = {
  open: (root: string, window?: () => Promise<void>) => openPathBased(root, { make, window }),
  iterations: 200,
  seconds: 0.2
}

// Cells the control has no window in, each with why: there the control must not escape either,
// and the cell's detectors are shown directly instead.
const unexposed: Record<string, string> = {
  "stat/hardlink":
    "the path-based stat answers from the very lstat that refused a hard link, so an exchange after that check cannot reach its answer",
  "writeFile/hardlink":
    "the path-based write replaces the file by a rename, so a hard link exchanged in after the check is replaced as a name, never written through"
}

export const exposure = (op: RaceOp, attack: AttackName): string | undefined => unexposed[`${op.name}/${attack}`]

/** Every operation under every attack it has: `[title, op, attack]`, for `it.each`. */
export const cells = raceOps.flatMap((op) => op.attacks.map((attack) => [`${op.name} under the ${attack} attack`, op, attack] as const))

export const raceCell = async (attackerBin: string, open: (root: string) => Promise<PinnedRoot>, op: RaceOp, attack: AttackName) => {
  const result = await runCell({ attackerBin, open, attack, op, ...budget(op), control })
  // The cell sees an escape when there is one: the control's, by racing or by the forced window.
  const c = result.control!
  const why = exposure(op, attack)
  if (why === undefined) {
    expect(c.escapes + (c.forcedEscapes ?? 0), `control: ${JSON.stringify(c)}`).toBeGreaterThan(0)
  } else {
    console.log(`${op.name} under the ${attack} attack: the control has no window (${why})`)
    expect(c.escapes + (c.forcedEscapes ?? 0), `control: ${JSON.stringify(c)}`).toBe(0)
  }
  if (c.forced) expect(c.quiet?.escapes).toBe(0)
  // The attack was live while the root ran.
  expect(result.swaps).toBeGreaterThan(0)
  expect(result.refused, JSON.stringify(result.outcomes)).toBeGreaterThan(0)
  expect(result.tried).toBeGreaterThan(0)
  // The root never escaped, and answered only what the attack allows.
  expect(result.examples).toEqual([])
  expect(result.escapes).toBe(0)
  expect(result.unexpectedExamples).toEqual([])
  expect(result.unexpected).toBe(0)
}
