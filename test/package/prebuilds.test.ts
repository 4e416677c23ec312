/**
 * The published prebuilds load on glibc 2.28 and later: their dynamic symbols ask for no GLIBC_
 * version above 2.28 and for no libstdc++ or libgcc at all (scripts/package/prebuilds.mjs reads
 * them with a small ELF reader). The reader is checked against binutils and against the source
 * build, which does need libstdc++; and publishing refuses to go ahead without the prebuilds.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { portabilityProblems, readDynamic } from "../../scripts/package/elf.mjs"
import { checkPrebuild, glibcFloor, launcherPath, prebuildPath, promised } from "../../scripts/package/prebuilds.mjs"
import { skipUnless } from "../support/skip.ts"

const repo = path.resolve(import.meta.dirname, "..", "..")
const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-prebuilds-"))
afterAll(() => fs.rmSync(scratch, { recursive: true, force: true }))

const present = promised.filter((p) => fs.existsSync(prebuildPath(p.target)))
if (present.length < promised.length && !process.env["CI"]) {
  console.log("skipped where a prebuild is missing: npm run build:prebuilds makes them (CI requires them)")
}
const sourceBuild = path.join(repo, "build", "Release", "pinnedfs.node")
const haveObjdump = spawnSync("objdump", ["--version"]).status === 0

/**
 * Checks `file`, the `target`'s prebuild or launcher, built for `arch`: no portability problem, its
 * report printed. Skipped with the reason when it is not built here, outside CI.
 */
const checked = (
  ctx: Parameters<typeof skipUnless>[0],
  file: string,
  arch: string,
  target: string,
  what: "prebuild" | "launcher"
): void => {
  skipUnless(
    ctx,
    fs.existsSync(file) || process.env["CI"] !== undefined,
    `no ${target} ${what} here (npm run build:prebuilds makes it; CI requires it)`
  )
  const { report, problems } = checkPrebuild(file, arch)
  console.log(`${what === "launcher" ? `${target} launcher` : target}\n${report}`)
  expect(problems).toEqual([])
}

describe("the prebuilds", () => {
  it.for(promised)(`$target asks for glibc ${glibcFloor} at most and no libstdc++ or libgcc`, ({ target, arch }, ctx) => {
    checked(ctx, prebuildPath(target), arch, target, "prebuild")
  })

  it.for(promised)(
    "$target's sandbox launcher is a static executable for its machine: no library, no glibc version",
    ({ target, arch }, ctx) => {
      const file = launcherPath(target)
      checked(ctx, file, arch, target, "launcher")
      expect(readDynamic(file).needed).toEqual([])
      expect(fs.statSync(file).mode & 0o111).not.toBe(0)
    }
  )

  it("the reader finds what makes the source build unportable", () => {
    const info = readDynamic(sourceBuild)
    expect(["x86_64", "aarch64"]).toContain(info.machine)
    const problems = portabilityProblems(info, glibcFloor)
    expect(problems.some((p) => p.startsWith("needs libstdc++.so.6"))).toBe(true)
    expect(problems.some((p) => /^needs GLIBCXX_3\.4\.\d+ from libstdc\+\+\.so\.6: /.test(p))).toBe(true)
    // With no floor below this machine's glibc, only the C++ runtime remains a problem.
    expect(portabilityProblems(info, "99.0").every((p) => !p.startsWith("needs GLIBC_"))).toBe(true)
  })

  it("the reader agrees with objdump -T on every versioned symbol", (ctx) => {
    skipUnless(ctx, haveObjdump, "no objdump here (binutils)")
    const files = [sourceBuild, ...present.map((p) => prebuildPath(p.target))]
    for (const file of files) {
      const dump = spawnSync("objdump", ["-T", file], { encoding: "utf8" }).stdout
      const theirs = new Set<string>()
      for (const line of dump.split("\n")) {
        const m = /\*UND\*\s+\S+\s+\(?([A-Z_]+[0-9.]*[0-9])\)?\s+(\S+)$/.exec(line.trim())
        if (m) theirs.add(`${m[2]}@${m[1]}`)
      }
      const ours = new Set(
        readDynamic(file)
          .undefinedSymbols.filter((s) => s.version)
          .map((s) => `${s.name}@${s.version}`)
      )
      expect(theirs.size, file).toBeGreaterThan(10)
      expect([...ours].sort(), file).toEqual([...theirs].sort())
    }
  })

  it("the reader refuses what is not an ELF shared object", () => {
    const junk = path.join(scratch, "junk.node")
    fs.writeFileSync(junk, "not an ELF file at all, just text that is long enough to have a header\n")
    expect(() => readDynamic(junk)).toThrow(/not a readable ELF shared object \(no ELF magic\)/)
    expect(checkPrebuild(junk, "x64").problems[0]).toMatch(/no ELF magic/)
  })

  it("the prebuild for this machine loads in this Node", (ctx) => {
    skipUnless(
      ctx,
      present.some((p) => p.arch === process.arch),
      `no prebuild for ${process.arch} here (npm run build:prebuilds)`
    )
    const file = prebuildPath(promised.find((p) => p.arch === process.arch)!.target)
    const r = spawnSync(
      process.execPath,
      ["-e", `const b = require(${JSON.stringify(file)}); console.log(typeof b.pin, typeof b.ops.readFile)`],
      {
        encoding: "utf8"
      }
    )
    expect(r.stderr).toBe("")
    expect(r.stdout.trim()).toBe("function number")
  })
})

describe("publishing (prepublishOnly)", () => {
  const prepublish = (root: string) =>
    spawnSync(process.execPath, [path.join(repo, "scripts", "package", "prepublish.mjs"), root], { encoding: "utf8" })

  it("refuses without the prebuilds", () => {
    const r = prepublish(path.join(scratch, "none"))
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("linux-x64")
    expect(r.stderr).toContain("linux-arm64")
    expect(r.stderr).toContain("Refusing to publish")
  })

  it("refuses a prebuild that would not load on glibc 2.28", () => {
    const root = path.join(scratch, "unportable")
    for (const { target } of promised) {
      fs.mkdirSync(path.dirname(prebuildPath(target, root)), { recursive: true })
      fs.copyFileSync(sourceBuild, prebuildPath(target, root))
    }
    const r = prepublish(root)
    expect(r.status).toBe(1)
    expect(r.stderr).toContain("needs libstdc++.so.6")
    expect(r.stderr).toContain("Refusing to publish")
  })

  it("goes ahead with the prebuilds npm run build:prebuilds made", (ctx) => {
    skipUnless(ctx, present.length === promised.length, "not every promised prebuild is here (npm run build:prebuilds)")
    const r = prepublish(repo)
    expect(r.stderr).toBe("")
    expect(r.status).toBe(0)
  })
})
