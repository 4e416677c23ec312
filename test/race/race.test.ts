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
import { buildAttacker, leaks, makeArena, runCell } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"
import { cells, control, exposure, raceCell } from "./swap-cell.ts"

let attackerBin = ""
beforeAll(() => {
  attackerBin = buildAttacker()
})

describe.each(strategies)("race attacks (%s)", (strategy) => {
  it.each(cells)("%s", async (_name, op, attack) => {
    await raceCell(
      attackerBin,
      async (root) => {
        const pinned = await PinnedRoot.open(root, { strategy })
        expect(pinned.strategy).toBe(strategy)
        return pinned
      },
      op,
      attack
    )
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
      open: async (root) => control.open(root),
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
