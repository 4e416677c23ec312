/**
 * `rename(from, to, { noReplace: true })`: the destination is refused by the rename itself
 * (RENAME_NOREPLACE), whatever stands there (a file, an empty directory, a link, a dangling link),
 * and nothing on either side changes; a missing destination is renamed as usual. Under each
 * strategy; the same refusals of links on the way, `..` and absolute paths as a plain rename.
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { pinnedScratch } from "./support/pinned.ts"
import { strategies } from "./support/strategies.ts"
import { rejection } from "./support/rejection.ts"

describe.each(strategies)("rename with noReplace (%s)", (strategy) => {
  const setup = () =>
    pinnedScratch(strategy, (s) => {
      s.make({ "src.txt": "source", "taken.txt": "taken", "empty/": "", "full/x": "x", "dir/inner.txt": "inner" })
      fs.symlinkSync(s.secret, s.abs("link"))
      fs.symlinkSync("nowhere", s.abs("dangling"))
    })

  it("renames onto a missing name, in place and across directories", async () => {
    const { s, root } = await setup()
    await root.rename("src.txt", "fresh.txt", { noReplace: true })
    expect(fs.readFileSync(s.abs("fresh.txt"), "utf8")).toBe("source")
    expect(fs.existsSync(s.abs("src.txt"))).toBe(false)
    await root.rename("fresh.txt", "dir/moved.txt", { noReplace: true })
    expect(fs.readFileSync(s.abs("dir/moved.txt"), "utf8")).toBe("source")
    await root.rename("dir", "empty/dir", { noReplace: true })
    expect(fs.readFileSync(s.abs("empty/dir/inner.txt"), "utf8")).toBe("inner")
    root.close()
  })

  it("refuses every existing destination with EEXIST, leaving both names as they were", async () => {
    const { s, root } = await setup()
    for (const [from, to] of [
      ["src.txt", "taken.txt"],
      ["src.txt", "empty"],
      ["src.txt", "link"],
      ["src.txt", "dangling"],
      ["empty", "full"],
      ["src.txt", "src.txt"]
    ] as const) {
      const e = await rejection(root.rename(from, to, { noReplace: true }))
      expect({ from, to, code: e.code, reason: e.reason }).toEqual({ from, to, code: "EEXIST", reason: "AlreadyExists" })
    }
    expect(fs.readFileSync(s.abs("src.txt"), "utf8")).toBe("source")
    expect(fs.readFileSync(s.abs("taken.txt"), "utf8")).toBe("taken")
    expect(fs.readdirSync(s.abs("empty"))).toEqual([])
    expect(fs.readlinkSync(s.abs("link"))).toBe(s.secret)
    expect(fs.readlinkSync(s.abs("dangling"))).toBe("nowhere")
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    root.close()
  })

  it("refuses a link on the way and an escape as a plain rename does", async () => {
    const { s, root } = await setup()
    fs.symlinkSync(s.outside, s.abs("out"))
    for (const [from, to] of [
      ["src.txt", "out/stolen.txt"],
      ["out/secret.txt", "here.txt"]
    ] as const) {
      const e = await rejection(root.rename(from, to, { noReplace: true }))
      expect(e.reason).toBe("PermissionDenied")
    }
    expect((await rejection(root.rename("src.txt", "../x", { noReplace: true }))).reason).toBe("PermissionDenied")
    expect((await rejection(root.rename("src.txt", s.abs("x"), { noReplace: true }))).reason).toBe("BadArgument")
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(s.abs("src.txt"), "utf8")).toBe("source")
    root.close()
  })
})
