/**
 * What a launch costs in trips off the JavaScript thread, counted by the addon, and the checks the
 * one-trip programs keep: a launch's directories and its final validation are one native program,
 * their cleanup (with the release of every held descriptor) another.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Confinement, prepareLaunch } from "../../src/confine/index.ts"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { refusal, type SandboxTree, sandboxTree } from "./support/tree.ts"

const stateScratch = (t: SandboxTree, strategy: (typeof strategies)[number]) => {
  fs.mkdirSync(t.at("state"))
  const launch = t.at("state", "launch")
  return {
    launch,
    session: new Confinement({
      target: {
        workspace: t.ws,
        home: t.home,
        tempRoot: t.tmp,
        runtimeDirectory: t.at("run"),
        state: ["", "/tmp", "/cache", "/config", "/data"].map((s) => ({ path: launch + s }))
      },
      policy: { defaults: false },
      strategy
    })
  }
}

describe.each(strategies)("launch trips (%s)", (strategy) => {
  it("a fresh 5-directory state scratch: one native trip to prepare, one to clean up", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const t = sandboxTree()
    const { launch: state, session } = stateScratch(t, strategy)
    // The programs' entry handle is pinned by the first launch of a thread, once: not a launch's cost.
    await (await session.prepare()).cleanup()
    const t0 = trips()
    const launch = await session.prepare()
    const prepared = trips() - t0
    expect(launch.plan.created.map((c) => c.path).sort()).toEqual(["", "/cache", "/config", "/data", "/tmp"].map((s) => state + s).sort())
    expect(launch.plan.writableRoots).toEqual(expect.arrayContaining([t.ws, t.tmp, state, `${state}/tmp`]))
    expect(fs.statSync(state).mode & 0o777).toBe(0o700)
    const report = await launch.cleanup()
    const total = trips() - t0
    expect(report.refused).toEqual([])
    expect(report.removed.length).toBe(5)
    expect(fs.existsSync(state)).toBe(false)
    expect(prepared).toBe(1)
    expect(total).toBeLessThanOrEqual(2)
  })

  it("the one-trip preparation still refuses an anchor that is no longer the directory discovery walked", async () => {
    const t = sandboxTree()
    fs.rmSync(t.at("ws/.git"), { recursive: true })
    const outside = fs.readdirSync(t.outside)
    const session = new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    const e = await refusal(
      prepareLaunch(() => session.inputs(), {
        strategy,
        // Discovery has seen the workspace; now another directory takes its name.
        hooks: {
          afterDiscovery: () => {
            fs.renameSync(t.ws, t.at("ws-walked"))
            fs.mkdirSync(t.ws)
          }
        }
      })
    )
    expect(["creation-failed", "validation-failed"]).toContain(e.reason)
    expect(e.message).toContain("no longer the directory prepared")
    // Nothing was made in either directory, and nothing outside.
    expect(fs.readdirSync(t.ws)).toEqual([])
    expect(fs.readdirSync(t.at("ws-walked")).sort()).toEqual(["src.txt"])
    expect(fs.readdirSync(t.outside)).toEqual(outside)
  })

  it("cleanup refuses, whole and visibly, an anchor replaced after preparation; the directories it made stay", async () => {
    const t = sandboxTree()
    const { launch: state, session } = stateScratch(t, strategy)
    const launch = await session.prepare()
    fs.renameSync(t.at("state"), t.at("state-moved"))
    fs.mkdirSync(t.at("state"))
    fs.mkdirSync(state) // same name as the one made, another directory
    const report = await launch.cleanup()
    expect(report.removed).toEqual([])
    expect(report.refused.length).toBe(5)
    expect(report.refused[0]!.error.message).toContain("no longer the directory prepared")
    expect(fs.existsSync(state)).toBe(true)
    expect(fs.readdirSync(t.at("state-moved", "launch")).sort()).toEqual(["cache", "config", "data", "tmp"])
  })
})
