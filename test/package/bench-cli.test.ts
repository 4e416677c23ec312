/**
 * `npm run bench`'s own arguments: a mistyped option or scenario is a usage error at once (exit 2,
 * saying what was wrong), never a full run of many minutes started with the option ignored.
 */
import { spawnSync } from "node:child_process"
import * as path from "node:path"
import { describe, expect, it } from "vitest"

const bench = path.join(import.meta.dirname, "..", "..", "scripts", "bench.mjs")
const run = (...args: Array<string>) => spawnSync(process.execPath, [bench, ...args], { encoding: "utf8", timeout: 60_000 })

describe("npm run bench arguments", () => {
  it("--help prints the usage and measures nothing", () => {
    const r = run("--help")
    expect(r.status).toBe(0)
    expect(r.stdout).toMatch(/^npm run bench \[-- --quick\]/)
    expect(r.stdout).toContain("--only keeps the named scenarios")
    expect(r.stderr).not.toMatch(/warm|round/i)
  })

  it("an unknown option exits 2, naming it", () => {
    const r = run("--quick", "--bogus")
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("Unknown option '--bogus'")
  })

  it("an option without its value exits 2", () => {
    const r = run("--only")
    expect(r.status).toBe(2)
    expect(r.stderr).toMatch(/--only <value>' argument missing/)
  })

  it("--only with a name that is no scenario or group exits 2, listing the names it takes", () => {
    const r = run("--only", "stat,handle-read-4kk")
    expect(r.status).toBe(2)
    expect(r.stderr).toContain("--only names no scenario or group: handle-read-4kk")
    expect(r.stderr).toMatch(/scenarios: .*handle-read-4k,/)
  })
})
