import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../src/index.ts"
import { noTestHooks, testHooks, trips } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { snapshot } from "./support/attacker.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"
import { rejection as refusal } from "./support/rejection.ts"

const modeOf = (abs: string) => fs.lstatSync(abs).mode & 0o7777

let savedUmask = 0
beforeEach(() => {
  savedUmask = process.umask(0o027)
})
afterEach(() => {
  process.umask(savedUmask)
})

describe.each(strategies)("makeDirectory (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/": "", f: "file" })
    fs.symlinkSync(s.outside, s.abs("ln"))
    fs.symlinkSync(s.outside, s.abs("a/ln"))
    fs.symlinkSync("b", s.abs("a/inner")) // stays inside: still a link
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    // A mirror without links, for comparing with Node's fs.mkdir.
    const mirror = path.join(path.dirname(s.root), "mirror")
    fs.mkdirSync(path.join(mirror, "a/b"), { recursive: true })
    fs.writeFileSync(path.join(mirror, "f"), "file")
    return { s, root, mirror, outsideBefore: snapshot(s.outside) }
  }

  it("creates one directory as Node does: mode with the umask applied", async () => {
    const { s, root, mirror } = await setup()
    await root.makeDirectory("new")
    await root.makeDirectory("a/b/new", { mode: 0o751 })
    fs.mkdirSync(path.join(mirror, "new"))
    fs.mkdirSync(path.join(mirror, "a/b/new"), { mode: 0o751 })
    expect(modeOf(s.abs("new"))).toBe(modeOf(path.join(mirror, "new")))
    expect(modeOf(s.abs("new"))).toBe(0o750)
    expect(modeOf(s.abs("a/b/new"))).toBe(0o750)
    await root.makeDirectory("trailing/")
    expect(fs.statSync(s.abs("trailing")).isDirectory()).toBe(true)
  })

  it("creates a chain with recursive, the same mode (umask applied) on each, as Node does", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root, mirror } = await setup()
    const t0 = trips()
    await root.makeDirectory("a/x/y/z", { recursive: true, mode: 0o775 })
    expect(trips() - t0).toBe(1)
    fs.mkdirSync(path.join(mirror, "a/x/y/z"), { recursive: true, mode: 0o775 })
    for (const p of ["a/x", "a/x/y", "a/x/y/z"]) {
      expect(modeOf(s.abs(p))).toBe(modeOf(path.join(mirror, p)))
      expect(modeOf(s.abs(p))).toBe(0o750)
    }
    // Existing directories are fine, and left as they were.
    const before = fs.statSync(s.abs("a/b"))
    await root.makeDirectory("a/b", { recursive: true, mode: 0o700 })
    await root.makeDirectory("a/x/y/z", { recursive: true })
    await root.makeDirectory("", { recursive: true })
    expect(fs.statSync(s.abs("a/b")).mode).toBe(before.mode)
  })

  it("fails where Node fails, with the same code, and the reason Effect gives that code", async () => {
    const { root, mirror } = await setup()
    // [path, recursive, Node's code, the reason Effect's own Node file system gives that code]
    const cases: Array<[string, boolean, string, string]> = [
      ["a", false, "EEXIST", "AlreadyExists"],
      ["a/b", false, "EEXIST", "AlreadyExists"],
      ["f", false, "EEXIST", "AlreadyExists"],
      ["f/x", false, "ENOTDIR", "BadResource"],
      ["missing/x", false, "ENOENT", "NotFound"],
      ["f", true, "EEXIST", "AlreadyExists"],
      ["f/x/y", true, "ENOTDIR", "BadResource"],
      ["a/b/f2", false, "ok", "ok"]
    ]
    for (const [p, recursive, code, reason] of cases) {
      const ours = await root.makeDirectory(p, { recursive }).then(
        () => ["ok", "ok"],
        (e: PinnedFsError) => [e.code, e.reason]
      )
      let node = "ok"
      try {
        fs.mkdirSync(path.join(mirror, p), { recursive })
      } catch (e) {
        node = (e as NodeJS.ErrnoException).code ?? ""
      }
      expect([p, recursive, node]).toEqual([p, recursive, code])
      expect([p, recursive, ...ours]).toEqual([p, recursive, code, reason])
    }
  })

  it("answers AlreadyExists for the root without recursive, and nothing with it", async () => {
    const { root } = await setup()
    expect((await refusal(root.makeDirectory(""))).reason).toBe("AlreadyExists")
    await root.makeDirectory(".", { recursive: true })
  })

  it("refuses a symlink first, in the middle and last, and creates nothing outside", async () => {
    const { s, root, outsideBefore } = await setup()
    for (const recursive of [false, true]) {
      for (const p of ["ln/new", "a/ln/new", "a/inner/new", "ln/new/deeper"]) {
        if (!recursive && p === "ln/new/deeper") continue
        const e = await refusal(root.makeDirectory(p, { recursive }))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
      }
      // Last: without recursive the name is simply taken, as in Node; with it, an existing link
      // where a directory is wanted is refused, never taken as the directory.
      const last = await refusal(root.makeDirectory("ln", { recursive }))
      expect(last.reason).toBe(recursive ? "PermissionDenied" : "AlreadyExists")
      // A trailing slash after a link is a link met on the way, either way.
      const trailing = await refusal(root.makeDirectory("a/ln/", { recursive }))
      expect(trailing.reason).toBe("PermissionDenied")
      expect(trailing.refusal).toBe("symlink")
    }
    expect(snapshot(s.outside)).toEqual(outsideBefore)
  })

  it("resolves .. physically and never above the root", async () => {
    const { s, root, outsideBefore } = await setup()
    await root.makeDirectory("a/b/../c")
    expect(fs.statSync(s.abs("a/c")).isDirectory()).toBe(true)
    await root.makeDirectory("a/../d/e", { recursive: true })
    expect(fs.statSync(s.abs("d/e")).isDirectory()).toBe(true)
    expect((await refusal(root.makeDirectory("a/inner/../z"))).refusal).toBe("symlink")
    const name = path.basename(s.root)
    for (const recursive of [false, true]) {
      for (const p of ["../outside/x", `../${name}/x`, "a/../../outside/x"]) {
        const e = await refusal(root.makeDirectory(p, { recursive }))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("escape")
      }
    }
    expect(snapshot(s.outside)).toEqual(outsideBefore)
  })

  it("rejects absolute paths and malformed input with BadArgument", async () => {
    const { s, root } = await setup()
    const bad: Array<[unknown, unknown]> = [
      [s.abs("x"), undefined],
      [path.join(s.outside, "x"), { recursive: true }],
      [undefined, undefined],
      [null, undefined],
      [42, undefined],
      ["a\0b", undefined],
      ["x".repeat(300), undefined],
      ["m", { mode: -1 }],
      ["m", { mode: 0o10000 }],
      ["m", { mode: 1.5 }],
      ["m", { mode: "0755" }]
    ]
    for (const [p, options] of bad) {
      const e = await refusal((async () => root.makeDirectory(p as string, options as never))())
      expect(e.reason).toBe("BadArgument")
    }
    expect(fs.existsSync(s.abs("m"))).toBe(false)
    expect(fs.existsSync(path.join(s.outside, "x"))).toBe(false)
  })
})
