/**
 * What confinement does not stop, as docs/confine.md says it: each case here passes while the
 * weakness it documents is real, so a change that closes one fails here and the docs get updated.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { runScript, sandboxTree } from "./support/tree.ts"

describe.each(strategies)("documented residuals (%s)", (strategy) => {
  it("a hard link made before the launch from the workspace to a file inside .git lets the child rewrite that file", async () => {
    const t = sandboxTree()
    fs.linkSync(path.join(t.ws, ".git", "config"), path.join(t.ws, "alias"))
    const launch = await new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy
    }).prepare()
    const r = await runScript(launch, "echo x >> .git/config || echo direct-denied; echo through-alias >> alias && echo alias-written")
    expect(r.stdout).toContain("direct-denied")
    expect(r.stdout).toContain("alias-written")
    expect(t.read("ws/.git/config")).toBe("[core]\nthrough-alias\n")
  })
})
