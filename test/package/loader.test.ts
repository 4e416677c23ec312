/**
 * What a user sees when the addon cannot be loaded: the loader (src/internal/native.ts) must tell
 * "there is no binary for this platform" from "a binary was found and failed to load", give the
 * reason, the command that fixes it and what a source build needs. Each case stages a package
 * directory around the loader (compiled from the source as it is now), imports it in a fresh Node
 * and reads the error.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import ts from "typescript"
import { afterAll, describe, expect, it } from "vitest"

const repo = path.resolve(import.meta.dirname, "..", "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-loader-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const loaderJs = ts.transpileModule(fs.readFileSync(path.join(repo, "src", "internal", "native.ts"), "utf8"), {
  compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022 }
}).outputText

/** A package directory with the loader in its published place and the given binaries. */
const stage = (name: string, binaries: Record<string, Uint8Array | string>) => {
  const dir = path.join(scratch, name)
  fs.mkdirSync(path.join(dir, "dist", "internal"), { recursive: true })
  fs.writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "pinnedfs", type: "module" }))
  fs.writeFileSync(path.join(dir, "dist", "internal", "native.js"), loaderJs)
  fs.symlinkSync(path.join(repo, "node_modules"), path.join(dir, "node_modules"))
  for (const [file, content] of Object.entries(binaries)) {
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true })
    fs.writeFileSync(path.join(dir, file), content)
  }
  return dir
}

/** Imports the staged loader in a child; answers its error message (or "" when it loaded). */
const load = (dir: string) => {
  const env = { ...process.env }
  delete env["PREBUILDS_ONLY"]
  delete env["PINNEDFS_PREBUILD"]
  const r = spawnSync(
    process.execPath,
    [
      "--input-type=module",
      "-e",
      `import(${JSON.stringify(path.join(dir, "dist", "internal", "native.js"))})` +
        `.then(() => console.log("loaded"), (e) => { console.log(e.message); process.exit(1) })`
    ],
    { encoding: "utf8", env }
  )
  return { status: r.status, message: r.stdout.trim(), stderr: r.stderr }
}

const platform = `${process.platform}-${process.arch}`

describe("the native loader's errors", () => {
  it("says there is no binary for this platform, and how to build one", () => {
    const r = load(stage("none", {}))
    expect(r.status).toBe(1)
    expect(r.message).toContain(`pinnedfs: no native binary for ${platform}`)
    expect(r.message).toContain("prebuilds for linux-x64 and linux-arm64")
    expect(r.message).toContain("`npm rebuild pinnedfs`")
    expect(r.message).toContain("Python 3, make and a C++17 compiler")
    expect(r.message).not.toContain("failed to load")
  })

  it("says a binary built from source was found and failed to load, and why", () => {
    const dir = stage("broken-build", { "build/Release/pinnedfs.node": "this is not an ELF file\n" })
    const r = load(dir)
    expect(r.status).toBe(1)
    expect(r.message).toContain("pinnedfs: a native binary was found and failed to load: ")
    expect(r.message).toMatch(/invalid ELF header|file too short/)
    expect(r.message).toContain(path.join(dir, "build", "Release", "pinnedfs.node"))
    expect(r.message).toContain("`npm rebuild pinnedfs --build-from-source`")
    expect(r.message).toContain("Python 3, make and a C++17 compiler")
    expect(r.message).not.toContain("no native binary")
  })

  it("says a prebuild was found and failed to load, and why", () => {
    const file = `prebuilds/${platform}/pinnedfs.napi.glibc.node`
    const dir = stage("broken-prebuild", { [file]: new Uint8Array(16) })
    const r = load(dir)
    expect(r.status).toBe(1)
    expect(r.message).toContain("a native binary was found and failed to load: ")
    expect(r.message).toContain(path.join(dir, file))
  })

  it("loads a working binary without a word", () => {
    const built = [path.join(repo, "build", "Release", "pinnedfs.node"), path.join(repo, `prebuilds/${platform}/pinnedfs.napi.glibc.node`)]
    const binary = built.find((f) => fs.existsSync(f) && spawnSync(process.execPath, ["-e", `require(${JSON.stringify(f)})`]).status === 0)
    expect(binary, "a loadable addon (npm ci builds build/Release)").toBeDefined()
    const r = load(stage("working", { "build/Release/pinnedfs.node": fs.readFileSync(binary!) }))
    expect(r.message).toBe("loaded")
    expect(r.status).toBe(0)
  })
})
