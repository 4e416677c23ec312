/**
 * The README's claim for openat2: the kernel re-checks at the end of the lookup that the result is
 * still beneath the root, so a directory renamed out of the root mid-lookup fails closed with
 * EXDEV, which pinnedfs reports as its "escape" refusal (PermissionDenied).
 *
 * Provoked for real: the native attacker exchanges the directory d of the root with a directory
 * outside (the dirswap attack of the race suite), so the real d spends half its time outside
 * while reads go through it. A lookup that entered d inside and finished after the exchange ends
 * outside; the kernel must refuse it. Bounded in tries and seconds; the test fails if no such
 * refusal came within the bound, or if it came in any other shape.
 */
import { expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { attacks, buildAttacker, makeArena, refusalsUnder, startAttacker } from "../../scripts/race/run.mjs"
import { tally } from "../support/attacker.ts"
import { strategies } from "../support/strategies.ts"
import { skipUnless } from "../support/skip.ts"

it("answers a lookup that a rename carried out of the root with EXDEV, as an escape refusal (openat2)", async (ctx) => {
  skipUnless(ctx, strategies.includes("openat2"), "openat2 is not available here (its lookup is what answers EXDEV)")
  const arena = makeArena()
  const attacker = startAttacker(buildAttacker(), attacks.dirswap(arena))
  const outcomes: Array<string> = []
  let exdev: PinnedFsError | undefined
  try {
    await attacker.started
    const root = await PinnedRoot.open(arena.root, { strategy: "openat2" })
    const deadline = Date.now() + 10_000
    for (let i = 0; i < 50_000 && Date.now() < deadline && exdev === undefined; i++) {
      try {
        // Four components, so the lookup spends a while inside d.
        const text = await root.readFileString("d/sub/deep/nest/n.txt")
        expect(text).toBe("inside n\n")
        outcomes.push("ok")
      } catch (e) {
        expect(e).toBeInstanceOf(PinnedFsError)
        const error = e as PinnedFsError
        outcomes.push(error.refusal || error.code)
        if (error.code === "EXDEV") exdev = error
      }
    }
    root.close()
  } finally {
    await attacker.stop()
    arena.dispose()
  }
  // What else the race answered: the inside file, or a refusal the attack explains.
  expect(Object.keys(tally(outcomes)).filter((o) => o !== "ok" && !refusalsUnder("dirswap").includes(o))).toEqual([])
  expect(exdev, `no EXDEV within the bound; outcomes ${JSON.stringify(tally(outcomes))}`).toBeDefined()
  expect({
    code: exdev!.code,
    reason: exdev!.reason,
    refusal: exdev!.refusal,
    syscall: exdev!.syscall,
    path: exdev!.path
  }).toEqual({ code: "EXDEV", reason: "PermissionDenied", refusal: "escape", syscall: "openat2", path: "d/sub/deep/nest/n.txt" })
})
