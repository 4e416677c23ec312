/**
 * binding.gyp's two switches, as node-gyp turns them into compiler and linker flags: a user's
 * source build (no GYP_DEFINES) has no -Werror, so a newer compiler's new warning cannot fail an
 * install; CI and `npm run build` set pinnedfs_werror; and only the prebuild build
 * (pinnedfs_portable) links the C++ runtime in and wraps the newer glibc symbols. Each case runs
 * `node-gyp configure` (generation only, nothing compiled) in a scratch copy.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const repo = path.resolve(import.meta.dirname, "..", "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-gyp-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const nodedir = (() => {
  if (process.env["npm_config_nodedir"]) return process.env["npm_config_nodedir"]
  const prefix = path.dirname(path.dirname(process.execPath))
  return fs.existsSync(path.join(prefix, "include", "node", "common.gypi")) ? prefix : undefined
})()

/** The generated makefile fragment for the addon under `defines` (GYP_DEFINES). */
const configure = (name: string, defines: string | undefined) => {
  const dir = path.join(scratch, name)
  fs.mkdirSync(path.join(dir, "native"), { recursive: true })
  fs.copyFileSync(path.join(repo, "binding.gyp"), path.join(dir, "binding.gyp"))
  fs.copyFileSync(path.join(repo, "package.json"), path.join(dir, "package.json"))
  fs.copyFileSync(path.join(repo, "native", "sources.json"), path.join(dir, "native", "sources.json"))
  // binding.gyp lists the core's directories (sources.json coreDirs) as it configures.
  fs.mkdirSync(path.join(dir, "native", "ops"))
  const env: Record<string, string | undefined> = { ...process.env, NODE_PATH: path.join(repo, "node_modules") }
  delete env["GYP_DEFINES"]
  if (defines !== undefined) env["GYP_DEFINES"] = defines
  const args = [
    path.join(repo, "node_modules", "node-gyp", "bin", "node-gyp.js"),
    "configure",
    ...(nodedir ? [`--nodedir=${nodedir}`] : [])
  ]
  const r = spawnSync(process.execPath, args, { cwd: dir, env, encoding: "utf8" })
  expect(r.status, r.stderr).toBe(0)
  return fs.readFileSync(path.join(dir, "build", "pinnedfs.target.mk"), "utf8")
}

describe("binding.gyp's build switches", () => {
  it("a user's source build: warnings stay warnings, the ordinary link", { timeout: 120_000 }, () => {
    const mk = configure("user", undefined)
    expect(mk).toContain("-Wall")
    expect(mk).toContain("-Wextra")
    expect(mk).not.toContain("-Werror")
    expect(mk).not.toContain("-static-libstdc++")
    expect(mk).not.toContain("--wrap=")
    expect(mk).not.toContain("glibc_floor.o")
  })

  it("CI and development builds: -Werror", { timeout: 120_000 }, () => {
    expect(configure("ci", "pinnedfs_werror=true")).toContain("-Werror")
  })

  it("the prebuilds: C++ runtime linked in, newer glibc symbols wrapped", { timeout: 120_000 }, () => {
    const mk = configure("portable", "pinnedfs_portable=true pinnedfs_werror=true")
    const wraps = (JSON.parse(fs.readFileSync(path.join(repo, "native", "sources.json"), "utf8")) as { portableWraps: Array<string> })
      .portableWraps
    for (const flag of [
      "-static-libstdc++",
      "-static-libgcc",
      "-Wl,--exclude-libs,ALL",
      "-Werror",
      ...wraps.map((w) => `-Wl,--wrap=${w}`)
    ]) {
      expect(mk, flag).toContain(flag)
    }
    expect(mk).toContain("native/compat/glibc_floor.o")
  })
})
