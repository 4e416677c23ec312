/**
 * Rollback of a failed fix step: a real fixer process that rewrites half its files, deletes one,
 * creates one and crashes; one killed by its timeout; the pre-step bytes kept in memory and spilled
 * to a private directory beside the workspace (removed after); a file edited by someone else while
 * the step runs (never overwritten by the restore); an in-process engine whose journal limits what
 * is restored; `restore: false`. Under both resolve strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { acquire, approveAll, type Capability, externalFixer, Plan, type Progress, Step } from "../../src/dev/index.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo } from "../support/tree.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"

const files = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`src/f${i}.ts`, `export const f${i} = ${i}\n`]))

/** A fixer script: rewrites the first half of its files, removes one, creates one, then crashes. */
const halfThenCrash = (dir: string): string => {
  const file = path.join(dir, "half.cjs")
  fs.writeFileSync(
    file,
    [
      'const fs = require("fs")',
      "const given = process.argv.slice(2)",
      "console.log('beside: ' + fs.readdirSync('..').join(' '))",
      "for (const f of given.slice(0, given.length / 2)) fs.writeFileSync(f, '// rewritten\\n')",
      "fs.rmSync(given.at(-1))",
      "fs.writeFileSync('src/new.ts', 'new\\n')",
      "process.exit(70)",
      ""
    ].join("\n")
  )
  return file
}

describe.each(strategies)("rollback of a failed step (%s)", (strategy) => {
  const start = async (extra: Record<string, string> = {}) => {
    const { s, root } = await setup(strategy, { ...files, ...extra })
    fs.chmodSync(s.abs("src/f5.ts"), 0o751)
    const ws = await acquire(root, { scope: ["src/**"] })
    const output: Array<string> = []
    const run = (steps: ReadonlyArray<Step.Step>, more: Partial<Parameters<typeof Plan.run>[1]> = {}) =>
      Plan.run(steps, {
        root,
        workspace: ws,
        policy: openPolicy,
        gate: approveAll,
        onProgress: (e) => void (e.type === "output" && output.push(e.text)),
        ...more
      })
    return { s, root, ws, run, output }
  }
  const pristine = (s: Parameters<typeof disk>[0]) => {
    for (const [p, text] of Object.entries(files)) expect([p, disk(s, p)]).toEqual([p, text])
    expect(fs.existsSync(s.abs("src/new.ts"))).toBe(false)
    expect(fs.statSync(s.abs("src/f5.ts")).mode & 0o777).toBe(0o751)
  }
  const crash = (dir: string, more: Partial<Parameters<typeof externalFixer>[0]> = {}) =>
    Step.fix(
      "fix",
      externalFixer({ command: process.execPath, args: [halfThenCrash(dir)], scope: ["src/**"], mayCreate: ["src/*.ts"], ...more })
    )

  for (const [how, backupMemoryBytes] of [
    ["in memory", undefined],
    ["spilled beside the workspace", 0]
  ] as const) {
    it(`a fixer that rewrites half its files, removes one, creates one and crashes is undone (pre-step bytes ${how})`, async () => {
      const { s, ws, run, output } = await start()
      const result = await run([crash(s.outside)], { limits: backupMemoryBytes === undefined ? undefined : { backupMemoryBytes } })
      const step = result.steps[0]!
      expect(step.status).toBe("failed")
      expect(step.diagnostics.find((d) => d.severity === "ERROR")!.message).toMatch(/exited with code 70/)
      // What the fixer did was seen first, then put back.
      const reread = step.capabilities[0]!.reread!
      expect([reread.changed, reread.dropped, reread.admitted]).toEqual([
        ["src/f0.ts", "src/f1.ts", "src/f2.ts"],
        ["src/f5.ts"],
        ["src/new.ts"]
      ])
      expect(step.restore).toEqual({ restored: ["src/f0.ts", "src/f1.ts", "src/f2.ts", "src/f5.ts", "src/new.ts"], kept: [] })
      pristine(s)
      expect(ws.paths()).toEqual(Object.keys(files))
      expectDiskEqualsWorkspace(s, ws)
      // The private directory existed beside the workspace while the fixer ran, only when spilled.
      const beside = /beside: (.*)/.exec(output.join(""))![1]!.split(" ")
      expect(beside.some((n) => n.startsWith(".pinnedfs-backup-"))).toBe(backupMemoryBytes === 0)
      expect(fs.readdirSync(path.dirname(s.root)).filter((n) => n.startsWith(".pinnedfs-backup-"))).toEqual([])
    })
  }

  it("a fixer killed by its timeout is undone", async () => {
    const { s, ws, run } = await start()
    // A shell (quick to start, even on a loaded machine) that rewrites one file, then hangs.
    const hang = 'printf "half\\n" > "$1"; exec sleep 60'
    const result = await run([
      Step.fix("fix", externalFixer({ command: "/bin/sh", args: ["-c", hang, "sh"], scope: ["src/**"], timeoutMs: 1000 }))
    ])
    const step = result.steps[0]!
    expect(step.status).toBe("failed")
    expect(step.diagnostics.find((d) => d.severity === "ERROR")!.message).toMatch(/killed after 1000 ms/)
    expect(step.capabilities[0]!.reread!.changed).toEqual(["src/f0.ts"])
    expect(step.restore!.restored).toEqual(["src/f0.ts"])
    pristine(s)
    expectDiskEqualsWorkspace(s, ws)
  })

  it("a file someone edits after the re-read read it is left as they left it, with a WARNING", async () => {
    const { s, ws, run } = await start()
    let edited = false
    const result = await run([crash(s.outside)], {
      onProgress: (e: Progress) => {
        // The restore is about to compare: the user's editor saves f1 now.
        if (e.type === "restore" && !edited) {
          fs.writeFileSync(s.abs("src/f1.ts"), "the user's text\n")
          edited = true
        }
      }
    })
    const step = result.steps[0]!
    expect(edited).toBe(true)
    expect(step.restore!.restored).toEqual(["src/f0.ts", "src/f2.ts", "src/f5.ts", "src/new.ts"])
    expect(step.restore!.kept).toEqual([{ path: "src/f1.ts", why: expect.stringMatching(/changed on disk after the re-read read it/) }])
    expect(step.diagnostics.filter((d) => d.code === "not-restored").map((d) => [d.severity, d.path])).toEqual([["WARNING", "src/f1.ts"]])
    expect(disk(s, "src/f1.ts")).toBe("the user's text\n")
    expect(disk(s, "src/f0.ts")).toBe(files["src/f0.ts"])
    // The workspace still holds what the re-read read there: the next re-read takes the user's text.
    expect(ws.get("src/f1.ts")).toBe("// rewritten\n")
  })

  it("an in-process engine's failed step restores only what its façade wrote: a file the user edited meanwhile stays", async () => {
    const { s, ws, run } = await start()
    const engine: Capability = {
      name: "engine",
      scope: ["src/**"],
      mayCreate: [],
      run: async (access) => {
        await access.write("src/f0.ts", "// engine\n")
        // The user's editor saves another file while the engine works.
        fs.writeFileSync(s.abs("src/f3.ts"), "the user's text\n")
        throw new Error("the engine crashed")
      }
    }
    const result = await run([Step.fix("fix", engine)])
    const step = result.steps[0]!
    expect(step.status).toBe("failed")
    expect(step.capabilities[0]!.reread!.changed).toEqual(["src/f0.ts", "src/f3.ts"])
    expect(step.restore).toEqual({ restored: ["src/f0.ts"], kept: [] })
    expect(disk(s, "src/f0.ts")).toBe(files["src/f0.ts"])
    expect([disk(s, "src/f3.ts"), ws.get("src/f3.ts")]).toEqual(["the user's text\n", "the user's text\n"])
    expectDiskEqualsWorkspace(s, ws)
  })

  it("a file the user edits while a fixer process runs, in that fixer's allowlist, is taken for the fixer's and restored", async () => {
    // Nothing tells a child's write from another process's: this is the documented limit.
    const { s, ws, run } = await start()
    const script = path.join(s.outside, "slow.cjs")
    const go = path.join(s.outside, "go")
    mkfifo(go)
    // The fixer fixes f0, says so, then blocks on the FIFO until the test's "user" has edited f4.
    fs.writeFileSync(
      script,
      [
        "const fs = require('fs')",
        "fs.writeFileSync(process.argv[2], '// fixed\\n')",
        "console.log('ready')",
        `fs.readFileSync(${JSON.stringify(go)})`,
        "process.exit(1)",
        ""
      ].join("\n")
    )
    const result = await run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["src/**"] }))], {
      onProgress: (e: Progress) => {
        if (e.type === "output" && e.text.includes("ready")) {
          fs.writeFileSync(s.abs("src/f4.ts"), "the user's text\n")
          fs.writeFileSync(go, "go")
        }
      }
    })
    const step = result.steps[0]!
    expect(step.status).toBe("failed")
    expect(step.capabilities[0]!.reread!.changed).toEqual(["src/f0.ts", "src/f4.ts"])
    expect(step.restore!.restored).toEqual(["src/f0.ts", "src/f4.ts"])
    expect(disk(s, "src/f4.ts")).toBe(files["src/f4.ts"])
    expectDiskEqualsWorkspace(s, ws)
  })

  it("restore: false leaves a failed step's changes on disk, reconciled", async () => {
    const { s, ws, run } = await start()
    const result = await run([crash(s.outside)], { restore: false })
    const step = result.steps[0]!
    expect([step.status, step.restore]).toEqual(["failed", undefined])
    expect(disk(s, "src/f0.ts")).toBe("// rewritten\n")
    expect(disk(s, "src/new.ts")).toBe("new\n")
    expect(fs.existsSync(s.abs("src/f5.ts"))).toBe(false)
    expectDiskEqualsWorkspace(s, ws)
  })
})
