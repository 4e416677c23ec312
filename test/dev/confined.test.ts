/**
 * The in-place fixers' external processes run under `pinnedfs/confine` (the `confine` option of
 * `externalFixer`), narrowed to each invocation's allowlist: real `eslint --fix` and `prettier
 * --write` in bubblewrap, a rogue fixer whose writes outside the workspace and into `.git` are
 * stopped by the sandbox while its edit of its own file lands and is reconciled by the re-read, a
 * stray fixer whose writes inside the workspace but outside its allowlist are stopped too, and
 * launches that cannot be confined failing their step with the reason, nothing run. Under both
 * resolve strategies.
 *
 * Without a usable bubblewrap the sandbox cases are skipped and the reason is printed; the case
 * that a missing bubblewrap refuses the step still runs.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { confinedSpawner, Confinement, sandboxAvailable } from "../../src/confine/index.ts"
import { acquire, approveAll, externalFixer, Plan, Step } from "../../src/dev/index.ts"
import { strategies } from "../support/strategies.ts"
import type { Scratch } from "../support/tree.ts"
import { eslintConfig, toolPlan, toolPlanOk } from "./support/tools.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"
import { skipUnless, sandboxWhy } from "../support/skip.ts"

const sandbox = await sandboxAvailable()

const aSource = "var x: number = 1\nlet y = 2\nif (x) y++\nexport const o = { x: x, y }\n"
const bSource = "let z: string = 'a'\nexport { z }\n"
const scope = ["src/**/*.ts"]

// A fixer gone wrong: it does its job on the files it is given, then writes outside the
// workspace, into .git/config, and plants a hook. Each attempt's outcome is echoed; `set -e` is
// not used so that every attempt is made and the disk, not the exit code, is the evidence.
const rogue = (outside: string): string =>
  [
    'for f in "$@"; do printf "// fixed\\n" >> "$f"; done',
    `printf escaped > '${outside}/escaped' && echo outside-written || echo outside-denied`,
    "printf '[evil]\\n' >> .git/config && echo config-written || echo config-denied",
    "mkdir -p .git/hooks && printf '#!/bin/sh\\n' > .git/hooks/pre-commit && echo hook-written || echo hook-denied"
  ].join("\n")

describe.each(strategies)("external fixers confined (%s)", (strategy) => {
  const start = async () => {
    const { s, root } = await setup(strategy, {
      "eslint.config.js": eslintConfig(),
      "src/a.ts": aSource,
      "src/b.ts": bSource,
      "README.md": "readme\n",
      ".git/config": "[core]\n"
    })
    // Home and temporary root beside the workspace, in the scratch base (never the real home).
    const base = path.dirname(s.root)
    for (const d of ["home", "tmp"]) fs.mkdirSync(path.join(base, d))
    const confinement = (options: { readonly bwrap?: string } = {}) =>
      new Confinement({
        target: { workspace: s.root, home: path.join(base, "home"), tempRoot: path.join(base, "tmp") },
        strategy,
        ...options
      })
    const ws = await acquire(root, { scope })
    const output: Array<string> = []
    const run = (steps: ReadonlyArray<Step.Step>) =>
      Plan.run(steps, {
        root,
        workspace: ws,
        policy: openPolicy,
        gate: approveAll,
        onProgress: (e) => void (e.type === "output" && output.push(e.text))
      })
    return { s, root, ws, run, confinement, output }
  }
  const escaped = (s: Scratch) => path.join(s.outside, "escaped")
  // A fixer that strays inside the workspace: it fixes the files it is given, then writes a file
  // outside its scope, creates one no mayCreate allows, and overwrites a file withheld from it
  // because it was edited in memory (the stale disk copy).
  const stray = [
    'for f in "$@"; do printf "// fixed\\n" >> "$f"; done',
    "printf stray >> README.md && echo readme-written || echo readme-denied",
    "printf stray > src/new.ts && echo create-written || echo create-denied",
    "printf stale > src/b.ts && echo withheld-written || echo withheld-denied"
  ].join("\n")
  const strayPlan = (confine: Confinement) => [
    Step.edit("edit b.ts", (e) => e.write("src/b.ts", "export const z = 'memory'\n")),
    Step.fix("stray", externalFixer({ command: "/bin/sh", args: ["-c", stray, "stray"], scope, confine }))
  ]

  describe("in the sandbox", () => {
    beforeEach((ctx) => skipUnless(ctx, sandbox.available, sandboxWhy(sandbox)))
    it("edit(a.ts) → eslint --fix → write → prettier --write → check, the tools confined, ends with disk and workspace equal", async () => {
      const { s, ws, run, confinement } = await start()
      const c = confinement()
      const result = await run(toolPlan(scope, "export const answer   =   42\n", c))
      expect(result.steps.map((x) => [x.name, x.status])).toEqual(toolPlanOk)
      expect(result.steps[1]!.capabilities[0]!.reread!.changed).toEqual(["src/b.ts"])
      expect(result.steps[3]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/b.ts"])
      expect(ws.get("src/a.ts")).toBe("export const answer = 42;\n")
      expect(ws.get("src/b.ts")).toBe('const z: string = "a";\nexport { z };\n')
      expectDiskEqualsWorkspace(s, ws)
      expect(disk(s, ".git/config")).toBe("[core]\n")
    })

    it("a rogue fixer: its edits land and are re-read; its writes outside the workspace and into .git are stopped", async () => {
      const { s, ws, run, confinement, output } = await start()
      const result = await run([
        Step.fix("rogue", externalFixer({ command: "/bin/sh", args: ["-c", rogue(s.outside), "rogue"], scope, confine: confinement() }))
      ])
      expect(result.steps[0]!.status).toBe("ok")
      const said = output.join("")
      expect(said).toContain("outside-denied")
      expect(said).toContain("config-denied")
      expect(said).toContain("hook-denied")
      expect(fs.existsSync(escaped(s))).toBe(false)
      expect(disk(s, ".git/config")).toBe("[core]\n")
      expect(fs.existsSync(s.abs(".git/hooks"))).toBe(false)
      // What it was allowed to do, it did, and the re-read took it in.
      expect(result.steps[0]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/b.ts"])
      expect(ws.get("src/a.ts")).toBe(`${aSource}// fixed\n`)
      expectDiskEqualsWorkspace(s, ws)
    })

    it("the same rogue fixer unconfined writes all three (what the sandbox is there to stop)", async () => {
      const { s, run, output } = await start()
      const result = await run([Step.fix("rogue", externalFixer({ command: "/bin/sh", args: ["-c", rogue(s.outside), "rogue"], scope }))])
      expect(result.steps[0]!.status).toBe("ok")
      expect(output.join("")).toContain("outside-written")
      expect(disk(s, "../outside/escaped")).toBe("escaped")
      expect(disk(s, ".git/config")).toBe("[core]\n[evil]\n")
      expect(fs.existsSync(s.abs(".git/hooks/pre-commit"))).toBe(true)
    })

    it("a fixer writing in the workspace outside its allowlist is stopped by the sandbox; the re-read finds only its allowlisted edit", async () => {
      const { s, ws, run, confinement, output } = await start()
      const result = await run(strayPlan(confinement()))
      const step = result.steps[1]!
      expect(step.status).toBe("ok")
      const said = output.join("")
      for (const word of ["readme-denied", "create-denied", "withheld-denied"]) expect(said).toContain(word)
      const report = step.capabilities[0]!
      expect(report.allowlist).toEqual(["src/a.ts"])
      expect(report.withheld.map((w) => [w.path, w.reason])).toEqual([["src/b.ts", "dirty"]])
      expect(report.reread!.changed).toEqual(["src/a.ts"])
      expect(report.reread!.admitted).toEqual([])
      expect(step.diagnostics.filter((d) => d.code === "outside-may-create")).toEqual([])
      expect(disk(s, "README.md")).toBe("readme\n")
      expect(fs.existsSync(s.abs("src/new.ts"))).toBe(false)
      expect(disk(s, "src/b.ts")).toBe(bSource)
      expect(ws.get("src/b.ts")).toBe("export const z = 'memory'\n")
      expect(disk(s, "src/a.ts")).toBe(`${aSource}// fixed\n`)
    })

    it("the same stray fixer unconfined, or confined to the whole workspace, writes all three (what the narrowing stops)", async () => {
      for (const how of ["unconfined", "whole workspace"] as const) {
        const { s, run, confinement, output } = await start()
        const spawn = how === "unconfined" ? undefined : confinedSpawner(confinement())
        const result = await run([
          Step.edit("edit b.ts", (e) => e.write("src/b.ts", "export const z = 'memory'\n")),
          Step.fix("stray", externalFixer({ command: "/bin/sh", args: ["-c", stray, "stray"], scope, spawn }))
        ])
        const step = result.steps[1]!
        expect([how, step.status]).toEqual([how, "ok"])
        for (const word of ["readme-written", "create-written", "withheld-written"]) expect(output.join("")).toContain(word)
        // The re-read sees only the creation; the other two writes go unnoticed.
        expect(step.capabilities[0]!.reread!.admitted).toEqual(["src/new.ts"])
        expect(step.diagnostics.filter((d) => d.code === "outside-may-create").map((d) => d.path)).toEqual(["src/new.ts"])
        expect(disk(s, "README.md")).toBe("readme\nstray")
        expect(disk(s, "src/b.ts")).toBe("stale")
      }
    })

    it("a confined spawn given as externalFixer's spawn gets the runner's cwd as its one --chdir: no bubblewrap warning", async () => {
      const { s, run, confinement, output } = await start()
      const spawn = confinedSpawner(confinement())
      const result = await run([
        Step.fix("where", externalFixer({ command: "/bin/sh", args: ["-c", 'pwd; printf "// here\\n" >> "$1"', "where"], scope, spawn }))
      ])
      expect(result.steps[0]!.status).toBe("ok")
      // bubblewrap says "Only the last --chdir option will take effect" when given two.
      expect(output.join("")).toBe(`${fs.realpathSync(s.root)}\n`)
      expect(disk(s, "src/a.ts")).toBe(`${aSource}// here\n`)
    })

    it("Confinement.spawn with a cwd starts there, with one --chdir", async () => {
      const { s, confinement } = await start()
      fs.mkdirSync(s.abs("src/deep"))
      for (const cwd of [s.root, s.abs("src/deep")]) {
        const child = await confinement().spawn("/bin/sh", ["-c", "pwd"], { cwd })
        let out = ""
        let err = ""
        child.stdout!.on("data", (d: Buffer) => (out += d.toString()))
        child.stderr!.on("data", (d: Buffer) => (err += d.toString()))
        const code = await new Promise((resolve) => child.on("close", resolve))
        expect({ code, out, err }).toEqual({ code: 0, out: `${fs.realpathSync(cwd)}\n`, err: "" })
      }
    })

    it("a fixer may create its mayCreate names, a missing directory made for them, and nowhere else", async () => {
      const { s, run, confinement, output } = await start()
      const script = [
        "printf 'export {}\\n' > src/gen/x.ts && echo gen-written",
        "printf news > NEWS.md && echo news-written",
        "printf no > src/gen/y.ts || echo sibling-denied",
        "printf no > src/y.ts || echo src-denied"
      ].join("; ")
      const result = await run([
        Step.fix(
          "gen",
          externalFixer({
            command: "/bin/sh",
            args: ["-c", script],
            appendFiles: false,
            scope,
            mayCreate: ["src/gen/x.ts", "NEWS.md", "src/unused/z.ts"],
            confine: confinement()
          })
        )
      ])
      expect(result.steps[0]!.status).toBe("ok")
      for (const word of ["gen-written", "news-written", "sibling-denied", "src-denied"]) expect(output.join("")).toContain(word)
      expect(disk(s, "src/gen/x.ts")).toBe("export {}\n")
      expect(disk(s, "NEWS.md")).toBe("news")
      expect(fs.existsSync(s.abs("src/gen/y.ts"))).toBe(false)
      expect(fs.existsSync(s.abs("src/y.ts"))).toBe(false)
      // The name it did not use was made empty for the run and removed after, with its directory.
      expect(fs.existsSync(s.abs("src/unused"))).toBe(false)
      expect(result.steps[0]!.capabilities[0]!.reread!.admitted).toEqual(["NEWS.md", "src/gen/x.ts"])
      expect(result.steps[0]!.diagnostics).toEqual([])
    })

    it("--may-create NEWS.md: the child's writable set is exactly its allowlist and NEWS.md (it tries every other path)", async () => {
      const { s, run, confinement, output } = await start()
      s.make({ "secret.txt": "secret\n", "package.json": "{}\n", "docs/guide.md": "guide\n", "src/deep/c.ts": "c\n" })
      // Every file rewritten in place, every directory given a new file and a new directory, and
      // a rename beside each file: what succeeds is printed.
      const probe = path.join(s.outside, "probe.cjs")
      fs.writeFileSync(
        probe,
        [
          "const fs = require('fs'), p = require('path')",
          "const ok = []",
          "const attempt = (what, f) => { try { f(); ok.push(what) } catch {} }",
          "const walk = (d) => {",
          "  for (const e of fs.readdirSync(d, { withFileTypes: true })) {",
          "    const at = d === '.' ? e.name : p.join(d, e.name)",
          "    if (e.isDirectory()) walk(at)",
          "    else if (e.isFile()) { attempt(at, () => fs.appendFileSync(at, '')); attempt('rename ' + at, () => fs.renameSync(at, at + '.moved')) }",
          "  }",
          "  attempt('new file in ' + d, () => fs.writeFileSync(p.join(d, 'probe-new.txt'), 'x'))",
          "  attempt('new dir in ' + d, () => fs.mkdirSync(p.join(d, 'probe-dir')))",
          "}",
          "attempt('NEWS.md', () => fs.writeFileSync('NEWS.md', 'news\\n'))",
          "walk('.')",
          "console.log('succeeded ' + JSON.stringify([...new Set(ok)].sort()))",
          ""
        ].join("\n")
      )
      const result = await run([
        Step.fix(
          "probe",
          externalFixer({ command: process.execPath, args: [probe], scope: ["src/*.ts"], mayCreate: ["NEWS.md"], confine: confinement() })
        )
      ])
      expect(result.steps[0]!.status).toBe("ok")
      const succeeded = JSON.parse(/succeeded (.*)/.exec(output.join(""))![1]!) as Array<string>
      expect(succeeded).toEqual(["NEWS.md", "src/a.ts", "src/b.ts"])
      expect([disk(s, "secret.txt"), disk(s, "package.json"), disk(s, "NEWS.md")]).toEqual(["secret\n", "{}\n", "news\n"])
    })

    it("a confined tool past its time limit is stopped with its sandbox, within the stated grace", async () => {
      const { run, confinement } = await start()
      const shell = "trap '' TERM; sleep 60 & wait"
      const started = Date.now()
      const result = await run([
        Step.fix(
          "slow",
          externalFixer({
            command: "/bin/sh",
            args: ["-c", shell],
            scope,
            appendFiles: false,
            timeoutMs: 200,
            killGraceMs: 300,
            confine: confinement()
          })
        )
      ])
      expect(result.steps[0]!.diagnostics.find((d) => d.severity === "ERROR")!.message).toMatch(/was killed after 200 ms/)
      expect(Date.now() - started).toBeLessThan(200 + 300 + 500 + 8000) // the sandbox's own set-up and clean-up included
    })

    it("a mayCreate glob is refused for a confined fixer, saying why", async () => {
      const { confinement } = await start()
      expect(() => externalFixer({ command: "/bin/sh", scope, mayCreate: ["src/gen/*.ts"], confine: confinement() })).toThrow(
        /a confined fixer's mayCreate names files, and 'src\/gen\/\*\.ts' is a glob/
      )
    })

    it("a fixer that fails on a write the sandbox refuses fails its step; its edits are re-read, then put back", async () => {
      const { s, ws, run, confinement } = await start()
      const script = `set -e\nfor f in "$@"; do printf "// fixed\\n" >> "$f"; done\nprintf escaped > '${s.outside}/escaped'`
      const result = await run([
        Step.fix("rogue", externalFixer({ command: "/bin/sh", args: ["-c", script, "rogue"], scope, confine: confinement() }))
      ])
      const step = result.steps[0]!
      expect(step.status).toBe("failed")
      const error = step.diagnostics.find((d) => d.severity === "ERROR")!
      expect(error.message).toMatch(/exited with code \d+/)
      expect(error.message).toMatch(/Read-only file system|Permission denied/)
      expect(fs.existsSync(escaped(s))).toBe(false)
      expect(step.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/b.ts"])
      expect(step.restore).toEqual({ restored: ["src/a.ts", "src/b.ts"], kept: [] })
      expect(ws.get("src/b.ts")).toBe(bSource)
      expectDiskEqualsWorkspace(s, ws)
    })

    it("a launch that cannot be confined (a .git that is a link out) fails the step with the reason; nothing runs", async () => {
      const { s, run, confinement } = await start()
      fs.mkdirSync(s.abs("lib"))
      fs.symlinkSync(s.outside, s.abs("lib/.git"))
      const result = await run([
        Step.fix("f", externalFixer({ command: "/bin/sh", args: ["-c", "touch ran"], scope, confine: confinement() }))
      ])
      expect(result.steps[0]!.status).toBe("failed")
      expect(result.steps[0]!.diagnostics.find((d) => d.severity === "ERROR")!.message).toMatch(/could not run '\/bin\/sh': .*link/)
      expect(fs.existsSync(s.abs("ran"))).toBe(false)
    })
  })

  it("without bubblewrap the step fails saying so, and the command is not run", async () => {
    const { s, run, confinement } = await start()
    const c = confinement({ bwrap: path.join(s.outside, "no-bwrap-here") })
    const result = await run([Step.fix("f", externalFixer({ command: "/bin/sh", args: ["-c", "touch ran"], scope, confine: c }))])
    expect(result.steps[0]!.status).toBe("failed")
    expect(result.steps[0]!.diagnostics.find((d) => d.severity === "ERROR")!.message).toContain("bubblewrap is not executable")
    expect(fs.existsSync(s.abs("ran"))).toBe(false)
  })

  it("a confinement of another directory is refused before the command runs", async () => {
    const { s, run } = await start()
    const other = new Confinement({ target: { workspace: s.outside }, strategy })
    const result = await run([Step.fix("f", externalFixer({ command: "/bin/sh", args: ["-c", "touch ran"], scope, confine: other }))])
    expect(result.steps[0]!.status).toBe("failed")
    expect(result.steps[0]!.diagnostics.find((d) => d.severity === "ERROR")!.message).toContain("is not this plan's workspace")
    expect(fs.existsSync(s.abs("ran"))).toBe(false)
  })

  it("confine and spawn together are refused when the fixer is made", async () => {
    const { s } = await start()
    const c = new Confinement({ target: { workspace: s.root }, strategy })
    expect(() =>
      externalFixer({
        command: "/bin/sh",
        scope,
        confine: c,
        spawn: () => {
          throw new Error("unused")
        }
      })
    ).toThrow(/either confine or spawn/)
  })
})
