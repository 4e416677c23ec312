/**
 * The façade and the re-read under a racing attacker: while a worker thread swaps a workspace
 * directory for a link to an outside tree with the same names, an in-process fixer reads and
 * rewrites a file in that directory and the re-read reconciles it. A lexical pre-walk (check the
 * components, then use the path) loses this race; pinnedfs checks and uses on one descriptor.
 * Bounded in swaps, time and rounds. Under both resolve strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, Plan, Step } from "../../src/dev/index.ts"
import { snapshot, startSwapper } from "../support/attacker.ts"
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

    const ws = await acquire(root, { scope: ["src/**"] })
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
    const attack = startSwapper([
      [s.abs("src/sub"), s.abs("sub.aside")],
      [s.abs("lnk"), s.abs("src/sub")],
      [s.abs("src/sub"), s.abs("lnk")],
      [s.abs("sub.aside"), s.abs("src/sub")]
    ], { maxSwaps: 100_000, maxMs: 3000 })
    let rounds = 0
    while (!attack.done() && rounds < 400) {
      rounds++
      await Plan.run([Step.fix("f", fixer)], { root, workspace: ws, policy: openPolicy, gate: approveAll })
      for (const p of ws.paths()) seen.push(ws.get(p)!)
    }
    const { swaps } = await attack.finished
    console.log(`dev race (${strategy}): ${rounds} rounds, ${swaps} swaps, reads ${JSON.stringify(reads)}`)
    expect(swaps).toBeGreaterThan(0)
    expect(rounds).toBeGreaterThan(0)
    expect(seen.some((t) => t.includes("TOP SECRET"))).toBe(false)
    expect(outsideText()).toBe("TOP SECRET outside\n")
    expect(snapshot(s.outside)).toEqual(before)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  }, 60_000)
})
