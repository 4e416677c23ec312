/**
 * File names that are not valid UTF-8 (bytes 0xff 0xfe): no JavaScript string names them, so no
 * fixer can be given one and the workspace cannot hold it. They must be reported, never silently
 * dropped: the native listing answers them on request (`PinnedRoot.globListing`), acquisition and
 * the re-read list them as skipped with a reason (an `ERROR`), and `pinnedfs fix` prints them and
 * exits 1. Under both resolve strategies (the command line under the default one).
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, externalFixer, Plan, Step } from "../../src/dev/index.ts"
import { quotedBytes } from "../../src/dev/quote.ts"
import { strategies } from "../support/strategies.ts"
import { scratch, type Scratch } from "../support/tree.ts"
import { useCli } from "./support/cli.ts"
import { disk, openPolicy, setup } from "./support/workspace.ts"

/** `rel` with `bad` (raw bytes) spliced in where `%` stands. */
const bytesOf = (rel: string, bad: ReadonlyArray<number> = [0xff, 0xfe]): Buffer => {
  const [before, after] = rel.split("%")
  return Buffer.concat([Buffer.from(before!), Buffer.from(bad), Buffer.from(after ?? "")])
}
const plant = (s: Scratch, rel: string, text = "x\n"): void => {
  fs.writeFileSync(Buffer.concat([Buffer.from(`${s.root}/`), bytesOf(rel)]), text)
}
const plantDir = (s: Scratch, rel: string): void => {
  fs.mkdirSync(Buffer.concat([Buffer.from(`${s.root}/`), bytesOf(rel)]))
}

describe("quotedBytes", () => {
  it("prints valid UTF-8 as quoted() does and each invalid byte in octal, always quoted", () => {
    expect(quotedBytes(bytesOf("src/%.ts"))).toBe('"src/\\377\\376.ts"')
    expect(quotedBytes(Buffer.concat([Buffer.from('é\n\\"'), Buffer.from([0xc3])]))).toBe('"é\\n\\\\\\"\\303"')
  })
})

describe.each(strategies)("names that are not UTF-8 (%s)", (strategy) => {
  it("glob skips them, as documented; globListing answers them (a matching file, a directory it would enter), excludes applied", async () => {
    const { s, root } = await setup(strategy, { "src/a.ts": "a\n", "docs/r.md": "r\n" })
    plant(s, "src/%.ts")
    plantDir(s, "src/d%")
    plant(s, "src/d%/c.ts")
    plant(s, "docs/%.md")
    expect(await root.glob("src/**/*.ts", { dot: true })).toEqual(["src/a.ts"])
    const l = await root.globListing("src/**/*.ts", { dot: true })
    expect(l.paths).toEqual(["src/a.ts"])
    const got = l.unnamed.map((u) => [Buffer.from(u.bytes).toString("hex"), u.directory]).sort()
    expect(got).toEqual(
      [
        [bytesOf("src/%.ts").toString("hex"), false],
        [bytesOf("src/d%").toString("hex"), true]
      ].sort()
    )
    const excluded = await root.globListing("**", { dot: true, exclude: ["src/**"] })
    expect(excluded.unnamed.map((u) => Buffer.from(u.bytes).toString("hex"))).toEqual([bytesOf("docs/%.md").toString("hex")])
    root.close()
  })

  it("acquire lists them as skipped with a reason and an ERROR; the rest is acquired", async () => {
    const { s, root } = await setup(strategy, { "src/a.ts": "a\n" })
    plant(s, "src/%.ts")
    plantDir(s, "src/d%")
    const ws = await acquire(root, { scope: ["src/**"] })
    expect(ws.paths()).toEqual(["src/a.ts"])
    expect([...ws.unnamed.keys()].sort()).toEqual(['"src/d\\377\\376"', '"src/\\377\\376.ts"'].sort())
    expect(ws.unnamed.get('"src/\\377\\376.ts"')).toMatch(/not valid UTF-8/)
    expect(ws.unnamed.get('"src/d\\377\\376"')).toMatch(/directory.*not entered/)
    expect(ws.diagnostics.filter((d) => d.code === "unnamed" && d.severity === "ERROR")).toHaveLength(2)
    root.close()
  })

  it("a fixer that creates one in its scope fails its step with the name reported, and it is not silently kept", async () => {
    const { s, root } = await setup(strategy, { "src/a.ts": "a\n" })
    const ws = await acquire(root, { scope: ["src/**"] })
    const creator: Capability = {
      name: "creator",
      scope: ["src/**"],
      mayCreate: ["src/**"],
      external: true,
      run: async () => void plant(s, "src/%.ts")
    }
    const result = await Plan.run([Step.fix("f", creator)], { root, workspace: ws, policy: openPolicy, gate: approveAll })
    const step = result.steps[0]!
    expect(step.status).toBe("failed")
    expect(step.capabilities[0]!.reread!.unnamed.map((u) => u.name)).toEqual(['"src/\\377\\376.ts"'])
    expect(step.diagnostics.find((d) => d.code === "unnamed")!.message).toContain('"src/\\377\\376.ts"')
    root.close()
  })

  it("an external fixer is never given one: it gets the names it can open", async () => {
    const { s, root } = await setup(strategy, { "src/a.ts": "a\n" })
    plant(s, "src/%.ts")
    const ws = await acquire(root, { scope: ["src/**"] })
    const out: Array<string> = []
    const fixer = externalFixer({ command: "/bin/sh", args: ["-c", 'for f; do printf "[%s]" "$f"; done', "sh"], scope: ["src/**"] })
    await Plan.run([Step.fix("f", fixer)], {
      root,
      workspace: ws,
      policy: openPolicy,
      gate: approveAll,
      onProgress: (e) => void (e.type === "output" && out.push(e.text))
    })
    expect(out.join("")).toBe("[src/a.ts]")
    root.close()
  })
})

describe("pinnedfs fix and names that are not UTF-8", () => {
  const pinnedfs = useCli("unnamed")
  const dirs: Array<string> = []
  afterAll(() => {
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
  })
  const fixer = (): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-fixer-"))
    dirs.push(dir)
    const file = path.join(dir, "fixer.cjs")
    fs.writeFileSync(file, "const fs = require('fs')\nfor (const f of process.argv.slice(2)) fs.appendFileSync(f, 'fixed\\n')\n")
    return file
  }

  it("prints them as skipped, C-quoted with the reason, fixes the rest, and exits 1", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    plant(s, "src/%.ts")
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer()])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^skipped: +"src\/\\377\\376\.ts" \(.*not valid UTF-8.*\)$/m)
    expect(r.stdout).toMatch(/^fix: failed \(1 file in scope skipped: name not UTF-8\)$/m)
    expect(disk(s, "src/a.ts")).toBe("a\nfixed\n")
  })

  it("--json lists them under skipped", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    plant(s, "src/%.ts")
    const r = await pinnedfs(["fix", "--json", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer()])
    expect(r.code).toBe(1)
    const report = JSON.parse(r.stdout) as { skipped: Array<{ name: string; reason: string }>; exitCode: number }
    expect(report.exitCode).toBe(1)
    expect(report.skipped.map((u) => u.name)).toEqual(['"src/\\377\\376.ts"'])
  })
})
