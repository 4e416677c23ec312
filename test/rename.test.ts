import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import type { PinnedRoot } from "../src/index.ts"
import { native } from "../src/internal/native.ts"
import { pinnedScratch } from "./support/pinned.ts"
import { strategies } from "./support/strategies.ts"
import type { Scratch } from "./support/tree.ts"
import { expectEachBadArgument, rejection as refusal } from "./support/rejection.ts"

/** Every entry under `dir` with what it is: file content, link text, or "dir". */
const tree = (dir: string): Record<string, string> => {
  const out: Record<string, string> = {}
  const visit = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name
      const st = fs.lstatSync(path.join(dir, r))
      if (st.isSymbolicLink()) out[r] = `-> ${fs.readlinkSync(path.join(dir, r))}`
      else if (st.isDirectory()) {
        out[r] = "dir"
        visit(r)
      } else out[r] = fs.readFileSync(path.join(dir, r), "utf8")
    }
  }
  visit("")
  return out
}

describe.each(strategies)("rename (%s)", (strategy) => {
  const setup = () =>
    pinnedScratch(strategy, (s) => {
      s.make({ "a/b/file.txt": "hello", "top.txt": "top", "dir/": "", "full/x": "x" })
      fs.symlinkSync(s.outside, s.abs("linkdir"))
      fs.symlinkSync(s.secret, s.abs("a/linkfile"))
      fs.symlinkSync("b", s.abs("a/inner"))
    })

  /** Each rename refused as a PermissionDenied of `kind`, and nothing inside or outside changed. */
  const refusesEach = async (s: Scratch, root: PinnedRoot, cases: ReadonlyArray<[string, string]>, kind: string) => {
    const before = { root: tree(s.root), outside: tree(s.outside) }
    for (const [from, to] of cases) {
      const e = await refusal(root.rename(from, to))
      expect({ from, to, reason: e.reason, refusal: e.refusal }).toEqual({ from, to, reason: "PermissionDenied", refusal: kind })
    }
    expect(tree(s.root)).toEqual(before.root)
    expect(tree(s.outside)).toEqual(before.outside)
  }

  it("renames a file in place and across directories", async () => {
    const { s, root } = await setup()
    await root.rename("top.txt", "top2.txt")
    expect(fs.readFileSync(s.abs("top2.txt"), "utf8")).toBe("top")
    expect(fs.existsSync(s.abs("top.txt"))).toBe(false)
    await root.rename("a/b/file.txt", "dir/moved.txt")
    expect(fs.readFileSync(s.abs("dir/moved.txt"), "utf8")).toBe("hello")
    await root.rename("dir/moved.txt", "a/b/../b/back.txt")
    expect(fs.readFileSync(s.abs("a/b/back.txt"), "utf8")).toBe("hello")
  })

  it("renames a directory, with or without a trailing slash", async () => {
    const { s, root } = await setup()
    await root.rename("a/b", "dir/b2")
    expect(fs.readFileSync(s.abs("dir/b2/file.txt"), "utf8")).toBe("hello")
    await root.rename("dir/b2/", "b3/")
    expect(fs.readFileSync(s.abs("b3/file.txt"), "utf8")).toBe("hello")
  })

  it("moves a link as an entry, without touching what it names", async () => {
    const { s, root } = await setup()
    await root.rename("a/linkfile", "dir/link2")
    expect(fs.readlinkSync(s.abs("dir/link2"))).toBe(s.secret)
    await root.rename("linkdir", "linkdir2")
    expect(fs.readlinkSync(s.abs("linkdir2"))).toBe(s.outside)
    // A link as the destination is replaced, never written through.
    await root.rename("top.txt", "linkdir2")
    expect(fs.readFileSync(s.abs("linkdir2"), "utf8")).toBe("top")
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })

  it("overwrites an existing file and an empty directory as Node does", async () => {
    const { s, root } = await setup()
    fs.writeFileSync(s.abs("dir/old.txt"), "old")
    await root.rename("top.txt", "dir/old.txt")
    expect(fs.readFileSync(s.abs("dir/old.txt"), "utf8")).toBe("top")
    fs.mkdirSync(s.abs("empty"))
    await root.rename("a/b", "empty")
    expect(fs.readFileSync(s.abs("empty/file.txt"), "utf8")).toBe("hello")
  })

  it("renames a hard-linked file (the name is ours)", async () => {
    const { s, root } = await setup()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    await root.rename("hard.txt", "dir/hard2.txt")
    expect(fs.statSync(s.abs("dir/hard2.txt")).ino).toBe(fs.statSync(s.secret).ino)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })

  it("answers Node's errors: non-empty directory, own subtree, file onto directory, missing", async () => {
    const { s, root } = await setup()
    const before = tree(s.root)
    const cases: Array<[string, string, string]> = [
      ["dir", "full", "ENOTEMPTY"],
      ["a", "a/b/inside", "EINVAL"],
      ["top.txt", "dir", "EISDIR"],
      ["dir", "top.txt", "ENOTDIR"],
      ["missing", "x", "ENOENT"],
      ["top.txt", "missing/x", "ENOENT"],
      ["top.txt/", "x", "ENOTDIR"],
      ["a/b", "top.txt/", "ENOTDIR"],
      ["top.txt", "newdir/", "ENOTDIR"]
    ]
    for (const [from, to, code] of cases) {
      const e = await refusal(root.rename(from, to))
      expect({ from, to, code: e.code }).toEqual({ from, to, code })
      expect(e.path).toBe(from)
    }
    expect(tree(s.root)).toEqual(before)
  })

  it("refuses links on the way on either side, leaving both sides untouched", async () => {
    const { s, root } = await setup()
    const cases: Array<[string, string]> = [
      ["linkdir/secret.txt", "stolen.txt"],
      ["a/inner/file.txt", "x.txt"],
      ["top.txt", "linkdir/planted.txt"],
      ["top.txt", "a/inner/planted.txt"],
      ["linkdir/", "x"],
      ["a/b", "linkdir/"],
      ["a/inner/../b/file.txt", "y.txt"],
      ["top.txt", "a/inner/../z.txt"]
    ]
    await refusesEach(s, root, cases, "symlink")
  })

  it("never climbs above the root with ..", async () => {
    const { s, root } = await setup()
    const name = path.basename(s.root)
    const cases: Array<[string, string]> = [
      ["../outside/secret.txt", "stolen.txt"],
      ["top.txt", "../outside/planted.txt"],
      ["top.txt", `../${name}/top3.txt`],
      ["a/../../outside/secret.txt", "stolen.txt"]
    ]
    await refusesEach(s, root, cases, "escape")
  })

  it("refuses the root itself, absolute paths and malformed input as BadArgument", async () => {
    const { s, root } = await setup()
    const before = tree(s.root)
    const calls: Array<() => Promise<unknown>> = [
      () => root.rename("", "x"),
      () => root.rename(".", "x"),
      () => root.rename("a/..", "x"),
      () => root.rename("top.txt", ""),
      () => root.rename("top.txt", "a/b/../.."),
      () => root.rename("top.txt", "./"),
      () => root.rename(s.abs("top.txt"), "x"),
      () => root.rename("top.txt", path.join(s.outside, "x")),
      () => root.rename("top.txt", "a\0b"),
      () => root.rename(42 as unknown as string, "x"),
      () => root.rename("top.txt", null as unknown as string),
      () => root.rename("top.txt", `${"y".repeat(300)}`),
      () => root.run({ op: native.ops.rename, path: "top.txt" }, "top.txt")
    ]
    await expectEachBadArgument(calls)
    expect(tree(s.root)).toEqual(before)
  })
})
