/**
 * Race attacks on `symlinks: "within"`, under both strategies.
 *
 * 1. The existing swap-race cells (test/race/race.test.ts: the contested directory exchanged with
 *    a link to the outside canary, with a planted directory whose link leads into it, the file with
 *    a hard link to a canary file), each with its control that must escape, run against a root that
 *    follows links within. Following links must not open what the default refused: every link the
 *    attack plants leads out, so each is still refused.
 * 2. Cells of its own: an in-root link (`d/lnk -> ../inside.txt`) is exchanged, while pinnedfs
 *    reads through it, with a link that leaves by a `..` chain, one with an absolute text, one that
 *    loops, and one that leads through a mount point. The answer must be the inside content or a
 *    refusal the swapped link explains, never outside data. Each has its positive control: node:fs
 *    given the attacker's link reads the outside data (or loops).
 * Bounded in rounds and seconds.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { buildAttacker } from "../../scripts/race/run.mjs"
import { raceRounds, snapshot, tally } from "../support/attacker.ts"
import { cannotMount, useBindMounts } from "../support/mounts.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { cells, raceCell } from "./swap-cell.ts"

let attackerBin = ""
beforeAll(() => {
  attackerBin = buildAttacker()
})

describe.each(strategies)("the swap-race cells, symlinks 'within' (%s)", (strategy) => {
  it.each(cells)("%s", async (_name, op, attack) => {
    await raceCell(
      attackerBin,
      async (root) => {
        const pinned = await PinnedRoot.open(root, { strategy, symlinks: "within" })
        expect(pinned.strategy).toBe(strategy)
        return pinned
      },
      op,
      attack
    )
  })
})

const bind = useBindMounts()

/** The attacker's link texts, as they read from root/d, and what each must be refused as. */
const swapped = (secret: string) =>
  ({
    "a '..' chain out of the root": { text: "../../outside/secret.txt", refusals: ["escape"], control: "TOP SECRET" },
    "an absolute path": { text: secret, refusals: ["escape"], control: "TOP SECRET" },
    "a loop": { text: "lnk", refusals: ["symlink"], control: "ELOOP" },
    "a mount point": { text: "../mnt/m.txt", refusals: ["escape"], control: "mounted" }
  }) as const

const links = Object.keys(swapped("")) as Array<keyof ReturnType<typeof swapped>>

describe.each(strategies)("an in-root link swapped while it is followed (%s)", (strategy) => {
  it.for(links)("with a link to %s", async (kind, ctx) => {
    if (kind === "a mount point") skipUnless(ctx, cannotMount === "", cannotMount)
    const s = scratch()
    const cell = swapped(s.secret)[kind]
    s.make({ "inside.txt": "inside", "d/": "", "mnt/": "" })
    const data = path.join(s.outside, "data")
    fs.mkdirSync(data)
    fs.writeFileSync(path.join(data, "m.txt"), "mounted")
    if (kind === "a mount point") {
      bind(data, s.abs("mnt"))
    }
    // The good link lives at root/d/lnk, the attacker's in a twin directory outside (same file
    // system, so they can be exchanged), named alike so that "lnk" loops wherever it is.
    const twin = path.join(s.outside, "twin")
    fs.mkdirSync(twin)
    const reset = () => {
      for (const [dir, text] of [
        [s.abs("d"), "../inside.txt"],
        [twin, cell.text]
      ] as const) {
        fs.rmSync(path.join(dir, "lnk"), { force: true })
        fs.symlinkSync(text, path.join(dir, "lnk"))
      }
    }
    // Positive control: the attacker's link, where the good one stands, takes node:fs out.
    reset()
    fs.rmSync(s.abs("d/lnk"))
    fs.symlinkSync(cell.text, s.abs("d/lnk"))
    let reached: string
    try {
      reached = fs.readFileSync(s.abs("d/lnk"), "utf8")
    } catch (e) {
      reached = (e as NodeJS.ErrnoException).code ?? String(e)
    }
    expect(reached).toBe(cell.control)
    const before = snapshot(data)
    const root = await PinnedRoot.open(s.root, { strategy, symlinks: "within" })
    const paths = ["d/lnk", "d/../d/lnk"]
    const result = await raceRounds({
      pairs: [[s.abs("d/lnk"), path.join(twin, "lnk")]],
      maxRounds: 250,
      maxMs: 8_000,
      reset,
      round: () =>
        Promise.all(
          paths.map((p) =>
            root.readFileString(p).then(
              (text) => (text === "inside" ? "inside" : `LEAK ${text}`),
              (e: PinnedFsError) => `refused ${e.refusal || e.code}`
            )
          )
        ),
      inspect: (answers) => answers.join(",")
    })
    root.close()
    const seen = tally(result.answers.flatMap((a) => a.split(",")))
    expect(result.swaps, JSON.stringify(seen)).toBeGreaterThan(0)
    expect(
      Object.keys(seen).filter((a) => a.startsWith("LEAK")),
      JSON.stringify(seen)
    ).toEqual([])
    const allowed = new Set(["inside", ...cell.refusals.map((r) => `refused ${r}`)])
    expect(
      Object.keys(seen).filter((a) => !allowed.has(a)),
      JSON.stringify(seen)
    ).toEqual([])
    // The attack was live: it caused at least one refusal.
    expect(
      cell.refusals.some((r) => (seen[`refused ${r}`] ?? 0) > 0),
      JSON.stringify(seen)
    ).toBe(true)
    expect(snapshot(data)).toEqual(before)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })
})
