/**
 * Races on discovery and on creation targets. First deterministically, with the preparation's test
 * hooks changing the tree at the exact moment between two steps; then for real, with a worker
 * swapping a directory for a link to an outside tree while launches are prepared, bounded in swaps
 * and time. Whatever happens, nothing outside is created, removed or protected-by-mistake, and
 * every preparation either succeeds with a plan inside the tree or refuses; and each live test
 * checks that the exchanges reached the preparations (a plan that met the exchanged layout, or a
 * refusal), not only that the kernel made them.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, ConfinementError, prepareLaunch } from "../../src/confine/index.ts"
import { raceRounds, snapshot } from "../support/attacker.ts"
import { strategies } from "../support/strategies.ts"
import { refusal, sandboxTree, type SandboxTree } from "./support/tree.ts"

describe.each(strategies)("races on confinement (%s)", (strategy) => {
  const session = (t: SandboxTree, rules: Array<[string, ("read-only" | "inaccessible")?]> = []) =>
    new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      policy: { protected: rules },
      strategy
    })
  /**
   * Prepares and cleans up a launch of `s` in bounded rounds while the native attacker exchanges
   * ws/sub with ws/sublink (a link to outside), putting them back between rounds; each round
   * answers the paths its plan named, or its refusal.
   */
  const prepareUnderSwap = (t: SandboxTree, s: Confinement) =>
    raceRounds({
      pairs: [[t.at("ws/sub"), t.at("ws/sublink")]],
      maxRounds: 60,
      maxMs: 4_000,
      reset: () => {},
      round: async (): Promise<{ named: Array<string>; refused: unknown }> => {
        try {
          const launch = await s.prepare()
          const named = [...launch.plan.restrictions.map((r) => r.path), ...launch.plan.layers.map((l) => l.path)]
          await launch.cleanup()
          return { named, refused: undefined }
        } catch (e) {
          return { named: [], refused: e }
        }
      },
      inspect: (r) => r
    })
  const prepare = (s: Confinement, hooks: { afterDiscovery?: () => void; afterCreation?: () => void }) =>
    prepareLaunch(() => s.inputs(), { strategy, hooks })

  it("a protected directory replaced by a link after discovery is refused, never followed", async () => {
    const t = sandboxTree()
    t.write("ws/sub/.git/config", "x")
    const home = snapshot(t.home)
    const e = await refusal(
      prepare(session(t), {
        afterDiscovery: () => {
          fs.renameSync(t.at("ws/sub/.git"), t.at("ws/sub/.git-moved"))
          fs.symlinkSync(path.join(t.home, ".ssh"), t.at("ws/sub/.git"))
        }
      })
    )
    expect(e.reason).toBe("link")
    expect(e.message).toContain(t.at("ws/sub/.git"))
    expect(snapshot(t.home)).toEqual(home)
  })

  it("a protected path missing at the final validation is never skipped: discovery runs again and finds where it went", async () => {
    const t = sandboxTree()
    t.write("ws/sub/.git/config", "x")
    // Removed: the fresh discovery no longer lists it, and the rest is applied.
    let discoveries = 0
    const removed = await prepare(session(t), {
      afterDiscovery: () => {
        if (discoveries++ === 0) fs.rmSync(t.at("ws/sub/.git"), { recursive: true })
      }
    })
    expect(discoveries).toBe(2)
    const left = removed.plan.restrictions.map((r) => r.path)
    expect(left).toContain(t.at("ws/.git"))
    expect(left).not.toContain(t.at("ws/sub/.git"))
    await removed.cleanup()
    // Moved with its parent: the fresh discovery protects it where it is now.
    t.write("ws/sub/.git/config", "x")
    discoveries = 0
    const moved = await prepare(session(t), {
      afterDiscovery: () => {
        if (discoveries++ === 0) fs.renameSync(t.at("ws/sub"), t.at("ws/sub.d"))
      }
    })
    expect(discoveries).toBe(2)
    expect(moved.plan.restrictions.map((r) => r.path)).toContain(t.at("ws/sub.d/.git"))
    await moved.cleanup()
    // Moving on every try: refused, saying so.
    let round = 0
    const e = await refusal(
      prepare(session(t), {
        afterDiscovery: () => fs.renameSync(t.at(round % 2 === 0 ? "ws/sub.d" : "ws/sub"), t.at(round++ % 2 === 0 ? "ws/sub" : "ws/sub.d"))
      })
    )
    expect(e.reason).toBe("moved")
    expect(round).toBe(3)
    expect(e.message).toMatch(/in each of 3 preparations/)
  })

  it("a parent swapped for a link to outside before creation: the program refuses, nothing is made outside", async () => {
    const t = sandboxTree()
    fs.mkdirSync(t.at("ws/sub"))
    const outside = snapshot(t.outside)
    const e = await refusal(
      prepare(session(t, [["sub/.git", "read-only"]]), {
        afterDiscovery: () => {
          fs.renameSync(t.at("ws/sub"), t.at("ws/sub-real"))
          fs.symlinkSync(t.outside, t.at("ws/sub"))
        }
      })
    )
    expect(e.reason).toBe("creation-failed")
    expect(snapshot(t.outside)).toEqual(outside)
    expect(fs.readdirSync(t.at("ws/sub-real"))).toEqual([])
  })

  it("the directory made for a protected path replaced after creation is refused, and cleanup removes nothing it did not make", async () => {
    const t = sandboxTree()
    fs.rmSync(t.at("ws/.git"), { recursive: true })
    fs.mkdirSync(t.at("outside/victim"))
    const outside = snapshot(t.outside)
    const linked = await refusal(
      prepare(session(t), {
        afterCreation: () => {
          fs.renameSync(t.at("ws/.git"), t.at("ws/.git-made"))
          fs.symlinkSync(t.at("outside/victim"), t.at("ws/.git"))
        }
      })
    )
    expect(linked.reason).toBe("link")
    expect(snapshot(t.outside)).toEqual(outside)
    expect(fs.lstatSync(t.at("ws/.git")).isSymbolicLink()).toBe(true) // not ours: left alone
    fs.rmSync(t.at("ws/.git"))
    fs.rmSync(t.at("ws/.git-made"), { recursive: true })
    const replaced = await refusal(
      prepare(session(t), {
        afterCreation: () => {
          fs.renameSync(t.at("ws/.git"), t.at("ws/.git-made"))
          fs.mkdirSync(t.at("ws/.git"))
        }
      })
    )
    expect(replaced.reason).toBe("validation-failed")
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true) // the replacement is not ours to remove
  })

  // A refused launch whose directory was replaced must not leave its record for a later sweep: the
  // sweep finds its directory by dev:ino, and ext4 gives a freed inode number to the next directory
  // made. Seen under load: the first launch's record, swept by the second launch's cleanup, removed
  // the second launch's replacement, which had been given the number of the first launch's
  // directory, deleted in between.
  it("a launch whose made directory was replaced leaves no record for a later sweep to act on", async () => {
    const t = sandboxTree()
    fs.rmSync(t.at("ws/.git"), { recursive: true })
    const records = () => (fs.existsSync(t.at("run")) ? fs.readdirSync(t.at("run")).filter((n) => n.endsWith(".launch")) : [])
    for (const replace of [() => fs.symlinkSync(t.at("outside"), t.at("ws/.git")), () => fs.mkdirSync(t.at("ws/.git"))]) {
      const refused = await refusal(
        prepare(session(t), {
          afterCreation: () => {
            fs.renameSync(t.at("ws/.git"), t.at("ws/.git-made"))
            replace()
          }
        })
      )
      expect(["link", "validation-failed"]).toContain(refused.reason)
      expect(records()).toEqual([])
      fs.rmSync(t.at("ws/.git"), { recursive: true })
      fs.rmSync(t.at("ws/.git-made"), { recursive: true })
    }
  })

  it("cleanup through a parent swapped for a link refuses visibly and removes nothing outside", async () => {
    const t = sandboxTree()
    fs.mkdirSync(t.at("ws/sub"))
    fs.mkdirSync(t.at("outside/.git"))
    const outside = snapshot(t.outside)
    const launch = await session(t, [["sub/.git", "read-only"]]).prepare()
    expect(launch.plan.created.map((c) => c.path)).toEqual([t.at("ws/sub/.git")])
    await launch.run("/bin/true", [], { stdio: "ignore" })
    fs.renameSync(t.at("ws/sub"), t.at("ws/sub-real"))
    fs.symlinkSync(t.outside, t.at("ws/sub"))
    const report = await launch.cleanup()
    expect(report.removed).toEqual([])
    expect(report.refused.map((r) => r.path)).toEqual([t.at("ws/sub/.git")])
    expect(snapshot(t.outside)).toEqual(outside)
  })

  it("discovery under a live swap (a directory and a link to outside): every plan stays inside (bounded)", async () => {
    const t = sandboxTree()
    t.write("ws/sub/.git/config", "x")
    t.write("outside/repo/.git/config", "x")
    t.write("outside/.env", "TOKEN")
    fs.symlinkSync(t.outside, t.at("ws/sublink"))
    const outside = snapshot(t.outside)
    const s = session(t, [["**/.env"]])
    // ws/sub flips between the real directory and the link to outside, exchanged atomically by the
    // native attacker while each preparation runs, and put back between preparations.
    const race = await prepareUnderSwap(t, s)
    expect(race.swaps).toBeGreaterThan(0)
    expect(race.rounds).toBeGreaterThan(0)
    // The attack reached the preparations: some met the exchanged layout (the real directory under
    // the link's name, or a link where discovery had found a directory).
    const hit = race.answers.filter((r) => r.refused !== undefined || r.named.some((p) => p.startsWith(t.at("ws/sublink/"))))
    expect(hit.length).toBeGreaterThan(0)
    for (const r of race.answers) {
      // The exchange may leave the real directory under the name `sublink` (its .git is inside and
      // may be named there); what only a followed link could name is outside's repo/ or .env.
      expect(r.named.filter((p) => p.startsWith(t.outside) || /\/ws\/sub(link)?\/(repo|\.env)/.test(p))).toEqual([])
      if (r.refused !== undefined) {
        expect(r.refused).toBeInstanceOf(ConfinementError)
        expect(["link", "validation-failed", "discovery-failed", "moved"]).toContain((r.refused as ConfinementError).reason)
      }
    }
    expect(snapshot(t.outside)).toEqual(outside)
  })

  it("creation targets under a live swap of their parent: nothing is created or removed outside (bounded)", async () => {
    const t = sandboxTree()
    fs.mkdirSync(t.at("ws/sub"))
    fs.mkdirSync(t.at("outside/keep"))
    fs.symlinkSync(t.outside, t.at("ws/sublink"))
    const outside = snapshot(t.outside)
    const s = session(t, [["sub/.git", "read-only"], ["sub/keep"]])
    const race = await prepareUnderSwap(t, s)
    expect(race.swaps).toBeGreaterThan(0)
    expect(race.rounds).toBeGreaterThan(0)
    // The attack reached the creation programs: some met the link where the parent had been.
    expect(race.answers.filter((r) => r.refused !== undefined).length).toBeGreaterThan(0)
    for (const { refused } of race.answers) if (refused !== undefined) expect(refused).toBeInstanceOf(ConfinementError)
    expect(snapshot(t.outside)).toEqual(outside)
    expect(fs.existsSync(t.at("outside/.git"))).toBe(false)
  })
})
