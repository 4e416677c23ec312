/**
 * Compare-and-swap in the dev pipeline: a restore and the removal of a confined child's placeholder
 * act only on the file they checked. Another process (an orphaned grandchild of a killed fixer, an
 * editor) that writes the file between the check and the act keeps its bytes: the act is refused
 * and the path reported, never overwritten or removed. The change is made deterministically just
 * before the act (test/support/act-first.ts); each case asserts it was made. Under both resolve
 * strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { acquire, DevFileAccess } from "../../src/dev/index.ts"
import { limitsOf } from "../../src/dev/limits.ts"
import { Backup } from "../../src/dev/rollback.ts"
import { actFirst } from "../support/act-first.ts"
import { strategies } from "../support/strategies.ts"
import { disk, openPolicy, setup } from "./support/workspace.ts"

describe.each(strategies)("compare-and-swap in rollback and cleanup (%s)", (strategy) => {
  const restoring = async (files: Record<string, string>, meddle: (abs: (p: string) => string) => void) => {
    const { s, root } = await setup(strategy, files)
    const ws = await acquire(root, { scope: ["**"] })
    const editor = actFirst(root, () => meddle(s.abs))
    const backup = new Backup(editor.root, limitsOf(undefined), 1 << 20)
    return { s, root, ws, editor, backup }
  }

  for (const [what, before] of [
    ["a restore leaves a file that another process rewrote between the check and the write", { "a.ts": "before\n" }],
    ["a restore leaves a file the fixer created when another process wrote it between the check and the removal", {}]
  ] as const) {
    it(what, async () => {
      const p = "a.ts"
      const { s, ws, editor, backup } = await restoring(before, (abs) => fs.writeFileSync(abs(p), "the editor's\n"))
      await backup.keep([p])
      fs.writeFileSync(s.abs(p), "the fixer's\n")
      ws.admit(p, "the fixer's\n")
      editor.arm()
      const report = await backup.restore(ws, [p], () => undefined)
      await backup.dispose()
      expect(editor.fired()).toBe(true)
      expect(disk(s, p)).toBe("the editor's\n")
      expect(report.restored).toEqual([])
      expect(report.kept.map((k) => k.path)).toEqual([p])
    })
  }

  it("with no one else writing, the same restores put back and remove (the control)", async () => {
    const { s, ws, backup, root } = await restoring({ "a.ts": "before\n" }, () => undefined)
    fs.chmodSync(s.abs("a.ts"), 0o751)
    await backup.keep(["a.ts", "new.ts"])
    fs.writeFileSync(s.abs("a.ts"), "the fixer's\n")
    fs.chmodSync(s.abs("a.ts"), 0o600)
    fs.writeFileSync(s.abs("new.ts"), "the fixer's\n")
    ws.admit("a.ts", "the fixer's\n")
    ws.admit("new.ts", "the fixer's\n")
    const report = await backup.restore(ws, ["a.ts", "new.ts"], () => undefined)
    await backup.dispose()
    expect(report).toEqual({ restored: ["a.ts", "new.ts"], kept: [] })
    expect(disk(s, "a.ts")).toBe("before\n")
    expect(fs.statSync(s.abs("a.ts")).mode & 0o777).toBe(0o751)
    expect(disk(s, "new.ts")).toBeUndefined()
    expect([ws.get("a.ts"), ws.has("new.ts")]).toEqual(["before\n", false])
    root.close()
  })

  it("removeIfEmpty keeps a placeholder that the child wrote between the check and the removal", async () => {
    const { s, root } = await setup(strategy, {})
    const editor = actFirst(root, () => fs.writeFileSync(s.abs("out/report.txt"), "the child's output\n"))
    const access = DevFileAccess.make({ root: editor.root, policy: openPolicy, allowlist: [], mayCreate: ["out/report.txt"] })
    expect(await access.createEmpty("out/report.txt")).toBe(true)
    editor.arm()
    expect(await access.removeIfEmpty("out/report.txt")).toBe(false)
    expect(editor.fired()).toBe(true)
    expect(disk(s, "out/report.txt")).toBe("the child's output\n")
  })

  it("removeIfEmpty removes a placeholder left empty, and its directory (the control)", async () => {
    const { s, root } = await setup(strategy, {})
    const access = DevFileAccess.make({ root, policy: openPolicy, allowlist: [], mayCreate: ["out/report.txt"] })
    expect(await access.createEmpty("out/report.txt")).toBe(true)
    expect(await access.removeIfEmpty("out/report.txt")).toBe(true)
    expect(fs.existsSync(s.abs("out"))).toBe(false)
  })
})
