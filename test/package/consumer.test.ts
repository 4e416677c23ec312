/**
 * The package as a user meets it: `npm pack`, then `npm install` of the tarball into fresh
 * projects, offline (npm's cache only; `node scripts/package/consumer.mjs --warm` fills it, and
 * .ci/run does so before the tests). One project has the optional peers and TypeScript, one has
 * pinnedfs alone. Each entry point is loaded from ESM and from CommonJS (require of an ES module),
 * the declarations are type-checked under node16, nodenext (CommonJS) and bundler resolution with
 * skipLibCheck off, and a missing peer gives an error that says what to install.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { fullDependencies, install, pack } from "../../scripts/package/consumer.mjs"
import { floor } from "../../scripts/node-lines.mjs"
import { ensureDist } from "../../scripts/package/dist.mjs"
import { skipUnless } from "../support/skip.ts"

const repo = path.resolve(import.meta.dirname, "..", "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-consumer-"))
const full = path.join(scratch, "full")
const bare = path.join(scratch, "bare")
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }), 300_000)

let cold = ""
let tarballPath = ""
const noPrebuild = `no prebuild for linux-${process.arch} here (npm run build:prebuilds; CI requires it)`
const prebuilt = fs.existsSync(path.join(repo, "prebuilds", `linux-${process.arch}`, "pinnedfs.napi.glibc.node"))

/**
 * Where no prebuild fits (a development checkout), the full project installs with scripts off and
 * is given the checkout's own build of the same sources, rather than compiling the addon a second
 * time (a minute of both cores): that the tarball holds every file a source build needs is
 * `tarball.test.ts`'s, and the build itself is the checkout's `npm install`. With a prebuild (CI),
 * the install runs its scripts as a user's does, and must take the prebuild.
 */
const useCheckoutBuild = (dir: string) => {
  const release = path.join(dir, "node_modules", "pinnedfs", "build", "Release")
  fs.mkdirSync(release, { recursive: true })
  for (const f of ["pinnedfs.node", "pinnedfs-launch"]) fs.copyFileSync(path.join(repo, "build", "Release", f), path.join(release, f))
}

beforeAll(() => {
  ensureDist()
  const { tarball } = pack(scratch)
  tarballPath = tarball
  if (!prebuilt) console.log(`consumer: ${noPrebuild}; the full project loads the checkout's build instead of compiling the tarball's`)
  // The bare project installs with scripts off: a prebuild must load without anything compiled.
  for (const [dir, dependencies, extra] of [
    [full, fullDependencies, prebuilt ? [] : ["--ignore-scripts"]],
    [bare, {}, ["--ignore-scripts"]]
  ] as const) {
    const r = install(dir, tarball, dependencies, "offline", extra)
    if (r.ok && dir === full && !prebuilt) useCheckoutBuild(dir)
    if (r.ok) continue
    if (/ENOTCACHED|only-if-cached/.test(r.output) && !process.env["CI"]) {
      cold =
        "npm's cache lacks what the consumer projects install: run `node scripts/package/consumer.mjs --warm` once (it fetches from the registry)"
      console.log(`skipped: ${cold}`)
      return
    }
    throw new Error(`npm install --offline of the tarball failed:\n${r.output}`)
  }
}, 900_000)

const node = (cwd: string, args: ReadonlyArray<string>) => {
  const env = { ...process.env }
  delete env["PREBUILDS_ONLY"]
  const r = spawnSync(process.execPath, args, { cwd, encoding: "utf8", env })
  return { status: r.status, stdout: r.stdout, stderr: r.stderr }
}

const write = (dir: string, file: string, text: string) => fs.writeFileSync(path.join(dir, file), text)

const tsc = (dir: string, config: string) => {
  const r = spawnSync(process.execPath, [path.join(dir, "node_modules", "typescript", "bin", "tsc"), "-p", config], {
    cwd: dir,
    encoding: "utf8"
  })
  return { status: r.status, output: `${r.stdout}${r.stderr}` }
}

describe("the packed tarball, installed", () => {
  it("loads every entry point from ESM, and PinnedRoot works", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    write(
      full,
      "esm.mjs",
      `import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { PinnedRoot, PinnedFsError } from "pinnedfs"
import * as effect from "pinnedfs/effect"
import * as kernel from "pinnedfs/kernel"
import * as fallback from "pinnedfs/fallback"
import * as dev from "pinnedfs/dev"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-esm-"))
const root = await PinnedRoot.open(dir)
await root.writeFile("a.txt", new TextEncoder().encode("from esm"))
const text = new TextDecoder().decode(await root.readFile("a.txt"))
const refused = await root.readFile("../outside").catch((e) => e instanceof PinnedFsError)
root.close()
fs.rmSync(dir, { recursive: true })
// The peer-checking entry points hand out the implementation's own objects, name for name.
const same = {}
for (const [name, facade] of [["effect", effect], ["kernel", kernel], ["fallback", fallback]]) {
  const impl = await import(new URL("./node_modules/pinnedfs/dist/" + name + "/index.js", import.meta.url))
  same[name] = JSON.stringify(Object.keys(facade)) === JSON.stringify(Object.keys(impl)) &&
    Object.keys(impl).length > 0 && Object.keys(impl).every((k) => facade[k] === impl[k])
}
console.log(JSON.stringify({ text, refused, same, dev: typeof dev.Workspace }))
`
    )
    const r = node(full, ["esm.mjs"])
    expect(r.stderr).toBe("")
    expect(JSON.parse(r.stdout)).toEqual({
      text: "from esm",
      refused: true,
      same: { effect: true, kernel: true, fallback: true },
      dev: "function"
    })
  })

  it("loads every entry point from CommonJS through require", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    write(
      full,
      "cjs.cjs",
      `const fs = require("node:fs")
const os = require("node:os")
const path = require("node:path")
const { PinnedRoot } = require("pinnedfs")
const names = ["pinnedfs/effect", "pinnedfs/kernel", "pinnedfs/fallback", "pinnedfs/dev"].map((e) => Object.keys(require(e)).length > 0)
;(async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-cjs-"))
  const root = await PinnedRoot.open(dir)
  await root.writeFile("a.txt", new TextEncoder().encode("from cjs"))
  console.log(JSON.stringify({ text: String(await root.readFile("a.txt")), names }))
  root.close()
  fs.rmSync(dir, { recursive: true })
})()
`
    )
    const r = node(full, ["cjs.cjs"])
    expect(r.stderr).toBe("")
    expect(JSON.parse(r.stdout)).toEqual({ text: "from cjs", names: [true, true, true, true] })
  })

  const typesSource = `import { PinnedRoot, PinnedFsError, reasonOf, type BigIntStats, type CpOptions, type HandleFlag, type ReadStreamOptions, type Strategy, type WriteStreamOptions } from "pinnedfs"
import { NodeAtomicFileSystem, AtomicFileSystemTypeId, withAtomicFileSystem, type AtomicFileSystem, type OpenFileRequest } from "pinnedfs/effect"
import { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem, Permission, Workspace } from "pinnedfs/kernel"
import { PathAtomicFileSystem } from "pinnedfs/fallback"
import { DevFileAccess, Plan, Workspace as DevWorkspace } from "pinnedfs/dev"

export const use = async (dir: string): Promise<bigint> => {
  const strategy: Strategy = "auto"
  const root: PinnedRoot = await PinnedRoot.open(dir, { strategy })
  const info: BigIntStats = await root.stat("package.json", { bigint: true })
  const bytes: Buffer = await root.readFile("package.json")
  // The option types of the fs/promises-shaped methods are public, so a caller can name them.
  const cp: CpOptions = { recursive: true, force: false, errorOnExist: true }
  await root.cp("src", "copy", cp)
  const flag: HandleFlag = "r+"
  await (await root.open("package.json", flag)).close()
  const reading: ReadStreamOptions = { start: 0, end: 1 }
  const writing: WriteStreamOptions = { flags: "w" }
  root.createReadStream("package.json", reading).destroy()
  root.createWriteStream("out.txt", writing).destroy()
  // @ts-expect-error internal members are not in the published declarations
  root.handle
  // @ts-expect-error internal members are not in the published declarations
  root.run
  // @ts-expect-error PinnedRoot.open is the way in
  new PinnedRoot()
  root.close()
  const failed: unknown = new Error()
  if (failed instanceof PinnedFsError) reasonOf(failed.code, failed.refusal)
  return info.size + BigInt(bytes.length)
}
export const symbols: symbol = AtomicFileSystemTypeId
export type Atomic = AtomicFileSystem
export type Open = OpenFileRequest
export const opens: Open["operation"] = "open"
export const values = [NodeAtomicFileSystem, withAtomicFileSystem, FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem, Permission, Workspace, PathAtomicFileSystem, DevFileAccess, Plan, DevWorkspace]
`
  // "dom": effect's own declarations name the Web Crypto types (CryptoKey, JsonWebKey).
  const strict = { strict: true, noEmit: true, target: "es2022", lib: ["es2022", "dom"], types: ["node"] }

  // One check reads every declaration file, ours and the dependencies', with skipLibCheck off: an
  // import in our .d.ts that leads nowhere, or a type that no longer exists, fails here. The other
  // resolution modes then only need to find and use the same declarations, which skipLibCheck does
  // not skip (and reading effect's declarations three times would cost minutes).
  it.for([
    ["node16", { module: "node16", moduleResolution: "node16", skipLibCheck: false }, "types.ts"],
    ["bundler", { module: "esnext", moduleResolution: "bundler", skipLibCheck: true }, "types.ts"],
    ["nodenext, from CommonJS", { module: "nodenext", moduleResolution: "nodenext", skipLibCheck: true }, "types.cts"]
  ] as const)("type-checks a consumer under %s resolution", { timeout: 600_000 }, ([name, options, file], ctx) => {
    skipUnless(ctx, cold === "", cold)
    write(full, file, typesSource)
    const config = `tsconfig.${name.split(",")[0]}.json`
    write(full, config, JSON.stringify({ compilerOptions: { ...strict, ...options }, files: [file] }))
    const r = tsc(full, config)
    expect(r.output).toBe("")
    expect(r.status).toBe(0)
  })

  it("ships declarations that name .js files and no internal member", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    const dist = path.join(full, "node_modules", "pinnedfs", "dist")
    const declarations = fs.readdirSync(dist, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".d.ts"))
    expect(declarations.length).toBeGreaterThan(20)
    const offending = declarations.filter((f) => {
      const text = fs.readFileSync(path.join(dist, f), "utf8")
      return /from "\.{1,2}\/[^"]*\.ts"|import\("\.{1,2}\/[^"]*\.ts"\)/.test(text) || text.includes("@internal")
    })
    // Whole-module @internal files (kept for the declarations that import their types) say so in
    // their header only; a member marked @internal anywhere else is a leak.
    expect(offending.filter((f) => !/^(internal|kernel\/internal|entry)\//.test(f))).toEqual([])
  })

  it("installs with a prebuild: nothing compiled, and it loads with install scripts off", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    skipUnless(ctx, prebuilt || process.env["CI"] !== undefined, noPrebuild)
    expect(fs.existsSync(path.join(full, "node_modules", "pinnedfs", "build"))).toBe(false)
    const r = node(bare, ["--input-type=module", "-e", `import { PinnedRoot } from "pinnedfs"; console.log(typeof PinnedRoot.open)`])
    expect(r.stderr).toBe("")
    expect(r.stdout.trim()).toBe("function")
  })

  // npm's --os only steers optional dependencies; a required one is checked against the platform
  // npm runs on. So: npm's own check (npm-install-checks, as npm bundles it) over the manifest as
  // installed says EBADPLATFORM for Windows, and an install that takes pinnedfs as an optional
  // dependency for --os=win32 leaves it out while the same install for linux takes it.
  it("is refused on Windows by npm itself (os)", { timeout: 600_000 }, (ctx) => {
    skipUnless(ctx, cold === "", cold)
    // npm's own directory, from the npm on PATH (not `npm root -g`: under another Node binary that
    // names the Node's prefix, where no npm is installed).
    const npmCli = fs.realpathSync(spawnSync("sh", ["-c", "command -v npm"], { encoding: "utf8" }).stdout.trim())
    const npmDir = path.resolve(path.dirname(npmCli), "..")
    const checks = createRequire(path.join(npmDir, "package.json"))("npm-install-checks") as {
      checkPlatform: (pkg: unknown, force: boolean, environment: { os: string; cpu: string; libc?: string }) => void
    }
    const manifest = JSON.parse(fs.readFileSync(path.join(full, "node_modules", "pinnedfs", "package.json"), "utf8"))
    expect(manifest.os).toEqual(["linux", "darwin"])
    expect(() => checks.checkPlatform(manifest, false, { os: "win32", cpu: "x64" })).toThrow(
      expect.objectContaining({ code: "EBADPLATFORM" })
    )
    expect(() => checks.checkPlatform(manifest, false, { os: "linux", cpu: "x64", libc: "glibc" })).not.toThrow()
    expect(() => checks.checkPlatform(manifest, false, { os: "darwin", cpu: "arm64" })).not.toThrow()
    for (const [platform, taken] of [
      ["win32", false],
      ["linux", true]
    ] as const) {
      const dir = path.join(scratch, `optional-${platform}`)
      fs.mkdirSync(dir, { recursive: true })
      fs.writeFileSync(
        path.join(dir, "package.json"),
        JSON.stringify({ name: "pinnedfs-optional", private: true, optionalDependencies: { pinnedfs: `file:${tarballPath}` } })
      )
      const r = spawnSync("npm", ["install", "--offline", "--no-audit", "--no-fund", "--ignore-scripts", `--os=${platform}`], {
        cwd: dir,
        encoding: "utf8"
      })
      expect(r.status, `${r.stdout}${r.stderr}`).toBe(0)
      expect(fs.existsSync(path.join(dir, "node_modules", "pinnedfs", "package.json"))).toBe(taken)
    }
  })

  it("without the optional peers, pinnedfs and pinnedfs/dev load and the Effect entry points say what to install", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    skipUnless(ctx, prebuilt || process.env["CI"] !== undefined, noPrebuild)
    write(
      bare,
      "peers.mjs",
      `import { createRequire } from "node:module"
const require = createRequire(import.meta.url)
const out = { core: Object.keys(await import("pinnedfs")).length > 0, dev: typeof (await import("pinnedfs/dev")).Workspace }
for (const entry of ["pinnedfs/effect", "pinnedfs/kernel", "pinnedfs/fallback"]) {
  out[entry] = await import(entry).then(() => "loaded", (e) => e.message)
  out[entry + " (require)"] = (() => { try { require(entry); return "loaded" } catch (e) { return e.message } })()
}
console.log(JSON.stringify(out))
`
    )
    const r = node(bare, ["peers.mjs"])
    expect(r.stderr).toBe("")
    const out = JSON.parse(r.stdout) as Record<string, unknown>
    expect(out["core"]).toBe(true)
    expect(out["dev"]).toBe("function")
    for (const entry of ["pinnedfs/effect", "pinnedfs/kernel", "pinnedfs/fallback"]) {
      for (const key of [entry, `${entry} (require)`]) {
        expect(out[key]).toBe(
          `${entry} needs effect and @effect/platform-node, optional peer dependencies of pinnedfs that are not installed. ` +
            `Install them beside pinnedfs: npm install effect@"^4.1.0" @effect/platform-node@"^4.1.0"`
        )
      }
    }
  })

  it("installs the pinnedfs command", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    skipUnless(ctx, prebuilt || process.env["CI"] !== undefined, noPrebuild)
    const r = spawnSync(path.join(bare, "node_modules", ".bin", "pinnedfs"), ["--help"], { encoding: "utf8" })
    expect(r.stderr).toBe("")
    expect(r.stdout).toContain("fix")
    expect(r.status).toBe(0)
  })

  it("pinnedfs run confines a command with the prebuilt sandbox launcher (no build, scripts off)", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    skipUnless(ctx, prebuilt || process.env["CI"] !== undefined, noPrebuild)
    skipUnless(ctx, spawnSync("bwrap", ["--version"]).status === 0, "no bubblewrap here (apt-get install bubblewrap)")
    const launcher = path.join(bare, "node_modules", "pinnedfs", "prebuilds", `linux-${process.arch}`, "pinnedfs-launch")
    expect(fs.statSync(launcher).mode & 0o111).not.toBe(0)
    const bin = path.join(bare, "node_modules", ".bin", "pinnedfs")
    const ran = spawnSync(bin, ["run", "--workspace", bare, "--", "/bin/sh", "-c", "exit 3"], { cwd: bare, encoding: "utf8" })
    expect(ran.stderr).toBe("")
    expect(ran.status).toBe(3)
    // 127 comes from the launcher inside the sandbox: it ran.
    const missing = spawnSync(bin, ["run", "--workspace", bare, "--", "pinnedfs-no-such-command"], { cwd: bare, encoding: "utf8" })
    expect(missing.status).toBe(127)
    expect(missing.stderr).toContain("pinnedfs-no-such-command: command not found")
  })

  it("supports no Node older than the installed Effect peers ask for (@effect/platform-node 4.1: Node 22.19+)", (ctx) => {
    skipUnless(ctx, cold === "", cold)
    const peer = JSON.parse(fs.readFileSync(path.join(full, "node_modules", "@effect", "platform-node", "package.json"), "utf8")) as {
      engines: { node: string }
    }
    const peerFloor = /^>=(\d+\.\d+\.\d+)$/.exec(peer.engines.node)?.[1]
    expect(peerFloor, peer.engines.node).toBeDefined()
    // engines starts where the peers start: no supported Node meets an EBADENGINE from them.
    expect(floor).toBe(peerFloor)
  })
})
