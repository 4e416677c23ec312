/**
 * The authoritative re-read after a capability: still present, now absent, newly present (the
 * snapshot rule and its one exception), files that cannot be admitted (read error, binary, too
 * large, a link planted by the fixer) and a later good read clearing them, exactly the envelope, in
 * one batch trip for a few files and four at once for many. Fixers here change the disk with node:fs directly, as an external tool does,
 * so only the re-read can tell the workspace what happened. Under both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, Plan, Step, type Workspace } from "../../src/dev/index.ts"
import { envelopeOf } from "../../src/dev/envelope.ts"
import { limitsOf } from "../../src/dev/limits.ts"
import { readTexts } from "../../src/dev/readTexts.ts"
import { reread } from "../../src/dev/reread.ts"
import type { PinnedRoot } from "../../src/index.ts"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, type Scratch } from "../support/tree.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"

/** A fixer that changes the disk behind the façade's back, as a child process would. */
const behind = (
  s: Scratch,
  change: (abs: (rel: string) => string) => void,
  declaration: Partial<Pick<Capability, "scope" | "selectors" | "mayCreate">> = {}
): Capability => ({
  name: "disk-fixer",
  scope: ["src/**"],
  mayCreate: ["src/**"],
  ...declaration,
  run: async () => {
    change(s.abs)
    return undefined
  }
})

/** Re-reads every path of `paths` after fixer "x" ran in `envelope`: none withheld, none created. */
const rereadAll = (root: PinnedRoot, ws: Workspace, envelope: Parameters<typeof reread>[2]["envelope"], paths: ReadonlyArray<string>) =>
  reread(root, ws, {
    envelope,
    snapshot: new Set(paths),
    withheld: new Set(),
    extra: [],
    mayCreate: () => false,
    source: "x",
    limits: limitsOf({})
  })

describe.each(strategies)("the re-read (%s)", (strategy) => {
  const start = async (files: Record<string, string>, scope = ["src/**"]) => {
    const { s, root } = await setup(strategy, files)
    const ws = await acquire(root, { scope })
    const run = (steps: ReadonlyArray<Step.Step>, limits?: Parameters<typeof limitsOf>[0]) =>
      Plan.run(steps, { root, workspace: ws, policy: openPolicy, gate: approveAll, limits })
    return { s, root, ws, run }
  }
  const fixStep = (c: Capability) => Step.fix("fix", c)
  const only = (ws: Workspace, code: string) => ws.diagnostics.filter((d) => d.code === code)

  it("still present: the disk's text replaces memory's and the path is clean", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "old\n" })
    const result = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), "new\n")))])
    expect(result.ok).toBe(true)
    expect(ws.get("src/a.ts")).toBe("new\n")
    expect(ws.isDirty("src/a.ts")).toBe(false)
    expect(result.steps[0]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts"])
  })

  it("now absent: dropped from the workspace, nothing added to pending deletions", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
    const result = await run([fixStep(behind(s, (abs) => fs.rmSync(abs("src/b.ts"))))])
    expect(ws.paths()).toEqual(["src/a.ts"])
    expect([...ws.pendingDeletions]).toEqual([])
    expect(result.steps[0]!.capabilities[0]!.reread!.dropped).toEqual(["src/b.ts"])
  })

  it("newly present and absent from the snapshot: admitted", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a" })
    const result = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/new.ts"), "made\n")))])
    expect(ws.get("src/new.ts")).toBe("made\n")
    expect(result.steps[0]!.capabilities[0]!.reread!.admitted).toEqual(["src/new.ts"])
    expect(result.ok).toBe(true)
  })

  it("newly present outside the declared mayCreate: admitted, with a warning", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a" })
    const result = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/new.ts"), "made\n"), { mayCreate: [] }))])
    expect(ws.get("src/new.ts")).toBe("made\n")
    expect(result.ok).toBe(true)
    expect(only(ws, "outside-may-create").map((d) => [d.severity, d.path])).toEqual([["WARNING", "src/new.ts"]])
  })

  it("present in the snapshot but never acquired: not admitted, even when the fixer changed it", async () => {
    // Acquired only src/a.ts; src/untracked.ts was on disk all along.
    const { s, ws, run } = await start({ "src/a.ts": "a", "src/untracked.ts": "u" }, ["src/a.ts"])
    const cap = behind(s, (abs) => fs.writeFileSync(abs("src/untracked.ts"), "changed"), { scope: ["src/**"] })
    const result = await run([fixStep(cap)])
    expect(ws.has("src/untracked.ts")).toBe(false)
    expect(result.steps[0]!.capabilities[0]!.reread!.ignored).toEqual(["src/untracked.ts"])
    expect(only(ws, "untracked").map((d) => [d.severity, d.path])).toEqual([["WARNING", "src/untracked.ts"]])
    expect(result.ok).toBe(true)
  })

  it("the one exception: a path in unreadable is admitted though the snapshot saw it", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a", "src/bin.ts": "\0\0" })
    expect(ws.unreadable.get("src/bin.ts")).toMatch(/binary/)
    expect(only(ws, "unreadable").map((d) => [d.severity, d.path])).toEqual([["ERROR", "src/bin.ts"]])
    const result = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/bin.ts"), "text now\n")))])
    expect(ws.get("src/bin.ts")).toBe("text now\n")
    expect(ws.unreadable.has("src/bin.ts")).toBe(false)
    expect(only(ws, "unreadable")).toEqual([]) // a later good read clears the entry and its ERROR
    expect(result.steps[0]!.capabilities[0]!.reread!.admitted).toEqual(["src/bin.ts"])
  })

  describe("files that cannot be admitted: unreadable, ERROR, stale text never kept", () => {
    it("made binary by the fixer, then cleared by a later good read", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n" })
      const r1 = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), Buffer.from([1, 0, 2]))))])
      expect(r1.ok).toBe(false)
      expect(ws.get("src/a.ts")).toBeUndefined()
      expect(ws.has("src/a.ts")).toBe(false)
      expect(ws.unreadable.get("src/a.ts")).toMatch(/binary/)
      expect(r1.steps[0]!.diagnostics.filter((d) => d.code === "unreadable").map((d) => [d.severity, d.path])).toEqual([
        ["ERROR", "src/a.ts"]
      ])
      const r2 = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), "good\n")))])
      expect(r2.ok).toBe(true)
      expect(ws.get("src/a.ts")).toBe("good\n")
      expect(ws.unreadable.size).toBe(0)
      expect(only(ws, "unreadable")).toEqual([])
    })

    it("made invalid UTF-8 by the fixer", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n" })
      await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), Buffer.from([0xc3, 0x28]))))])
      expect(ws.unreadable.get("src/a.ts")).toMatch(/invalid UTF-8/)
    })

    it("made too large by the fixer (over maxFileBytes)", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n", "src/b.ts": "b\n" })
      const limits = { maxFileBytes: 1024 }
      const result = await run([fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), "x".repeat(4096))))], limits)
      expect(result.ok).toBe(false)
      expect(ws.unreadable.get("src/a.ts")).toMatch(/too large/)
      expect(ws.get("src/b.ts")).toBe("b\n")
    })

    it("too large for what is left of the shared budget is not misjudged: such files are read again", async (ctx) => {
      skipUnless(ctx, testHooks, noTestHooks)
      const files: Record<string, string> = {}
      for (let i = 0; i < 6; i++) files[`src/f${i}.ts`] = String(i).repeat(900)
      const { root } = await setup(strategy, files)
      const limits = limitsOf({ maxFileBytes: 1000, readBudgetBytes: 2000 })
      const before = trips()
      const out = await readTexts(root, Object.keys(files), limits)
      expect([...out.values()].every((o) => o.kind === "text")).toBe(true)
      expect(trips() - before).toBeGreaterThan(1) // the budget carried two files per trip
      fs.writeFileSync(`${root.path}/src/f0.ts`, "y".repeat(5000))
      const again = await readTexts(root, ["src/f0.ts", "src/f1.ts"], limits)
      expect(again.get("src/f0.ts")).toMatchObject({ kind: "unreadable", reason: expect.stringMatching(/too large/) })
      expect(again.get("src/f1.ts")).toMatchObject({ kind: "text" })
    })

    it("a read error: a FIFO or a hard-linked file where the file was", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n", "src/b.ts": "b\n" })
      await run([
        fixStep(
          behind(s, (abs) => {
            fs.rmSync(abs("src/a.ts"))
            mkfifo(abs("src/a.ts"))
            fs.linkSync(abs("src/b.ts"), abs("src/b-twin.ts"))
          })
        )
      ])
      expect(ws.unreadable.get("src/a.ts")).toMatch(/not a regular file/)
      expect(ws.unreadable.get("src/b.ts")).toMatch(/hard-linked/)
      expect(ws.unreadable.get("src/b-twin.ts")).toMatch(/hard-linked/) // newly present, not admissible
      expect(ws.has("src/b.ts")).toBe(false)
    })

    it("a directory where a tracked file was", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n" })
      await run([
        fixStep(
          behind(s, (abs) => {
            fs.rmSync(abs("src/a.ts"))
            fs.mkdirSync(abs("src/a.ts"))
          })
        )
      ])
      expect(ws.unreadable.get("src/a.ts")).toMatch(/directory/)
    })
  })

  describe("a symlink planted by the fixer is never followed", () => {
    it("in place of a tracked file", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n" })
      const result = await run([
        fixStep(
          behind(s, (abs) => {
            fs.rmSync(abs("src/a.ts"))
            fs.symlinkSync(s.secret, abs("src/a.ts"))
          })
        )
      ])
      expect(result.ok).toBe(false)
      expect(ws.unreadable.get("src/a.ts")).toMatch(/symbolic link: not followed/)
      expect(ws.get("src/a.ts")).toBeUndefined()
    })

    it("as a new file and as a new directory: neither read nor entered", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a\n" })
      await run([
        fixStep(
          behind(s, (abs) => {
            fs.symlinkSync(s.secret, abs("src/new.ts"))
            fs.symlinkSync(s.outside, abs("src/dir"))
          })
        )
      ])
      expect(ws.unreadable.get("src/new.ts")).toMatch(/symbolic link/)
      expect(ws.paths()).toEqual(["src/a.ts"])
      expect([...ws.unreadable.keys()].some((p) => p.startsWith("src/dir/"))).toBe(false)
      for (const p of ws.paths()) expect(ws.get(p)).not.toContain("TOP SECRET")
    })

    it("as a directory on the way to a tracked file", async () => {
      const { s, ws, run } = await start({ "src/sub/a.ts": "a\n" })
      fs.mkdirSync(`${s.outside}/sub`)
      fs.writeFileSync(`${s.outside}/sub/a.ts`, "TOP SECRET")
      await run([
        fixStep(
          behind(s, (abs) => {
            fs.rmSync(abs("src/sub"), { recursive: true })
            fs.symlinkSync(`${s.outside}/sub`, abs("src/sub"))
          })
        )
      ])
      expect(ws.get("src/sub/a.ts")).toBeUndefined()
      expect(ws.unreadable.get("src/sub/a.ts")).toMatch(/symbolic link/)
    })
  })

  describe("exactly the envelope, in one batch", () => {
    it("never reads outside the declared scope", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a", "lib/l.ts": "l" }, ["**"])
      await run([
        fixStep(
          behind(
            s,
            (abs) => {
              fs.writeFileSync(abs("lib/l.ts"), "changed behind the scope")
              fs.writeFileSync(abs("lib/new.ts"), "new outside")
            },
            { scope: ["src/**"] }
          )
        )
      ])
      expect(ws.get("lib/l.ts")).toBe("l")
      expect(ws.has("lib/new.ts")).toBe(false)
    })

    it("with selectors: scope ∩ selectors, plus the rename destinations the façade recorded", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
      const cap: Capability = {
        name: "renamer",
        scope: ["src/**"],
        selectors: ["src/a.ts"],
        mayCreate: ["moved/*.ts"],
        run: async (access) => {
          expect(access.scope).toEqual(["src/a.ts"])
          await access.rename("src/a.ts", "moved/a.ts")
          fs.writeFileSync(s.abs("src/b.ts"), "b changed behind the selectors")
          return { changes: [{ path: "src/a.ts", to: "moved/a.ts" }] }
        }
      }
      const result = await run([fixStep(cap)])
      expect(result.steps[0]!.capabilities[0]!.reread!.paths).toEqual(["moved/a.ts", "src/a.ts"])
      expect(ws.paths()).toEqual(["moved/a.ts", "src/b.ts"])
      expect(ws.get("moved/a.ts")).toBe("a")
      expect(ws.get("src/b.ts")).toBe("b") // not in the envelope: not re-read
      expect(result.ok).toBe(true)
    })

    it("reads 1,000 paths in four batch trips at once, one per pool thread (named paths: nothing to list)", async (ctx) => {
      skipUnless(ctx, testHooks, noTestHooks)
      const files: Record<string, string> = {}
      for (let i = 0; i < 1000; i++) files[`src/f${i}.ts`] = `export const v${i} = ${i}\n`
      const { root } = await setup(strategy, files)
      const ws = await acquire(root, { scope: ["src/**"] })
      expect(ws.paths()).toHaveLength(1000)
      for (let i = 0; i < 1000; i += 7) fs.writeFileSync(`${root.path}/src/f${i}.ts`, `export const v${i} = -${i}\n`)
      const envelope = envelopeOf({ name: "x", scope: ["src/**"], selectors: Object.keys(files), mayCreate: [] })
      const before = trips()
      const report = await rereadAll(root, ws, envelope, Object.keys(files))
      expect(trips() - before).toBe(4)
      expect(report.changed).toHaveLength(143)
      expect(ws.get("src/f7.ts")).toBe("export const v7 = -7\n")
    })

    it("a scope given by globs: one listing trip per glob, then the batch trips (one under 256 files)", async (ctx) => {
      skipUnless(ctx, testHooks, noTestHooks)
      const files: Record<string, string> = {}
      for (let i = 0; i < 200; i++) files[`src/d${i % 10}/f${i}.ts`] = `${i}\n`
      const { root } = await setup(strategy, files)
      const ws = await acquire(root, { scope: ["src/**/*.ts"] })
      const envelope = envelopeOf({ name: "x", scope: ["src/**/*.ts"], mayCreate: [] })
      const before = trips()
      await rereadAll(root, ws, envelope, Object.keys(files))
      expect(trips() - before).toBe(2)
    })

    it("does not re-read a path withheld as dirty: memory's edit stands", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "disk\n" })
      const result = await run([
        Step.edit("edit", (e) => e.write("src/a.ts", "memory\n")),
        fixStep(behind(s, (abs) => fs.writeFileSync(abs("src/a.ts"), "fixer wrote the stale copy\n")))
      ])
      expect(result.steps[1]!.capabilities[0]!.reread!.paths).toEqual([])
      expect(ws.get("src/a.ts")).toBe("memory\n")
      expect(ws.isDirty("src/a.ts")).toBe(true)
      await run([Step.write()])
      expect(disk(s, "src/a.ts")).toBe("memory\n")
      expectDiskEqualsWorkspace(s, ws)
    })
  })
})
