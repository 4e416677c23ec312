/**
 * Race attacks: a native attacker exchanges, in a tight loop, the directory d inside the root with
 * a symlink to an outside canary tree (symlink), with a directory moved in from outside whose
 * entries are links into the canary (dirswap), and the file file.txt with a hard link to a canary
 * file (hardlink). Each operation runs through the contested path meanwhile, under both strategies.
 * No answer may carry the canary and the canary tree (content, modes, owners, entries) must end as
 * it began. Counts are bounded in iterations and seconds; `npm run stress` runs the same cells long.
 */
import { beforeAll, describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { buildAttacker, openNaive, raceOps, runCell, type RaceOp } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"

// About a third of a second per cell at most, so the whole file stays well under a minute on two cores.
const budget = (op: RaceOp) => (op.mutates ? { iterations: 60, seconds: 0.3 } : { iterations: 200, seconds: 0.3 })

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
      ...budget(op)
    })
    expect(result.examples).toEqual([])
    expect(result.escapes).toBe(0)
    // The attack was live and the operation really ran through the contested path.
    expect(result.swaps).toBeGreaterThan(0)
    expect(result.tried).toBeGreaterThan(0)
    expect(result.outcomes["ENOSYS"] ?? 0).toBe(0)
    // Every failure is one of ours, typed (a refusal kind or an errno code), never a stray throw.
    expect(result.outcomes["thrown"] ?? 0).toBe(0)
  })
})

describe("the race harness", () => {
  // Proof that the attacker, the canary and the leak detector can see an escape at all: a
  // path-based executor that lstat's every component and then uses the path escapes under the
  // same attack. Bounded; stops at the first escape.
  it.each(["readFile", "stat"])("sees the naive check-then-use executor escape (%s)", async (name) => {
    const op = raceOps.find((o) => o.name === name)!
    const result = await runCell({
      attackerBin,
      open: async (root) => openNaive(root),
      attack: "symlink",
      op,
      iterations: 5000,
      seconds: 10,
      untilEscape: true
    })
    expect(result.escapes).toBeGreaterThan(0)
  })
})
