/**
 * Any number of files: an external fixer given 8,000 files with long names (about 5 MB of
 * arguments, more than twice this machine's ARG_MAX) runs in as many argument lists as needed, in
 * order, and the plan re-reads once (the benchmark's fixers row takes 50,000 files); the argument
 * limit is measured (getconf, the environment as passed); a confined fixer over more files than one
 * sandbox binds runs in several launches. Under both resolve strategies.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, maxScopePaths, sandboxAvailable } from "../../src/confine/index.ts"
import { acquire, approveAll, externalFixer, Plan, type Progress, Step } from "../../src/dev/index.ts"
import { argumentSpace, chunked, environmentCost, stringCost } from "../../src/dev/engines/arguments.ts"
import { confinedLaunchFiles } from "../../src/dev/engines/confined.ts"
import { strategies } from "../support/strategies.ts"
import { openPolicy, setup } from "./support/workspace.ts"
import { skipUnless, sandboxWhy } from "../support/skip.ts"

const sandbox = await sandboxAvailable()

/**
 * Paths of about 600 bytes: two long directories and a long file name (each under NAME_MAX), a
 * number. Long, so that few files fill several argument lists: each file costs the test its
 * create, its read and its re-read.
 */
const longDir = "with-a-rather-long-directory-name-".repeat(5)
const longName = (i: number) =>
  `src/module-${i % 50}-${longDir}/part-${i % 7}-${longDir}/component-${"with-an-equally-long-descriptive-file-name-".repeat(5)}${String(i).padStart(5, "0")}.ts`
const fileCount = 8_000

/** A fixer that appends to each file it is given and logs how many it got and their bytes. */
const appendAndLog = (dir: string, logDir = dir): { script: string; log: string } => {
  const script = path.join(dir, "append.cjs")
  const log = path.join(logDir, "runs.log")
  fs.writeFileSync(
    script,
    [
      "const fs = require('fs')",
      "const files = process.argv.slice(2)",
      "for (const f of files) fs.appendFileSync(f, 'fixed\\n')",
      "const bytes = process.argv.reduce((n, a) => n + Buffer.byteLength(a) + 1 + 8, 0)",
      `fs.appendFileSync(${JSON.stringify(log)}, files.length + ' ' + bytes + '\\n')`,
      ""
    ].join("\n")
  )
  return { script, log }
}

describe("the argument limit, measured", () => {
  it("is getconf ARG_MAX (the kernel's 6 MiB ceiling applied), and the environment is counted as execve counts it", () => {
    const getconf = Number(execFileSync("getconf", ["ARG_MAX"], { encoding: "utf8" }).trim())
    expect(argumentSpace()).toBe(Math.min(getconf, 6 * 1024 * 1024))
    expect(environmentCost({ A: "b", CC: "dd" })).toBe(8 + (3 + 1 + 8) + (5 + 1 + 8))
    expect(stringCost("é")).toBe(2 + 1 + 8)
  })

  it("cuts the files in order into lists that fit what the environment and the command leave", () => {
    const env = { PATH: "/usr/bin" }
    const files = Array.from({ length: 100 }, (_, i) => `f${String(i).padStart(3, "0")}`)
    const space = environmentCost(env) + 32 * 1024 + stringCost("cmd") + 8 + 10 * stringCost("f000")
    const lists = chunked(files, ["cmd"], env, { space })
    expect(lists.map((l) => l.length)).toEqual(Array(10).fill(10))
    expect(lists.flat()).toEqual(files)
    expect(chunked(files, ["cmd"], env, { space, maxFiles: 4 }).map((l) => l.length)).toEqual(Array(25).fill(4))
    expect(() => chunked(["x"], ["cmd"], { BIG: "x".repeat(200_000) }, { space: 131072 })).toThrow(/leave no room for a file name/)
  })
})

describe.each(strategies)("any number of files (%s)", (strategy) => {
  it(`${fileCount.toLocaleString("en")} files with long names: several argument lists, in order, every file fixed, one re-read`, {
    timeout: 240_000
  }, async () => {
    const files: Record<string, string> = {}
    for (let i = 0; i < fileCount; i++) files[longName(i)] = `export const v${i} = ${i}\n`
    const { s, root } = await setup(strategy, files)
    const { script, log } = appendAndLog(s.outside)
    const ws = await acquire(root, { scope: ["src/**/*.ts"] })
    expect(ws.paths()).toHaveLength(fileCount)
    const events: Array<Progress> = []
    const result = await Plan.run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["src/**/*.ts"] }))], {
      root,
      workspace: ws,
      policy: openPolicy,
      gate: approveAll,
      onProgress: (e) => events.push(e)
    })
    expect(result.steps[0]!.diagnostics.filter((d) => d.severity === "ERROR")).toEqual([])
    expect(result.ok).toBe(true)
    const runs = fs
      .readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" ").map(Number) as [number, number])
    const total = Object.keys(files).reduce((n, f) => n + stringCost(f), 0)
    expect(total).toBeGreaterThan(2 * argumentSpace()) // the old single spawn would have been E2BIG
    expect(runs.length).toBeGreaterThanOrEqual(Math.ceil(total / argumentSpace()))
    expect(runs.reduce((n, [count]) => n + count, 0)).toBe(fileCount)
    for (const [, bytes] of runs) expect(bytes).toBeLessThan(argumentSpace())
    expect(events.filter((e) => e.type === "runs")).toEqual([
      { type: "runs", name: expect.any(String), files: fileCount, runs: runs.length }
    ])
    expect(events.filter((e) => e.type === "reread")).toHaveLength(1)
    expect(result.steps[0]!.capabilities[0]!.reread!.changed).toHaveLength(fileCount)
    expect(ws.get(longName(fileCount - 1))).toBe(`export const v${fileCount - 1} = ${fileCount - 1}\nfixed\n`)
    // Removed here, within this test's time: the shared clean-up hook has a shorter one.
    fs.rmSync(s.root, { recursive: true, force: true })
  })

  it(`a confined fixer over more than ${maxScopePaths} files runs in launches of ${confinedLaunchFiles}`, {
    timeout: 240_000
  }, async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const n = maxScopePaths + 300
    const files: Record<string, string> = {}
    for (let i = 0; i < n; i++) files[`src/f${i}.ts`] = "x\n"
    const { s, root } = await setup(strategy, files)
    const base = path.dirname(s.root)
    for (const d of ["home", "tmp"]) fs.mkdirSync(path.join(base, d))
    // The log goes in the sandbox's temporary root, the one place outside the scope it may write.
    const { script, log } = appendAndLog(s.outside, path.join(base, "tmp"))
    const confine = new Confinement({
      target: { workspace: s.root, home: path.join(base, "home"), tempRoot: path.join(base, "tmp") },
      strategy
    })
    const ws = await acquire(root, { scope: ["src/**"] })
    const result = await Plan.run(
      [Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["src/**"], mayCreate: ["NEWS.md"], confine }))],
      { root, workspace: ws, policy: openPolicy, gate: approveAll }
    )
    expect(result.steps[0]!.diagnostics.filter((d) => d.severity === "ERROR")).toEqual([])
    const counts = fs
      .readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .map((l) => Number(l.split(" ")[0]))
    // Each launch binds its files and the mayCreate name: confinedLaunchFiles paths at most.
    const per = confinedLaunchFiles - 1
    expect(counts).toEqual([...Array(Math.floor(n / per)).fill(per), n % per])
    expect(result.steps[0]!.capabilities[0]!.reread!.changed).toHaveLength(n)
    expect(fs.existsSync(s.abs("NEWS.md"))).toBe(false) // made empty for the launches, removed after
  })
})
