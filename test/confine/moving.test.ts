/**
 * A child that renames the unprotected parent of a protected repository, in a loop, inside its own
 * sandbox, while other launches are prepared and run beside it. Each of those launches must either
 * run with the repository's `.git` read-only wherever the loop has put it, or refuse; none may run
 * its command while the real `.git` is reachable writable (missing at the final validation and
 * skipped, or mounted at a stale path while the real one sits elsewhere). And bubblewrap must not
 * leave the empty mount-point directories it makes for a destination that moved.
 *
 * Bounded: victim launches two at a time while the renamer runs, at least 14 and on until one has
 * met the repository under its moved name (each that runs meets one name or the other, about one
 * in three the moved one), at most 48; the renamer stops at a file the test writes, or after its
 * own bound. The test checks on the host that the renames landed (the renamer counts them, and the
 * victims saw both layouts) and that no victim wrote the repository.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Confinement, ConfinementError } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"
import { startWaiting } from "./support/launches.ts"

const victims = 14
const mostVictims = 48
const atOnce = 2

// Where the loop left the repository (it stops between its two renames, or after both).
const repo = (t: SandboxTree): string => (fs.existsSync(t.at("ws/sub.d/.git/config")) ? "ws/sub.d" : "ws/sub")

describe.each(strategies)("a renaming child beside other launches (%s)", (strategy) => {
  it("no launch runs while the moved repository's .git is writable, and no mount point is left behind", async () => {
    const t = sandboxTree()
    t.write("ws/sub/.git/config", "[core]\n")
    const s = new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    const renaming = await s.prepare()
    const renamer = await startWaiting(
      renaming,
      `i=0; n=0; while [ ! -e stop ] && [ $i -lt 200000 ]; do mv -T sub sub.d 2>/dev/null && n=$((n+1)); mv -T sub.d sub 2>/dev/null && n=$((n+1)); i=$((i+1)); done; echo renames=$n`
    )
    // The loop starts when told; the first line it reads is the go.
    const loop = renamer.go()
    const outcomes: Array<{ wrote: boolean; saw: string; refused: ConfinementError | undefined }> = []
    const metMoved = (): boolean => outcomes.some((o) => o.saw.includes("seen-sub.d"))
    for (let i = 0; i < mostVictims && (i < victims || !metMoved()); i += atOnce) {
      const batch = Array.from({ length: atOnce }, async () => {
        try {
          const launch = await s.prepare()
          const r = await runScript(
            launch,
            `for d in sub sub.d; do if [ -f $d/.git/config ]; then echo seen-$d; echo pwned >> $d/.git/config 2>/dev/null && echo wrote-$d; fi; done; echo done`
          )
          return { wrote: r.stdout.includes("wrote-"), saw: r.stdout, refused: undefined }
        } catch (e) {
          if (!(e instanceof ConfinementError)) throw e
          return { wrote: false, saw: "", refused: e }
        }
      })
      outcomes.push(...(await Promise.all(batch)))
    }
    fs.writeFileSync(t.at("ws/stop"), "")
    const loopOut = await loop
    await renaming.cleanup()
    const renames = Number(/renames=(\d+)/.exec(loopOut.stdout)?.[1] ?? "0")
    // The attack was live: the renames landed while the victims were prepared and run, and the
    // victims met the repository under both names.
    expect(renames).toBeGreaterThan(0)
    expect(metMoved()).toBe(true)
    // It failed: nobody wrote the real .git/config, and each victim ran or was refused, visibly.
    expect(outcomes.filter((o) => o.wrote)).toEqual([])
    expect(t.read(`${repo(t)}/.git/config`)).toBe("[core]\n")
    // A refusal says why: the repository moved through every fresh preparation, or every sandbox
    // tried exited while bubblewrap set it up (a destination that came and went under the renames).
    // The latter is retried, fresh each time, up to the bound: never refused after one sandbox.
    for (const o of outcomes) {
      if (o.refused === undefined || o.refused.reason === "moved") continue
      expect(o.refused.reason).toBe("sandbox-unavailable")
      expect(o.refused.message).toMatch(/exited while it was being set up.*\(3 sandboxes were tried, each prepared afresh\)$/)
    }
    expect(outcomes.filter((o) => o.refused === undefined).length).toBeGreaterThan(0)
    // No empty directory bubblewrap made for a moved destination stays in the workspace.
    expect(fs.readdirSync(t.ws).sort()).toEqual([".git", repo(t).slice(3), "src.txt", "stop"].sort())
    expect(fs.readdirSync(t.at(repo(t))).sort()).toEqual([".git"])
  })
})
