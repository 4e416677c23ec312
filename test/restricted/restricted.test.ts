/**
 * Restricted kernels: openat2 blocked by a seccomp filter (test/restricted/seccomp_exec.c) that
 * answers ENOSYS (Podman, runc) or EPERM (Docker's default action, systemd-nspawn). `auto` must
 * fall back to the walk, an explicit `openat2` must fail saying why, and the operation suites must
 * still pass, run again in a child vitest under the filter.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { buildHelper } from "../../scripts/race/run.mjs"
import { warmTranspiled } from "../support/transpile-cache.ts"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..")
let launcher = ""
beforeAll(() => {
  launcher = buildHelper("test/restricted/seccomp_exec.c", "seccomp_exec")
  // The child runs share this run's translations of src/ (transpile-cache.ts); made here, they do
  // not fall on the first of its tests to stage the library, under that test's time limit.
  warmTranspiled(path.join(repo, "src"))
})

// The environment of a child that must not think it is one of this run's vitest workers.
const childEnv = (blocked: string) => {
  const env: Record<string, string> = {}
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !k.startsWith("VITEST") && k !== "NODE_OPTIONS") env[k] = v
  }
  env["PINNEDFS_TEST_NO_OPENAT2"] = blocked
  env["NO_COLOR"] = "1"
  delete env["FORCE_COLOR"]
  return env
}

// Pins a scratch root three ways and tries a few operations, inside the filter; answers JSON.
const probe = `
  const fs = require("node:fs"), os = require("node:os"), path = require("node:path")
  const native = require(${JSON.stringify(path.join(repo, "node_modules/node-gyp-build"))})(${JSON.stringify(repo)})
  ;(async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-restricted-"))
    fs.mkdirSync(path.join(dir, "a"))
    fs.writeFileSync(path.join(dir, "a/f.txt"), "inside")
    fs.symlinkSync(os.tmpdir(), path.join(dir, "ln"))
    const out = {}
    try {
      for (const strategy of ["auto", "openat2", "walk"]) {
        try {
          const root = await native.pin(dir, strategy)
          const read = await root.execute({ op: native.ops.readFile, path: "a/f.txt" })
          const link = await root.execute({ op: native.ops.readFile, path: "ln/x" }).then(() => "followed", (e) => e.refusal)
          out[strategy] = { strategy: root.strategy, read: Buffer.from(read).toString(), link }
          root.close()
        } catch (e) {
          out[strategy] = { code: e.code, description: e.description }
        }
      }
    } finally {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    process.stdout.write(JSON.stringify(out))
  })()`

// The operation suites: every test/*.test.ts at the top level (the race, restricted and
// unprivileged suites are about other things and would recurse or only repeat themselves), but
// the two about the native trip's scheduling, which resolve nothing (trip, settle-pacing). Under
// EPERM a representative few: after pinning, ENOSYS and EPERM leave the same walk in force, and the
// probe above already covers how each is told apart at pin time.
const notResolution = ["trip.test.ts", "settle-pacing.test.ts"]
const suites = (blocked: string) =>
  fs
    .readdirSync(path.join(repo, "test"))
    .filter((f) => f.endsWith(".test.ts") && !notResolution.includes(f))
    .filter((f) => blocked === "ENOSYS" || ["read.test.ts", "write.test.ts", "dir.test.ts"].includes(f))
    .map((f) => `test/${f}`)

describe.each(["ENOSYS", "EPERM"])("openat2 answered %s by seccomp", (blocked) => {
  it("auto falls back to the walk, openat2 fails clearly, the walk still refuses links", () => {
    const run = spawnSync(launcher, [blocked, process.execPath, "-e", probe], {
      encoding: "utf8",
      env: childEnv(blocked)
    })
    expect(run.stderr).toBe("")
    expect(run.status).toBe(0)
    const out = JSON.parse(run.stdout)
    expect(out.auto).toEqual({ strategy: "walk", read: "inside", link: "symlink" })
    expect(out.walk).toEqual({ strategy: "walk", read: "inside", link: "symlink" })
    expect(out.openat2.code).toBe(blocked)
    expect(out.openat2.description).toContain("unavailable")
    expect(out.openat2.description).toContain(blocked)
  })

  it("passes the operation suites with openat2 blocked (all under ENOSYS, a few under EPERM)", () => {
    const files = suites(blocked)
    expect(files.length).toBeGreaterThanOrEqual(blocked === "ENOSYS" ? 3 : 2)
    const run = spawnSync(launcher, [blocked, process.execPath, path.join(repo, "node_modules/vitest/vitest.mjs"), "run", ...files], {
      cwd: repo,
      encoding: "utf8",
      env: childEnv(blocked),
      maxBuffer: 64 << 20
    })
    const report = `${run.stdout}\n${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, "")
    expect(run.status, report.slice(-4000)).toBe(0)
    // The child really ran the suites (and under the walk only: strategies.ts reads the variable).
    expect(report).toMatch(/Test Files\s+\S*\d+ passed/)
  }, 300_000)
})
