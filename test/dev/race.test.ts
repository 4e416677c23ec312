/**
 * The façade and the re-read under a racing attacker: while the native attacker exchanges a
 * workspace directory with a link to an outside tree with the same names, an in-process fixer reads and
 * rewrites a file in that directory and the re-read reconciles it. A lexical pre-walk (check the
 * components, then use the path) loses this race; pinnedfs checks and uses on one descriptor.
 * Bounded in swaps, time and rounds. Under both resolve strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, Plan, Step } from "../../src/dev/index.ts"
import { raceRounds, snapshot } from "../support/attacker.ts"
import { strategies } from "../support/strategies.ts"
import { openPolicy, setup } from "./support/workspace.ts"

describe.each(strategies)("dev pipeline under a directory/link swap (%s)", (strategy) => {
  it("never reads outside text into the workspace and never writes outside", async () => {
    const { s, root } = await setup(strategy, { "src/sub/a.ts": "inside\n" })
    const target = path.join(s.outside, "sub")
    fs.mkdirSync(target)
    fs.writeFileSync(path.join(target, "a.ts"), "TOP SECRET outside\n")
    fs.symlinkSync(target, s.abs("lnk"))
    const before = snapshot(s.outside)
    const outsideText = () => fs.readFileSync(path.join(target, "a.ts"), "utf8")

    let ws = await acquire(root, { scope: ["src/**"] })
    const seen: Array<string> = []
    const reads = { ok: 0, refused: 0 }
    const fixer: Capability = {
      name: "rewrite",
      scope: ["src/**"],
      mayCreate: ["src/**"],
      run: async (access) => {
        for (const p of access.scope) {
          const text = await access.read(p).catch(() => undefined)
          reads[text === undefined ? "refused" : "ok"]++
          if (text !== undefined) {
            seen.push(text)
            await access.write(p, text.includes("fixed") ? text : `${text.trimEnd()} fixed\n`).catch(() => undefined)
          }
        }
      }
    }
    // src/sub flips between the real directory and the link, exchanged atomically by the native
    // attacker while each round runs, and put back between rounds. Each round acquires its
    // workspace afresh (a re-read that met the link drops the file from the one before, and the
    // fixer would have nothing left to read), and the rounds end once the attack was seen both
    // ways: a read refused at the link and one that went through.
    const race = await raceRounds({
      pairs: [[s.abs("src/sub"), s.abs("lnk")]],
      maxRounds: 400,
      maxMs: 10_000,
      reset: () => {},
      round: async () => {
        const fresh = await acquire(root, { scope: ["src/**"] }).catch(() => undefined)
        if (fresh === undefined) return
        ws = fresh
        await Plan.run([Step.fix("f", fixer)], { root, workspace: ws, policy: openPolicy, gate: approveAll })
      },
      inspect: () => {
        for (const p of ws.paths()) seen.push(ws.get(p)!)
      },
      until: () => reads.refused > 0 && reads.ok > 0
    })
    // The attack was live: exchanges the kernel did, and reads that met the link and were refused.
    expect(race.swaps).toBeGreaterThan(0)
    expect(race.rounds).toBeGreaterThan(0)
    expect(reads.refused, JSON.stringify(reads)).toBeGreaterThan(0)
    // And the fixer read through the façade between the exchanges.
    expect(reads.ok, JSON.stringify(reads)).toBeGreaterThan(0)
    expect(seen.some((t) => t.includes("TOP SECRET"))).toBe(false)
    expect(outsideText()).toBe("TOP SECRET outside\n")
    expect(snapshot(s.outside)).toEqual(before)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  }, 60_000)
})
