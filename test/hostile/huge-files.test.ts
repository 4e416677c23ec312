/**
 * Huge and growing files through every reading entry (PinnedRoot, the Effect extension, the raw
 * addon), under both strategies. Every answer is the content within the limit or a typed
 * `toolarge` refusal (`BadArgument`): never an allocation failure, which aborts the process
 * (std::bad_alloc in an addon built without exceptions). Each scenario runs in a child process so a
 * regression fails here instead of killing the runner; see huge-files.child.mjs for the scenarios.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"

const child = fileURLToPath(new URL("./huge-files.child.mjs", import.meta.url))
let transpiled = ""
beforeAll(() => {
  transpiled = transpileSources("huge")
})
afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

const runChild = (strategy: string, scenario: string, extra: ReadonlyArray<string> = []): any => {
  const out = spawnSync(process.execPath, [child, transpiled, strategy, scenario, ...extra], {
    encoding: "utf8",
    timeout: 180_000,
    maxBuffer: 1 << 24
  })
  expect(out.signal, `child killed by ${out.signal}; stderr:\n${out.stderr}`).toBeNull()
  expect(out.status, out.stderr).toBe(0)
  const line = out.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`huge-files ${scenario} (${strategy}): ${line.slice(0, 400)}`)
  return JSON.parse(line)
}

const everyValue = (o: Record<string, unknown>): Array<string> =>
  Object.values(o).flatMap((v) => (typeof v === "object" && v !== null ? everyValue(v as Record<string, unknown>) : [String(v)]))

describe.each(strategies)("huge and growing files (%s)", (strategy) => {
  it("refuses a 1 TiB sparse file from its size, through every entry", () => {
    const r = runChild(strategy, "sparse")
    const entries = everyValue(r)
    expect(entries.length).toBe(16)
    for (const e of entries) expect(e).toMatch(/^(BadArgument|native)\/toolarge: file of 1099511627776 bytes exceeds the read limit of/)
    // PinnedRoot's default and the extension's contentLimit; the raw addon's ceiling when no limit is given.
    expect(r["PinnedRoot.read"]).toContain(`limit of ${512 * 1024 * 1024} bytes`)
    expect(r["addon.call"]).toContain(`limit of ${2 ** 31 - 1} bytes`)
  }, 200_000)

  it("stops a file that grows past the limit while it is read (fstat says 0, the read goes on)", () => {
    // A command line far longer than the 4096-byte limit the child sets.
    const r = runChild(strategy, "grows", ["x".repeat(20_000)])
    expect(r.cmdline).toBeGreaterThan(20_000)
    for (const e of everyValue(r.over)) {
      expect(e).toBe("BadArgument/toolarge: file grew past the read limit of 4096 bytes while being read")
    }
    for (const e of everyValue(r.within)) expect(e).toBe(`ok:${r.cmdline}`)
  }, 200_000)

  it("answers the content or toolarge while another thread grows and shrinks the file", () => {
    const r = runChild(strategy, "race")
    const outcomes = r.outcomes as Record<string, number>
    // Nothing but the two typed outcomes, for all the reads (1,600, more when the first 1,600 never
    // met the file large).
    expect(
      Object.keys(outcomes).filter((k) => k !== "content" && k !== "toolarge"),
      JSON.stringify(outcomes)
    ).toEqual([])
    expect(r.reads).toBeGreaterThanOrEqual(1600)
    expect((outcomes.content ?? 0) + (outcomes.toolarge ?? 0)).toBe(r.reads)
    // The race was live: the file was resized under the reads, and some reads met it large.
    expect(r.truncations).toBeGreaterThan(0)
    expect(outcomes.toolarge ?? 0).toBeGreaterThan(0)
  }, 200_000)

  it("refuses text too long for a JavaScript string as toolarge, not ERR_STRING_TOO_LONG or a defect", () => {
    const r = runChild(strategy, "string")
    const entries = everyValue(r)
    expect(entries.length).toBe(5)
    for (const e of entries) {
      expect(e).toMatch(/^BadArgument\/toolarge: 545259520 bytes decode to more than the 536870888 characters/)
    }
  }, 200_000)
})
