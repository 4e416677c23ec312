/**
 * Race attacks: a native attacker exchanges, in a tight loop, the directory d inside the root with
 * a symlink to an outside canary tree (symlink), with a directory moved in from outside whose
 * sub/deep is a link into the canary (dirswap), and the file file.txt with a hard link to a canary
 * file (hardlink). Each operation runs through the contested path meanwhile, under both strategies.
 *
 * Each cell proves three things, so that it can fail:
 * - it can see an escape: a control executor (the path-based fallback through scripts/race/naive.mjs,
 *   "lstat every component, then use the path") runs first in the same arena, under the same attacker, judged by the same
 *   detectors, and must escape; if the race does not hand it an escape within its bound, the
 *   harness makes one exchange from inside the control's check-then-use window, and then it must;
 * - the attack was live while pinnedfs ran: the attacker's own count of exchanges the kernel did
 *   (failed ones are not counted), and at least one refusal that only the attack can cause;
 * - every answer was right: the inside content, identity or listing, or a typed refusal the
 *   attack explains (the directory programs' refusals are read from inside their results); never
 *   canary data, never a changed canary (content, modes, owners, entries), nothing else.
 * Bounded in iterations and seconds; `npm run stress` runs the same cells long.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { makeWithCheckThenUseWindow } from "../../src/fallback/testing.ts"
import { buildAttacker, leaks, makeArena, openPathBased, raceOps, runCell, type RaceOp } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"

// Tries planned per cell; when the attack has caused no refusal by then the cell goes on, up to
// ten times as many tries, and never past `seconds`.
const budget = (op: RaceOp) => ({ iterations: op.mutates ? 40 : 150, seconds: 4, untilRefused: 10 })
// The control stops at its first escape; it gets a fifth of a second to find one by racing.
// The control is the path-based fallback itself, its test seam opening the check-then-use window.
const make = (window?: () => Promise<void>) => (window === undefined ? PathAtomicFileSystem.make() : makeWithCheckThenUseWindow(window))
const openControl = (root: string, window?: () => Promise<void>) => openPathBased(root, { make, window })
const control = { open: openControl, iterations: 200, seconds: 0.2 }

// Cells the control has no window in, each with why: there the control must not escape either,
// and the cell's detectors are shown directly instead.
const unexposed: Record<string, string> = {
  "stat/hardlink":
    "the path-based stat answers from the very lstat that refused a hard link, so an exchange after that check cannot reach its answer",
  "writeFile/hardlink":
    "the path-based write replaces the file by a rename, so a hard link exchanged in after the check is replaced as a name, never written through"
}
const exposure = (op: RaceOp, attack: string) => unexposed[`${op.name}/${attack}`]

let attackerBin = ""
beforeAll(() => {
  attackerBin = buildAttacker()
})

const cells = raceOps.flatMap((op) => op.attacks.map((attack) => [`${op.name} under the ${attack} attack`, op, attack] as const))

describe.each(strategies)("race attacks (%s)", (strategy) => {
  it.each(cells)("%s", async (_name, op, attack) => {
    const result = await runCell({
      attackerBin,
      open: async (root) => {
        const pinned = await PinnedRoot.open(root, { strategy })
        expect(pinned.strategy).toBe(strategy)
        return pinned
      },
      attack,
      op,
      ...budget(op),
      control
    })
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
    // The attack was live while pinnedfs ran.
    expect(result.swaps).toBeGreaterThan(0)
    expect(result.refused, JSON.stringify(result.outcomes)).toBeGreaterThan(0)
    expect(result.tried).toBeGreaterThan(0)
    // pinnedfs never escaped, and answered only what the attack allows.
    expect(result.examples).toEqual([])
    expect(result.escapes).toBe(0)
    expect(result.unexpectedExamples).toEqual([])
    expect(result.unexpected).toBe(0)
  })
})

describe("the race harness", () => {
  // The detectors of every cell, checked without timing, on the control: one try with the attacker
  // parked must come out clean (right answer, nothing seen), and one try with an exchange made
  // from inside its check-then-use window must be seen escaping, as canary data in the answer or as
  // a change to the canary. The same op, the same executor: only the exchange differs.
  it.each(cells)("sees the control escape exactly when its window is opened: %s", async (_name, op, attack) => {
    const result = await runCell({
      attackerBin,
      open: async (root) => openControl(root),
      attack,
      op,
      iterations: 0,
      seconds: 1,
      control: { ...control, iterations: 0 }
    })
    const c = result.control!
    expect(c.forced).toBe(true)
    expect(c.quiet).toEqual({ escapes: 0, unexpected: 0, outcomes: { ok: 1 }, examples: [] })
    expect(c.forcedEscapes, JSON.stringify(c)).toBe(exposure(op, attack) === undefined ? 1 : 0)
  })

  // Where the control has no window, the detector is shown on the answer an escape would give: the
  // stat of the canary file the hard link names is seen as canary data, the inside file's is not.
  it("sees a stat answer of the canary as an escape, where the control cannot show it", () => {
    const arena = makeArena()
    try {
      const statOf = (p: string) => fs.lstatSync(p, { bigint: true })
      expect(leaks(arena, statOf(path.join(arena.root, ".hl")))).toBe(true)
      expect(leaks(arena, statOf(path.join(arena.root, "file.txt")))).toBe(false)
    } finally {
      arena.dispose()
    }
  })
})
