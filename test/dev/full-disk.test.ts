/**
 * A fixer that fills the disk: it truncates its file and writes until `ENOSPC`, then fails. The
 * step is rolled back, and the rollback itself must not need the space the fixer used up: an
 * atomic restore needs a second copy beside the file, which a full disk refuses, and the pre-step
 * bytes (kept in memory) would be lost when the process ends. On a small tmpfs (`size=`), under
 * both resolve strategies. Mounting needs root; without it the case is skipped, saying so.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { acquire, approveAll, externalFixer, Plan, Step } from "../../src/dev/index.ts"
import { PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { openPolicy } from "./support/workspace.ts"
import { skipUnless } from "../support/skip.ts"

const mountPoint = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-full-"))
const mounted = spawnSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", mountPoint]).status === 0
afterAll(() => {
  if (mounted) spawnSync("umount", [mountPoint])
  fs.rmSync(mountPoint, { recursive: true, force: true })
})

const original = `${"a".repeat(300_000)}\n`
const fill = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-fixer-")), "fill.cjs")
beforeAll(() => {
  fs.writeFileSync(fill, 'const fs = require("fs")\nfor (const f of process.argv.slice(2)) fs.writeFileSync(f, "x".repeat(2_000_000))\n')
})
afterAll(() => fs.rmSync(path.dirname(fill), { recursive: true, force: true }))

describe.each(strategies)("a fixer that fills the disk (%s)", (strategy) => {
  beforeEach((ctx) => skipUnless(ctx, mounted, "cannot mount a 1 MiB tmpfs here (needs root)"))
  it("its step fails and its file is put back as it was, though no second copy fits", async () => {
    const ws = path.join(mountPoint, `w-${strategy}`)
    fs.mkdirSync(path.join(ws, "src"), { recursive: true })
    fs.writeFileSync(path.join(ws, "src/a.ts"), original)
    fs.writeFileSync(path.join(ws, "src/b.ts"), "b\n")
    const root = await PinnedRoot.open(ws, { strategy })
    try {
      const workspace = await acquire(root, { scope: ["src/**"] })
      const result = await Plan.run([Step.fix("fill", externalFixer({ command: process.execPath, args: [fill], scope: ["src/**"] }))], {
        root,
        workspace,
        policy: openPolicy,
        gate: approveAll
      })
      const step = result.steps[0]!
      expect(step.status).toBe("failed")
      // The fixer did fill the disk: its write stopped at ENOSPC.
      expect(step.diagnostics.find((d) => d.severity === "ERROR")!.message).toContain("ENOSPC")
      expect(step.restore!.kept).toEqual([])
      expect(fs.readFileSync(path.join(ws, "src/a.ts"), "utf8")).toBe(original)
      expect(fs.readFileSync(path.join(ws, "src/b.ts"), "utf8")).toBe("b\n")
      expect(workspace.get("src/a.ts")).toBe(original)
    } finally {
      root.close()
      fs.rmSync(ws, { recursive: true, force: true })
    }
  })
})
