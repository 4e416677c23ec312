/**
 * Real engines, really run: Prettier and ESLint in process through the façade, `eslint --fix`,
 * `prettier --write` and `biome check --write` as child processes reconciled by the re-read, the
 * whole plan `edit(a.ts) → eslint --fix → write → prettier --write → check`, and the external
 * runner's pluggable spawn, failures and limits. Under both resolve strategies.
 */
import * as fs from "node:fs"
import { describe, expect, it, vi } from "vitest"
import {
  acquire,
  approveAll,
  defaultSpawn,
  eslintFixer,
  externalFixer,
  Plan,
  prettierFixer,
  type Progress,
  type Spawn,
  Step
} from "../../src/dev/index.ts"
import { strategies } from "../support/strategies.ts"
import { eslintConfig, toolPlan, toolPlanOk, tools } from "./support/tools.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"

// Lint-dirty TypeScript (var, missing braces, a non-shorthand property) and what each tool makes of it.
const aSource = "var x: number = 1\nlet y = 2\nif (x) y++\nexport const o = { x: x, y }\n"
const aLinted = "const x: number = 1\nlet y = 2\nif (x) {y++}\nexport const o = { x, y }\n"
const bSource = "let z: string = 'a'\nexport { z }\n"
const bLinted = "const z: string = 'a'\nexport { z }\n"

const scope = ["src/**/*.ts"]

/** Whether a process is gone: no /proc entry, or a zombie (this machine's init may never reap it). */
const gone = (pid: number): boolean => {
  try {
    return /\) [ZX] /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"))
  } catch {
    return true
  }
}

describe.each(strategies)("engines (%s)", (strategy) => {
  const start = async (files: Record<string, string> = {}, acquired: ReadonlyArray<string> = scope) => {
    const { s, root } = await setup(strategy, { "eslint.config.js": eslintConfig(), "src/a.ts": aSource, "src/b.ts": bSource, ...files })
    const ws = await acquire(root, { scope: acquired })
    const events: Array<Progress> = []
    const run = (steps: ReadonlyArray<Step.Step>, restore?: boolean) =>
      Plan.run(steps, { root, workspace: ws, policy: openPolicy, gate: approveAll, onProgress: (e) => events.push(e), restore })
    return { s, root, ws, run, events }
  }

  describe("in process, through the façade", () => {
    it("Prettier: read, format, write back, with an accurate delta", async () => {
      const { s, ws, run } = await start()
      const result = await run([Step.fix("format", prettierFixer({ scope }))])
      expect(result.ok).toBe(true)
      expect(result.steps[0]!.diagnostics).toEqual([]) // claims match the re-read exactly
      expect(ws.get("src/b.ts")).toBe('let z: string = "a";\nexport { z };\n')
      expect(result.steps[0]!.capabilities[0]!.journal.written).toEqual(["src/a.ts", "src/b.ts"])
      expectDiskEqualsWorkspace(s, ws)
    })

    it("ESLint --fix with the workspace's flat config; an unfixable problem is an ERROR", async () => {
      const { s, ws, run } = await start({ "src/c.ts": "debugger\nvar c = 1\nexport { c }\n" })
      // Kept: without restore a failed step's fixes stay (the default puts them back, as below).
      const result = await run([Step.fix("lint", eslintFixer({ scope }))], false)
      expect(ws.get("src/a.ts")).toBe(aLinted)
      expect(ws.get("src/b.ts")).toBe(bLinted)
      expect(ws.get("src/c.ts")).toBe("debugger\nconst c = 1\nexport { c }\n") // fixed what it could
      expect(result.ok).toBe(false)
      expect(result.steps[0]!.diagnostics.map((d) => [d.severity, d.code, d.path])).toEqual([["ERROR", "engine", "src/c.ts"]])
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/no-debugger/)
      expectDiskEqualsWorkspace(s, ws)
    })

    it("ESLint --fix whose unfixable problem fails the step: by default every fix it made is put back", async () => {
      const { s, ws, run } = await start({ "src/c.ts": "debugger\nvar c = 1\nexport { c }\n" })
      const result = await run([Step.fix("lint", eslintFixer({ scope }))])
      expect(result.ok).toBe(false)
      expect(result.steps[0]!.restore).toEqual({ restored: ["src/a.ts", "src/b.ts", "src/c.ts"], kept: [] })
      expect([disk(s, "src/a.ts"), disk(s, "src/c.ts")]).toEqual([aSource, "debugger\nvar c = 1\nexport { c }\n"])
      expectDiskEqualsWorkspace(s, ws)
    })

    it("ESLint as a check: reports, writes nothing", async () => {
      const { s, run } = await start()
      const result = await run([Step.check("inspect", eslintFixer({ scope, fix: false }))])
      expect(result.ok).toBe(false)
      expect(result.steps[0]!.diagnostics.filter((d) => d.code === "engine").map((d) => d.path)).toEqual(
        expect.arrayContaining(["src/a.ts", "src/b.ts"])
      )
      expect(disk(s, "src/a.ts")).toBe(aSource)
    })
  })

  describe("external processes, reconciled by the re-read", () => {
    it("eslint --fix", async () => {
      const { s, ws, run } = await start()
      const result = await run([Step.fix("lint", externalFixer({ command: tools.eslint, args: ["--fix"], scope }))])
      expect(result.ok).toBe(true)
      expect(result.steps[0]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/b.ts"])
      expect(ws.get("src/a.ts")).toBe(aLinted)
      expectDiskEqualsWorkspace(s, ws)
    })

    it("prettier --write", async () => {
      const { s, ws, run } = await start()
      const result = await run([Step.fix("format", externalFixer({ command: tools.prettier, args: ["--write"], scope }))])
      expect(result.ok).toBe(true)
      expect(ws.get("src/b.ts")).toBe('let z: string = "a";\nexport { z };\n')
      expectDiskEqualsWorkspace(s, ws)
    })

    it("biome check --write", async () => {
      const { s, ws, run } = await start()
      const result = await run([Step.fix("biome", externalFixer({ command: tools.biome, args: ["check", "--write"], scope }))])
      expect(result.ok).toBe(true)
      expect(ws.get("src/a.ts")).toBe("var x: number = 1;\nlet y = 2;\nif (x) y++;\nexport const o = { x: x, y };\n")
      expect(ws.get("src/b.ts")).toBe('const z: string = "a";\n\nexport { z };\n') // its linter fixed let → const
      expectDiskEqualsWorkspace(s, ws)
    })
  })

  it("the plan edit(a.ts) → eslint --fix → write → prettier --write → check ends with disk and workspace equal", async () => {
    const { s, ws, run } = await start()
    const edited = "export const answer   =   42\n"
    const result = await run(toolPlan(scope, edited))
    expect(result.steps.map((x) => [x.name, x.status])).toEqual(toolPlanOk)
    // eslint --fix: a.ts withheld (dirty in memory), b.ts fixed and reconciled.
    const lint = result.steps[1]!
    expect(lint.capabilities[0]!.allowlist).toEqual(["src/b.ts"])
    expect(lint.diagnostics.map((d) => [d.severity, d.code, d.path])).toEqual([["WARNING", "withheld", "src/a.ts"]])
    expect(lint.capabilities[0]!.reread!.changed).toEqual(["src/b.ts"])
    // write: the edit reaches the disk; prettier then gets both files.
    expect(result.steps[2]!.written).toEqual(["src/a.ts"])
    expect(result.steps[3]!.capabilities[0]!.allowlist).toEqual(["src/a.ts", "src/b.ts"])
    expect(result.steps[3]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/b.ts"])
    expect(ws.get("src/a.ts")).toBe("export const answer = 42;\n") // the edit survived, formatted
    expect(ws.get("src/b.ts")).toBe('const z: string = "a";\nexport { z };\n')
    expect(ws.dirtyPaths()).toEqual([])
    expectDiskEqualsWorkspace(s, ws)
  })

  describe("the external runner", () => {
    it("starts the child through the spawn it is given (the hook for confinement), with the allowlist appended", async () => {
      const both = ["*.ts", ...scope]
      const { s, run } = await start({ "-rf.ts": "let q = 1\nexport { q }\n" }, both)
      const calls: Array<{ command: string; args: ReadonlyArray<string>; cwd: string }> = []
      const spawn: Spawn = (command, args, options) => {
        calls.push({ command, args, cwd: options.cwd })
        return defaultSpawn(command, args, options)
      }
      const result = await run([Step.fix("lint", externalFixer({ command: tools.eslint, args: ["--fix"], scope: both, spawn }))])
      expect(result.ok).toBe(true)
      // A file named like an option is passed as ./-rf.ts, never as an option.
      expect(calls).toEqual([{ command: tools.eslint, args: ["--fix", "./-rf.ts", "src/a.ts", "src/b.ts"], cwd: s.root }])
      expect(disk(s, "-rf.ts")).toBe("const q = 1\nexport { q }\n")
    })

    it("a tool that fails fails the step, and what it changed first is still reconciled", async () => {
      const { s, ws, run } = await start()
      const script = "require('fs').writeFileSync('src/a.ts', 'half done\\n'); console.error('boom'); process.exit(3)"
      const result = await run(
        [Step.fix("f", externalFixer({ command: process.execPath, args: ["-e", script], scope, appendFiles: false }))],
        false
      )
      expect(result.ok).toBe(false)
      expect(result.steps[0]!.diagnostics.map((d) => [d.severity, d.code])).toEqual([["ERROR", "failed"]])
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/exited with code 3:\s+boom/)
      expect(ws.get("src/a.ts")).toBe("half done\n")
      expectDiskEqualsWorkspace(s, ws)
    })

    it("a command that cannot be started fails the step", async () => {
      const { run } = await start()
      const result = await run([Step.fix("f", externalFixer({ command: "/nonexistent/tool", scope }))])
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/could not run '\/nonexistent\/tool'/)
    })

    it("a tool past its time limit is killed and the step fails", async () => {
      const { run } = await start()
      const result = await run([
        Step.fix(
          "f",
          externalFixer({
            command: process.execPath,
            args: ["-e", "setInterval(() => {}, 1000)"],
            scope,
            appendFiles: false,
            timeoutMs: 300
          })
        )
      ])
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/was killed after 300 ms/)
    })

    it("a tool past its time limit is stopped with its whole process group, within the stated grace", async () => {
      const { s, run } = await start()
      const pidFile = `${s.outside}/grandchild.pid`
      // It ignores SIGTERM; its grandchild holds the pipes for a minute.
      const shell = `trap '' TERM; sleep 60 & echo $! > '${pidFile}'; wait`
      const started = Date.now()
      const result = await run([
        Step.fix(
          "f",
          externalFixer({ command: "/bin/sh", args: ["-c", shell], scope, appendFiles: false, timeoutMs: 200, killGraceMs: 300 })
        )
      ])
      const took = Date.now() - started
      expect(result.steps[0]!.diagnostics[0]!.message).toMatch(/was killed after 200 ms/)
      // 200 ms, then 300 ms of SIGTERM grace, then at most 500 ms for the pipes; the rest is load.
      expect(took).toBeLessThan(200 + 300 + 500 + 5000)
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      await vi.waitFor(() => expect(gone(pid)).toBe(true), { timeout: 5000, interval: 20 })
    })

    it("what a tool leaves running in its process group is stopped when it exits (it would write after the re-read)", async () => {
      const { s, ws, run } = await start()
      const pidFile = `${s.outside}/left.pid`
      const shell = `(sleep 30; echo late >> src/a.ts) > /dev/null 2>&1 & echo $! > '${pidFile}'`
      const result = await run([Step.fix("f", externalFixer({ command: "/bin/sh", args: ["-c", shell], scope, appendFiles: false }))])
      expect(result.ok).toBe(true)
      // SIGKILL was sent before the step returned; its delivery is the kernel's, so allow it a moment.
      const pid = Number(fs.readFileSync(pidFile, "utf8"))
      await vi.waitFor(() => expect(gone(pid)).toBe(true), { timeout: 5000, interval: 20 })
      expect(ws.get("src/a.ts")).toBe(aSource)
    })

    it("reports progress while the child runs", async () => {
      const { run, events } = await start()
      await run([
        Step.fix(
          "f",
          externalFixer({
            command: process.execPath,
            args: ["-e", "console.log('working'); setTimeout(() => {}, 600)"],
            scope,
            appendFiles: false,
            heartbeatMs: 50
          })
        )
      ])
      expect(events.some((e) => e.type === "running")).toBe(true)
      expect(events.some((e) => e.type === "output" && e.text.includes("working"))).toBe(true)
      expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["step", "capability", "reread"]))
    })

    it("is not run when no file is allowlisted (the tool would otherwise pick its own files)", async () => {
      const { run } = await start()
      let started = false
      const spawn: Spawn = (c, a, o) => {
        started = true
        return defaultSpawn(c, a, o)
      }
      const result = await run([Step.fix("f", externalFixer({ command: tools.eslint, args: ["--fix"], scope: ["lib/**"], spawn }))])
      expect([result.ok, started]).toEqual([true, false])
    })

    it("cannot contain the child: a write outside the envelope is neither stopped nor seen", async () => {
      // The documented limit, shown: only confinement of the process itself can stop this.
      const { s, ws, run } = await start({ "lib/l.ts": "l\n" })
      const script = "require('fs').writeFileSync('lib/l.ts', 'written by the child\\n')"
      const result = await run([
        Step.fix("f", externalFixer({ command: process.execPath, args: ["-e", script], scope, appendFiles: false }))
      ])
      expect(result.ok).toBe(true)
      expect(disk(s, "lib/l.ts")).toBe("written by the child\n")
      expect(ws.has("lib/l.ts")).toBe(false)
    })
  })
})
