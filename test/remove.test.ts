import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../src/index.ts"
import { noTestHooks, testHooks, trips } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { raceRounds, snapshot, tally } from "./support/attacker.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo, scratch } from "./support/tree.ts"
import { rejection as refusal } from "./support/rejection.ts"

describe.each(strategies)("remove (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/file.txt": "hello", "a/f": "f", "top.txt": "top", "empty/": "" })
    fs.mkdirSync(path.join(s.outside, "dir/sub"), { recursive: true })
    fs.writeFileSync(path.join(s.outside, "dir/sub/keep.txt"), "keep")
    fs.symlinkSync(s.outside, s.abs("ln"))
    fs.symlinkSync(path.join(s.outside, "dir"), s.abs("a/ln"))
    fs.symlinkSync("b", s.abs("a/inner"))
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root, outsideBefore: snapshot(s.outside) }
  }

  it("removes a file at the root and at depth, in one trip each", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root } = await setup()
    const t0 = trips()
    await root.remove("top.txt")
    expect(trips() - t0).toBe(1)
    await root.remove("a/b/file.txt")
    expect(fs.existsSync(s.abs("top.txt"))).toBe(false)
    expect(fs.existsSync(s.abs("a/b/file.txt"))).toBe(false)
  })

  it("refuses a directory without recursive, even empty, even with force (as Node)", async () => {
    const { s, root } = await setup()
    for (const p of ["empty", "a", "a/b/"]) {
      for (const force of [false, true]) {
        const e = await refusal(root.remove(p, { force }))
        expect(e.code).toBe("EISDIR")
        expect(e.reason).toBe("BadResource")
      }
    }
    expect(fs.existsSync(s.abs("empty"))).toBe(true)
  })

  it("removes an empty directory and a whole tree with recursive", async () => {
    const { s, root, outsideBefore } = await setup()
    await root.remove("empty", { recursive: true })
    expect(fs.existsSync(s.abs("empty"))).toBe(false)
    // A tree holding every kind of entry: links to outside (dir, file, dangling), a FIFO, a hard
    // link to a file outside, many files (several listing buffers), nesting.
    s.make({ "t/x/y/z/deep.txt": "d", "t/x/file": "f", "t/e/": "" })
    for (let i = 0; i < 300; i++) fs.writeFileSync(s.abs(`t/many-${"n".repeat(100)}-${i}`), "")
    fs.symlinkSync(path.join(s.outside, "dir"), s.abs("t/x/to-dir"))
    fs.symlinkSync(s.secret, s.abs("t/to-secret"))
    fs.symlinkSync("nowhere", s.abs("t/x/y/dangling"))
    mkfifo(s.abs("t/x/pipe"))
    fs.linkSync(s.secret, s.abs("t/x/hard"))
    await root.remove("t", { recursive: true })
    expect(fs.existsSync(s.abs("t"))).toBe(false)
    expect(fs.statSync(s.secret).nlink).toBe(1)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(snapshot(s.outside)).toEqual(outsideBefore)
  })

  it("removes a link as the entry, never what it names", async () => {
    const { s, root, outsideBefore } = await setup()
    await root.remove("ln")
    await root.remove("a/ln", { recursive: true })
    expect(fs.existsSync(s.abs("ln"))).toBe(false)
    expect(fs.existsSync(s.abs("a/ln"))).toBe(false)
    expect(snapshot(s.outside)).toEqual(outsideBefore)
  })

  it("removes our name of a hard-linked file and leaves the other name", async () => {
    const { s, root } = await setup()
    fs.linkSync(s.secret, s.abs("hard"))
    await root.remove("hard")
    expect(fs.existsSync(s.abs("hard"))).toBe(false)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })

  it("answers a missing path NotFound, or nothing with force; a file on the way is not missing", async () => {
    const { root } = await setup()
    expect((await refusal(root.remove("nope"))).reason).toBe("NotFound")
    expect((await refusal(root.remove("no/such/parent"))).reason).toBe("NotFound")
    await root.remove("nope", { force: true })
    await root.remove("no/such/parent", { force: true, recursive: true })
    for (const force of [false, true]) {
      const e = await refusal(root.remove("a/f/x", { force }))
      expect(e.code).toBe("ENOTDIR")
      expect(e.reason).toBe("BadResource")
    }
  })

  it("refuses a symlink first or in the middle, and a trailing slash after one, even with force", async () => {
    const { s, root, outsideBefore } = await setup()
    for (const force of [false, true]) {
      for (const p of ["ln/secret.txt", "a/ln/sub", "a/ln/sub/keep.txt", "a/inner/file.txt", "ln/", "a/ln/"]) {
        const e = await refusal(root.remove(p, { force, recursive: true }))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
      }
    }
    expect(snapshot(s.outside)).toEqual(outsideBefore)
    expect(fs.existsSync(s.abs("a/b/file.txt"))).toBe(true)
  })

  it("resolves .. physically and never above the root", async () => {
    const { s, root, outsideBefore } = await setup()
    await root.remove("a/b/../f")
    expect(fs.existsSync(s.abs("a/f"))).toBe(false)
    expect((await refusal(root.remove("a/inner/../b/file.txt"))).refusal).toBe("symlink")
    const name = path.basename(s.root)
    for (const p of ["../outside/secret.txt", `../${name}/top.txt`, "a/../../outside", "../outside"]) {
      const e = await refusal(root.remove(p, { recursive: true, force: true }))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("escape")
    }
    expect(snapshot(s.outside)).toEqual(outsideBefore)
    expect(fs.existsSync(s.abs("top.txt"))).toBe(true)
  })

  it("never removes the root itself", async () => {
    const { s, root } = await setup()
    for (const p of ["", ".", "./", "a/..", "a/b/../.."]) {
      const e = await refusal(root.remove(p, { recursive: true, force: true }))
      expect(e.reason).toBe("BadArgument")
    }
    expect(fs.existsSync(s.abs("a/b/file.txt"))).toBe(true)
  })

  it("rejects absolute paths and malformed input with BadArgument", async () => {
    const { s, root, outsideBefore } = await setup()
    for (const p of [s.abs("top.txt"), s.secret, s.outside, undefined, null, 1, ["a"], "a\0b", "x".repeat(5000)]) {
      const e = await refusal((async () => root.remove(p as string, { recursive: true, force: true }))())
      expect(e.reason).toBe("BadArgument")
    }
    expect(snapshot(s.outside)).toEqual(outsideBefore)
    expect(fs.existsSync(s.abs("top.txt"))).toBe(true)
  })

  it("bounds the depth it descends, failing visibly", async () => {
    const { s, root } = await setup()
    const deep = Array.from({ length: 300 }, () => "d").join("/")
    fs.mkdirSync(s.abs(`deep/${deep}`), { recursive: true })
    const e = await refusal(root.remove("deep", { recursive: true }))
    expect(e.code).toBe("ENAMETOOLONG")
    expect(e.description).toMatch(/deeper than/)
    // The one depth-limit refusal (docs/platform.md, "Error mapping"), as the recursive listing's.
    expect(e.refusal).toBe("toolarge")
    expect(e.reason).toBe("BadArgument")
    expect(e.description).toContain("256")
    expect(fs.existsSync(s.abs("deep"))).toBe(true)
  })
})

describe.each(strategies)("recursive remove under an attacker swapping a subdirectory (%s)", (strategy) => {
  it("removes the tree or refuses the link, removes a met link as the entry, never anything outside", async () => {
    const s = scratch()
    const target = path.join(s.outside, "target")
    // Mirrors the tree's names, so a remove that followed the link would empty it.
    for (const d of ["d0", "d0/x"]) fs.mkdirSync(path.join(target, d), { recursive: true })
    for (const f of ["d0/x/f0", "d0/x/f1", "g0", "g1"]) fs.writeFileSync(path.join(target, f), "outside")
    const before = snapshot(s.outside)
    const root = await PinnedRoot.open(s.root, { strategy })
    // The failures the attack explains: the link met on the way, the lookup left the root, a name
    // that was a link when opened and a directory again when asked why (ENOTDIR), or one listed as
    // the link and a directory again when unlinked as an entry (EISDIR).
    // And the remover's own bound: a directory that was not empty at its rmdir on every one of its
    // passes, because the exchanges kept giving the name another directory ("kept changing").
    const allowed = ["symlink", "escape", "ENOTDIR", "EISDIR", "kept changing"]
    const race = await raceRounds({
      // t/d0 flips between the real directory and a link to the outside mirror.
      pairs: [[s.abs("t/d0"), s.abs("lnk")]],
      maxRounds: 300,
      maxMs: 3000,
      reset: () => {
        // A round that removed the link at t/d0 left the real d0 under the name lnk: start over.
        fs.rmSync(s.abs("t"), { recursive: true, force: true })
        fs.rmSync(s.abs("lnk"), { recursive: true, force: true })
        // Many siblings around d0 widen the window between listing t (d0 a directory) and opening d0.
        const siblings = Array.from({ length: 64 }, (_, i) => `t/s${i}`)
        s.make(Object.fromEntries(["t/d0/d0/x/f0", "t/d0/d0/x/f1", "t/d0/g0", "t/d0/g1", "t/d1/g0", ...siblings].map((f) => [f, "inside"])))
        fs.symlinkSync(target, s.abs("lnk"))
      },
      round: () =>
        root.remove("t", { recursive: true }).then(
          () => "ok",
          (e: unknown) =>
            e instanceof PinnedFsError
              ? e.code === "ENOTEMPTY" && /kept changing while it was being emptied/.test(e.description)
                ? "kept changing"
                : e.refusal || e.code
              : `untyped ${String(e)}`
        ),
      inspect: (outcome) => {
        const wrong: Array<string> = []
        if (outcome === "ok" && fs.existsSync(s.abs("t"))) wrong.push("answered ok, t is still there")
        if (outcome !== "ok" && !allowed.includes(outcome)) wrong.push(`failed ${outcome}`)
        // The attacker could not put the pair back: the remove unlinked t/d0 while it was the link,
        // and the real d0 sits under the name lnk. The link was met, and removed as the entry.
        const lnk = fs.lstatSync(s.abs("lnk"))
        const metLink = lnk.isDirectory()
        if (!metLink && !lnk.isSymbolicLink()) wrong.push("lnk is neither the link nor the real d0")
        return { outcome, wrong, met: metLink || outcome !== "ok" }
      }
    })
    expect(race.answers.flatMap((a) => a.wrong)).toEqual([])
    // The attack was live: exchanges the kernel did, and rounds that met the link.
    expect(race.swaps).toBeGreaterThan(0)
    const seen = JSON.stringify(tally(race.answers.map((a) => `${a.outcome}${a.met ? " (met the link)" : ""}`)))
    expect(race.answers.filter((a) => a.met).length, seen).toBeGreaterThan(0)
    // And the remove worked between the exchanges.
    expect(race.answers.filter((a) => a.outcome === "ok").length, seen).toBeGreaterThan(0)
    expect(snapshot(s.outside)).toEqual(before)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })
})
