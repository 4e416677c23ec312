/**
 * Launches that rely on the same directory at the same time. A workspace without `.git`: the first
 * launch makes the empty `.git` it protects; a launch started while it exists mounts that directory
 * read-only as an ordinary `.git`. No launch's cleanup, nor any other launch's sweep of what killed
 * launches left, may remove it while a live launch relies on it: Linux detaches a mount whose
 * mount point is removed, and the child could then make `.git/hooks/post-checkout`, which the
 * user's next `git checkout` would run outside any sandbox.
 *
 * Each waiting child acts only after the test has let another launch finish (or killed it), and
 * the test checks on the host that the directory it relied on was there when the other launch's
 * cleanup ran (the attack was live) and that no hook was written.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { outputClosed, startWaiting, startWaitingCli } from "./support/launches.ts"
import { stagePackage } from "./support/stage.ts"
import { sandboxTree, type SandboxTree } from "./support/tree.ts"

// The child's attempt: make the hooks directory and a hook in it, then say how far it got.
const hook = `mkdir -p .git/hooks 2>/dev/null && echo '#!/bin/sh' > .git/hooks/post-checkout 2>/dev/null && echo hook-written; echo attempted`

const gitless = (): SandboxTree => {
  const t = sandboxTree()
  fs.rmSync(t.at("ws/.git"), { recursive: true })
  return t
}

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

describe.each(strategies)("launches sharing a synthetic .git (%s)", (strategy) => {
  const session = (t: SandboxTree) =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })

  it("two launches: the first one's cleanup leaves the .git the second relies on, and the second removes it", async () => {
    const t = gitless()
    const s = session(t)
    const a = await s.prepare()
    expect(a.plan.created.map((c) => c.path)).toEqual([t.at("ws/.git")])
    const b = await s.prepare()
    expect(b.plan.created).toEqual([])
    expect(b.plan.restrictions).toContainEqual(expect.objectContaining({ path: t.at("ws/.git"), access: "read-only" }))
    const waiting = await startWaiting(b, hook)
    await a.run("/bin/true", [], { stdio: "ignore" })
    const first = await a.cleanup()
    // The attack is live: the directory B mounted is still there after A's cleanup, kept for B.
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true)
    expect(first.kept).toEqual([t.at("ws/.git")])
    const r = await waiting.go()
    expect(r.stdout).toContain("attempted")
    expect(r.stdout).not.toContain("hook-written")
    expect(fs.existsSync(t.at("ws/.git/hooks"))).toBe(false)
    const second = await b.cleanup()
    expect(second.refused).toEqual([])
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false) // the last launch relying on it removed it
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("three launches, the one that made .git killed: nothing removes it while another relies on it", async () => {
    const t = gitless()
    const env = { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") }
    // A: `pinnedfs run` in its own process, which makes .git and is then killed with SIGKILL.
    const a = await startWaitingCli(process.execPath, cli, [], hook, { cwd: t.ws, env })
    expect(fs.readdirSync(t.at("ws/.git"))).toEqual([])
    const s = session(t)
    const b = await s.prepare()
    const c = await s.prepare()
    expect([b.plan.created, c.plan.created]).toEqual([[], []])
    const bw = await startWaiting(b, hook)
    const cw = await startWaiting(c, hook)
    a.child.kill("SIGKILL")
    await outputClosed(a.child) // A's sandbox died with it
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true)
    // D: a whole launch meanwhile, whose cleanup sweeps what killed launches left: not this .git.
    const d = await s.run("/bin/true", [], { stdio: "ignore" })
    expect(d.cleanup.refused).toEqual([])
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true)
    const rb = await bw.go()
    expect(rb.stdout).toContain("attempted")
    expect(rb.stdout).not.toContain("hook-written")
    await b.cleanup()
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true) // C still relies on it
    const rc = await cw.go()
    expect(rc.stdout).toContain("attempted")
    expect(rc.stdout).not.toContain("hook-written")
    await c.cleanup()
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    // A's private temporary root and its record went with the last cleanup's sweep.
    expect(fs.readdirSync(t.tmp).filter((n) => n.startsWith("pinnedfs-confine-"))).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })
})
