/**
 * confine's protected-path discovery while a directory it walks is moved out of the workspace. The
 * attacker (test/race/mover.c) waits for discovery to open `a`, renames `a` outside, then moves an
 * outside directory holding a key into the deepest level of the departed tree. Discovery keeps
 * handles to walk on; without a proof before each listing it went on listing the departed tree
 * and reported the outside key as a protected path of the workspace (a name that is not there, and
 * proof that the walk read outside). Every listing is now proven beneath the anchor first, and a
 * departed directory is a concurrent change: discovery either answers without it or refuses with
 * `moved` (a launch then discovers again); it never answers a name from the departed tree.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Anchors } from "../../src/confine/anchors.ts"
import { discoverProtected } from "../../src/confine/discovery.ts"
import { ConfinementError, compilePolicy } from "../../src/confine/index.ts"
import { rawOf, shown } from "../../src/confine/raw.ts"
import { sandboxTree } from "../confine/support/tree.ts"
import { startMover } from "../support/mover.ts"
import { strategies } from "../support/strategies.ts"

describe.each(strategies)("discovery while a directory leaves the workspace (%s)", (strategy) => {
  it("never reports a name from the departed tree", async () => {
    const t = sandboxTree()
    // A chain deep and wide enough that the walk is still inside it when the attacker acts.
    let rel = "a"
    for (let level = 0; level < 120; level++) {
      fs.mkdirSync(path.join(t.ws, rel), { recursive: true })
      for (let i = 0; i < 40; i++) fs.writeFileSync(path.join(t.ws, rel, `f${i}`), "")
      rel = `${rel}/d`
    }
    fs.mkdirSync(path.join(t.ws, rel))
    const leak = path.join(t.outside, "leak")
    fs.mkdirSync(leak)
    fs.writeFileSync(path.join(leak, "outside-only.pem"), "key")
    const mover = startMover({
      watch: path.join(t.ws, "a"),
      on: "open",
      renames: [
        [path.join(t.ws, "a"), path.join(t.outside, "a")],
        [leak, path.join(t.outside, rel, "leak")]
      ]
    })
    await mover.ready
    const anchors = new Anchors(strategy)
    let found: Array<string>
    try {
      const d = await discoverProtected({
        rules: compilePolicy({ defaults: false, protected: [["**/*.pem", "inaccessible"]] }).rules,
        workspaces: [rawOf(fs.realpathSync(t.ws))],
        home: null,
        tempRoot: null,
        anchors
      })
      found = d.candidates.map((c) => shown(c.path))
    } catch (e) {
      if (!(e instanceof ConfinementError) || e.reason !== "moved") throw e
      found = []
    } finally {
      await anchors.close()
    }
    const m = await mover.finish()
    // The attack was live: the event came and both renames were done.
    expect(m.fired).toBe(true)
    expect(m.renamed).toBe(2)
    expect(m.failed).toBe(0)
    // The key really is in the departed tree: a walk that went on there would have found it.
    expect(fs.existsSync(path.join(t.outside, rel, "leak", "outside-only.pem"))).toBe(true)
    expect(found.filter((p) => p.includes("outside-only"))).toEqual([])
  })
})
