/**
 * The sandbox checked from outside before its command starts, deterministically: the tree changes
 * between the final validation and bubblewrap's mounts (after `prepare()`, before `spawn()`), as a
 * concurrent child's rename would. bubblewrap then mounts the held `.git` at a stale destination;
 * the check sees it, kills the sandbox before its command runs, removes what bubblewrap made on
 * the host, and a fresh preparation protects the repository where it went.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"

describe.each(strategies)("the sandbox check (%s)", (strategy) => {
  const session = (t: SandboxTree) =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })

  it("a repository moved between the final validation and the mounts: the stale sandbox never runs, a fresh one protects it", async () => {
    const t = sandboxTree()
    t.write("ws/sub/.git/config", "[core]\n")
    const real = fs.statSync(t.at("ws/sub/.git")).ino
    const launch = await session(t).prepare()
    expect(launch.plan.restrictions.map((r) => r.path)).toContain(t.at("ws/sub/.git"))
    // The parent moves away after the validation; bubblewrap makes ws/sub/.git for its mount.
    fs.renameSync(t.at("ws/sub"), t.at("ws/sub.d"))
    const r = await runScript(launch, `echo ran; echo pwned >> sub.d/.git/config && echo wrote; echo x >> src.txt && echo edit-ok`)
    // The command ran once, in the fresh sandbox, where the moved repository is read-only.
    expect(r.stdout.match(/^ran$/gm)?.length).toBe(1)
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).not.toContain("wrote")
    expect(launch.plan.restrictions.map((r) => r.path)).toContain(t.at("ws/sub.d/.git"))
    expect(fs.statSync(t.at("ws/sub.d/.git")).ino).toBe(real)
    expect(t.read("ws/sub.d/.git/config")).toBe("[core]\n")
    // The mount point bubblewrap made for the stale destination is gone.
    expect(fs.existsSync(t.at("ws/sub"))).toBe(false)
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })
})
