/**
 * What `npm pack` puts in the published tarball: everything a user needs (the compiled library and
 * its declarations, the native sources and binding.gyp a source build needs, the prebuilds and
 * the sandbox launcher beside each,
 * LICENSE, README, CHANGELOG), and nothing else: no TypeScript sources, scripts, native tests,
 * fuzzers, benchmarks or CI shims. A file that matches no rule below fails the test.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ensureDist } from "../../scripts/package/dist.mjs"
import { skipUnless } from "../support/skip.ts"

const repo = path.resolve(import.meta.dirname, "..", "..")
let files: Array<string> = []

beforeAll(() => {
  ensureDist()
  const r = spawnSync("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: repo, encoding: "utf8" })
  expect(r.status, r.stderr).toBe(0)
  files = (JSON.parse(r.stdout) as Array<{ files: Array<{ path: string }> }>)[0]!.files.map((f) => f.path).sort()
}, 300_000)

/** Every shipped file matches one of these. */
const allowed: ReadonlyArray<RegExp> = [
  /^(package\.json|README\.md|LICENSE|CHANGELOG\.md|binding\.gyp)$/,
  /^dist\/.+\.(js|d\.ts)$/,
  /^native\/sources\.json$/,
  /^native\/(binding|core|ops|platform|platform\/linux|platform\/darwin|compat|launcher)\/[^/]+\.(cc|h)$/,
  /^prebuilds\/linux-(x64|arm64)\/(pinnedfs\.napi\.glibc\.node|pinnedfs-launch)$/
]

const tracked = (...paths: Array<string>) =>
  spawnSync("git", ["ls-files", ...paths], { cwd: repo, encoding: "utf8" })
    .stdout.split("\n")
    .filter(Boolean)

describe("the published tarball", () => {
  it("holds nothing outside the list of what a user needs", () => {
    expect(files.length).toBeGreaterThan(50)
    expect(files.filter((f) => !allowed.some((rule) => rule.test(f)))).toEqual([])
  })

  it("leaves out sources, scripts, tests, fuzzers, benchmarks and source maps", () => {
    const never = /^(src|scripts|test|docs|build|node_modules)\/|^native\/(test|fuzz|bench|ci)\/|\.map$|^CMakeLists\.txt$|^tsconfig/
    expect(files.filter((f) => never.test(f))).toEqual([])
  })

  it("holds the documents and every entry point package.json names", () => {
    for (const f of ["package.json", "README.md", "LICENSE", "CHANGELOG.md", "binding.gyp"]) expect(files).toContain(f)
    const manifest = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as {
      exports: Record<string, string | Record<string, string>>
      bin: Record<string, string>
    }
    const targets = Object.values(manifest.exports).flatMap((e) => (typeof e === "string" ? [e] : Object.values(e)))
    for (const target of [...targets, ...Object.values(manifest.bin)]) {
      expect(files, target).toContain(path.posix.normalize(target))
    }
  })

  it("runs nothing at a user's install that the tarball does not ship", () => {
    // npm lists (and, for git and directory dependencies, runs) these scripts when the package is
    // installed as a dependency; one naming a file left out of the tarball is a warning at best.
    const { scripts } = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { scripts: Record<string, string> }
    const atInstall = ["preinstall", "install", "postinstall", "prepare"].filter((s) => scripts[s] !== undefined)
    const missing = atInstall.flatMap((s) =>
      (scripts[s]!.match(/[\w./-]+\.(?:mjs|cjs|js|sh)\b/g) ?? [])
        .filter((f) => !files.includes(path.posix.normalize(f)))
        .map((f) => `${s}: ${f}`)
    )
    expect(missing).toEqual([])
  })

  it("holds every native file a source build compiles or includes", () => {
    const sources = JSON.parse(fs.readFileSync(path.join(repo, "native", "sources.json"), "utf8")) as Record<string, unknown>
    const compiled = ["addon", "core", "linux", "darwin", "portable", "launcher"].flatMap((k) => sources[k] as Array<string>)
    const headers = tracked("native/binding", "native/core", "native/ops", "native/platform", "native/compat", "native/launcher").filter(
      (f) => f.endsWith(".h")
    )
    expect(headers.length).toBeGreaterThan(5)
    for (const f of [...compiled, ...headers, "native/sources.json"]) expect(files, f).toContain(f)
  })

  it("holds the prebuilds when they were built (CI builds them before the tests)", (ctx) => {
    const promised = [
      "prebuilds/linux-arm64/pinnedfs-launch",
      "prebuilds/linux-arm64/pinnedfs.napi.glibc.node",
      "prebuilds/linux-x64/pinnedfs-launch",
      "prebuilds/linux-x64/pinnedfs.napi.glibc.node"
    ]
    const present = promised.filter((f) => fs.existsSync(path.join(repo, f)))
    skipUnless(
      ctx,
      present.length > 0 || process.env["CI"] !== undefined,
      "no prebuilds/ here (npm run build:prebuilds makes them; CI requires them)"
    )
    expect(files.filter((f) => f.startsWith("prebuilds/"))).toEqual(promised)
  })
})
