/**
 * `PinnedRoot.open(dir, { symlinks: "within" })`: a link is followed while its resolution stays
 * beneath the root, on the way always and as the final component of reads and listings; every
 * other operation on a final link acts on the link itself. What leaves the root (a `..` above it,
 * an absolute text), a loop and a mount crossing are refused, under both strategies. The default
 * still refuses every link. Each refusal has its positive control: node:fs, given the same path,
 * reaches outside (or loops).
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { expectAnswers } from "../support/answers.ts"
import { snapshot } from "../support/attacker.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

/** A pnpm-shaped tree with every kind of link a workspace holds, and the ones an attacker plants. */
const setup = () => {
  const s = scratch()
  s.make({
    "a.txt": "a",
    "d/e/g.txt": "g",
    ".pnpm/pkg@1.0.0/node_modules/pkg/index.js": "module.exports = 1",
    ".pnpm/pkg@1.0.0/node_modules/pkg/lib/util.js": "util",
    "packages/app/package.json": "{}",
    "node_modules/": ""
  })
  const link = (target: string, at: string) => fs.symlinkSync(target, s.abs(at))
  link("../.pnpm/pkg@1.0.0/node_modules/pkg", "node_modules/pkg")
  link("../packages/app", "node_modules/app")
  link("a.txt", "link.txt")
  link("d", "dirlink")
  link("dirlink/e", "chain") // a link through a link
  link("../a.txt", "d/back")
  link("../../a.txt", "d/e/back2")
  link("nope", "dangling")
  link("../outside/secret.txt", "up") // leaves by ".."
  link("d/../../outside", "updir") // ".." chain climbing out in the text
  link("e/../../../outside/secret.txt", "d/deep") // climbs out from below
  link(s.secret, "abs") // absolute, outside
  link(s.abs("a.txt"), "absin") // absolute, naming a file inside: still refused (Go's rule)
  link("loop2", "loop1")
  link("loop1", "loop2")
  for (let i = 0; i < 41; i++) link(`c${i + 1}`, `c${i}`)
  fs.writeFileSync(s.abs("c41"), "end of the chain")
  link("/proc/self/root/etc/passwd", "magic")
  return s
}

describe.each(strategies)("symlinks: 'within' (%s)", (strategy) => {
  const open = (root: string) => PinnedRoot.open(root, { strategy, symlinks: "within" })

  it("reads through the links a pnpm workspace has", async () => {
    const s = setup()
    const root = await open(s.root)
    await expectAnswers(
      (p) => root.readFileString(p),
      [
        ["node_modules/pkg/index.js", "module.exports = 1"],
        ["node_modules/pkg/lib/util.js", "util"],
        ["node_modules/app/package.json", "{}"],
        ["link.txt", "a"],
        ["dirlink/e/g.txt", "g"],
        ["chain/g.txt", "g"],
        ["d/back", "a"],
        ["d/e/back2", "a"],
        ["dirlink/back", "a"],
        ["dirlink/../a.txt", "a"],
        ["c30", "end of the chain"]
      ]
    )
    expect((await root.readDirectory("node_modules/pkg")).sort()).toEqual(["index.js", "lib"])
    expect(await root.readDirectory("node_modules/pkg/lib")).toEqual(["util.js"])
    expect(await root.exists("node_modules/pkg/index.js")).toBe(true)
    expect(await root.exists("dirlink/nope")).toBe(false)
    expect((await root.stat("node_modules/pkg/index.js")).type).toBe("File")
    expect(await root.glob("*.js", { root: "node_modules/pkg" })).toEqual(["index.js"])
    // Identities: the file reached through the link is the file itself.
    const viaLink = await root.stat("dirlink/e/g.txt", { bigint: true })
    expect(viaLink.ino).toBe(fs.lstatSync(s.abs("d/e/g.txt"), { bigint: true }).ino)
    root.close()
  })

  it("acts on a final link itself for stat, readLink, exists, remove and rename", async () => {
    const s = setup()
    const root = await open(s.root)
    expect((await root.stat("link.txt")).type).toBe("SymbolicLink")
    expect((await root.stat("node_modules/pkg")).type).toBe("SymbolicLink")
    expect(await root.readLink("node_modules/pkg")).toBe("../.pnpm/pkg@1.0.0/node_modules/pkg")
    expect(await root.readLink("dirlink/back")).toBe("../a.txt")
    expect(await root.exists("dangling")).toBe(true)
    expect(await root.exists("up")).toBe(true)
    await root.rename("link.txt", "renamed.txt")
    expect(fs.lstatSync(s.abs("renamed.txt")).isSymbolicLink()).toBe(true)
    await root.remove("renamed.txt")
    expect(fs.existsSync(s.abs("renamed.txt"))).toBe(false)
    expect(fs.readFileSync(s.abs("a.txt"), "utf8")).toBe("a")
    // remove through a link on the way removes the entry in the real directory, never the link.
    await root.remove("dirlink/back")
    expect(fs.existsSync(s.abs("d/back"))).toBe(false)
    expect(fs.lstatSync(s.abs("dirlink")).isSymbolicLink()).toBe(true)
    // chmod acts on the link itself, which is refused as today; through a link on the way it works.
    expect((await rejection(root.chmod("node_modules/pkg", 0o600))).refusal).toBe("symlink")
    await root.chmod("dirlink/e/g.txt", 0o600)
    expect(fs.statSync(s.abs("d/e/g.txt")).mode & 0o777).toBe(0o600)
    // batch reads follow as readFile does.
    const batched = await root.batch([
      { operation: "readFile", path: "chain/back2" },
      { operation: "stat", path: "node_modules/app" }
    ])
    expect(batched[0]).toMatchObject({ ok: true })
    expect(Buffer.from((batched[0] as { value: Uint8Array }).value).toString()).toBe("a")
    expect((batched[1] as { value: { type: string } }).value.type).toBe("SymbolicLink")
    // realPath and resolve answer for the link-free path; a final link is still theirs to report.
    expect(await root.realPath("dirlink/e/g.txt")).toBe("d/e/g.txt")
    expect(await root.realPath("node_modules/pkg/lib")).toBe(".pnpm/pkg@1.0.0/node_modules/pkg/lib")
    expect((await rejection(root.realPath("node_modules/pkg"))).refusal).toBe("symlink")
    expect(await root.resolve("chain/g.txt")).toEqual({ path: "d/e/g.txt", target: null })
    expect(await root.resolve("chain/back2")).toEqual({ path: "d/e/back2", target: "../../a.txt" })
    // A recursive listing names links and never descends them.
    const listed = await root.readDirectory("", { recursive: true })
    expect(listed).toContain("node_modules/pkg")
    expect(listed).not.toContain("node_modules/pkg/index.js")
    root.close()
  })

  it("writes through a link on the way, and refuses to write through a final link", async () => {
    const s = setup()
    const root = await open(s.root)
    await root.writeFileString("dirlink/new.txt", "n")
    expect(fs.readFileSync(s.abs("d/new.txt"), "utf8")).toBe("n")
    await root.makeDirectory("dirlink/made/deeper", { recursive: true })
    expect(fs.statSync(s.abs("d/made/deeper")).isDirectory()).toBe(true)
    for (const write of [
      () => root.writeFileString("link.txt", "x"),
      () => root.writeFileString("link.txt", "x", { atomic: false }),
      () => root.writeFileString("link.txt", "x", { flag: "a" })
    ]) {
      const e = await rejection(write())
      expect(e.refusal).toBe("symlink")
    }
    expect(fs.readFileSync(s.abs("a.txt"), "utf8")).toBe("a")
    expect(fs.lstatSync(s.abs("link.txt")).isSymbolicLink()).toBe(true)
    root.close()
  })

  it("refuses a link that leaves the root, loops or names an absolute path; node:fs follows each", async () => {
    const s = setup()
    const before = snapshot(s.outside)
    const root = await open(s.root)
    const escapes = ["up", "updir/secret.txt", "d/deep", "dirlink/deep", "abs", "absin", "magic"]
    for (const p of escapes) {
      for (const call of [() => root.readFile(p), () => root.stat(`${p}/x`), () => root.readDirectory(p)]) {
        const e = await rejection(call())
        expect(e.reason, `${p}: ${e.message}`).toBe("PermissionDenied")
        expect(["escape", "symlink"], `${p}: ${e.message}`).toContain(e.refusal)
      }
    }
    // The escapes by "..", and by an absolute text, are refused as escapes under both strategies.
    for (const p of ["up", "updir/secret.txt", "d/deep", "abs", "absin"]) {
      expect((await rejection(root.readFile(p))).refusal, p).toBe("escape")
    }
    for (const p of ["loop1", "c0"]) {
      const e = await rejection(root.readFile(p))
      expect(e.refusal, p).toBe("symlink")
      expect(e.code, p).toBe("ELOOP")
    }
    expect((await rejection(root.writeFileString("updir/new.txt", "x"))).reason).toBe("PermissionDenied")
    expect((await rejection(root.makeDirectory("updir/made"))).reason).toBe("PermissionDenied")
    expect((await rejection(root.remove("updir/secret.txt"))).reason).toBe("PermissionDenied")
    expect(snapshot(s.outside)).toEqual(before)
    // Positive controls: the same paths through node:fs leave the root, or loop.
    expect(fs.readFileSync(s.abs("up"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("updir/secret.txt"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("d/deep"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("abs"), "utf8")).toBe("TOP SECRET")
    // 40 links on one path are followed, 41 are not: the kernel's own limit, under both strategies.
    expect(() => fs.readFileSync(s.abs("c0"))).toThrow(/ELOOP/)
    expect(fs.readFileSync(s.abs("c1"), "utf8")).toBe("end of the chain")
    expect(await root.readFileString("c1")).toBe("end of the chain")
    expect(() => fs.readFileSync(s.abs("loop1"))).toThrow(/ELOOP/)
    root.close()
  })

  it("the default still refuses every link, and a bad option is a BadArgument", async () => {
    const s = setup()
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const p of ["link.txt", "node_modules/pkg/index.js", "dirlink/e/g.txt"]) {
      expect((await rejection(root.readFile(p))).refusal).toBe("symlink")
    }
    root.close()
    const refused = await rejection(PinnedRoot.open(s.root, { strategy, symlinks: "follow" as never }))
    expect(refused.reason).toBe("BadArgument")
    const explicit = await PinnedRoot.open(s.root, { strategy, symlinks: "refuse" })
    expect((await rejection(explicit.readFile("link.txt"))).refusal).toBe("symlink")
    explicit.close()
  })
})
