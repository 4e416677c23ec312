import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { expectReason, harness, spellings } from "./support.ts"
import { giveTo } from "../support/ids.ts"

const b64 = (s: string) => Buffer.from(s).toString("base64")
const tree = { "dir/file.txt": "old", "dir/sub/deep.txt": "deep", "keep.txt": "keep" }

describe.each(spellings)("fallback writes (%s root)", (spelling) => {
  const setup = () => harness(spelling, tree)

  it("writeFile: base64 data, create and replace, wx refuses an existing file, a appends, mode applies", async () => {
    const h = await setup()
    await h.run({ operation: "writeFile", path: h.at("dir/new.bin"), data: b64("\u0000\u00ffbin") })
    expect(fs.readFileSync(h.s.abs("dir/new.bin"))).toEqual(Buffer.from("\u0000\u00ffbin"))
    await h.run({ operation: "writeFile", path: h.at("dir/file.txt"), data: b64("new") })
    expect(fs.readFileSync(h.s.abs("dir/file.txt"), "utf8")).toBe("new")
    await h.run({ operation: "writeFile", path: h.at("dir/file.txt"), data: b64("+"), options: { flag: "a" } })
    expect(fs.readFileSync(h.s.abs("dir/file.txt"), "utf8")).toBe("new+")
    expectReason(
      await h.fail({ operation: "writeFile", path: h.at("dir/file.txt"), data: b64("x"), options: { flag: "wx" } }),
      "AlreadyExists"
    )
    await h.run({ operation: "writeFile", path: h.at("moded"), data: "", options: { flag: "wx", mode: 0o600 } })
    expect(fs.statSync(h.s.abs("moded")).mode & 0o777).toBe(0o600)
  })

  it("writeFileString writes UTF-8; a missing parent is NotFound; a directory is BadResource", async () => {
    const h = await setup()
    await h.run({ operation: "writeFileString", path: h.at("s.txt"), data: "héllo" })
    expect(fs.readFileSync(h.s.abs("s.txt"), "utf8")).toBe("héllo")
    expectReason(await h.fail({ operation: "writeFileString", path: h.at("nope/s.txt"), data: "x" }), "NotFound")
    expectReason(await h.fail({ operation: "writeFileString", path: h.at("dir"), data: "x" }), "BadResource")
    expectReason(await h.fail({ operation: "writeFileString", path: `${h.at("keep.txt")}/`, data: "x" }), "BadResource")
    expectReason(await h.fail({ operation: "writeFileString", path: `${h.at("newname")}/`, data: "x" }), "NotFound")
    expectReason(await h.fail({ operation: "writeFileString", path: h.base, data: "x" }), "BadResource")
    expect(fs.existsSync(h.s.abs("newname"))).toBe(false)
  })

  it("writeFile refuses malformed base64 and a payload over the content limit", async () => {
    const h = await harness(spelling, tree, { contentLimit: 4 })
    expect(h.extension.contentLimit).toBe(4)
    for (const data of ["not base64!", "abc", "YWJj\n", "=YWJ", "%%%%"]) {
      expectReason(await h.fail({ operation: "writeFile", path: h.at("x"), data }), "BadArgument")
    }
    expectReason(await h.fail({ operation: "writeFile", path: h.at("x"), data: b64("12345") }), "BadArgument", /limit/)
    expectReason(await h.fail({ operation: "writeFileString", path: h.at("x"), data: "12345" }), "BadArgument", /limit/)
    expect(fs.existsSync(h.s.abs("x"))).toBe(false)
    await h.run({ operation: "writeFile", path: h.at("x"), data: b64("1234") })
  })

  it("makeDirectory: one level, recursive, with mode; existing is AlreadyExists unless recursive", async () => {
    const h = await setup()
    await h.run({ operation: "makeDirectory", path: h.at("one") })
    expect(fs.statSync(h.s.abs("one")).isDirectory()).toBe(true)
    await h.run({ operation: "makeDirectory", path: h.at("a/b/c"), options: { recursive: true, mode: 0o700 } })
    expect(fs.statSync(h.s.abs("a/b/c")).mode & 0o777).toBe(0o700)
    await h.run({ operation: "makeDirectory", path: h.at("dir"), options: { recursive: true } })
    expectReason(await h.fail({ operation: "makeDirectory", path: h.at("dir") }), "AlreadyExists")
    expectReason(await h.fail({ operation: "makeDirectory", path: h.at("x/y") }), "NotFound")
    expectReason(await h.fail({ operation: "makeDirectory", path: h.at("keep.txt/y"), options: { recursive: true } }), "BadResource")
  })

  it("remove: a file, a tree, force on a missing name; a directory without recursive is refused", async () => {
    const h = await setup()
    await h.run({ operation: "remove", path: h.at("keep.txt") })
    expect(fs.existsSync(h.s.abs("keep.txt"))).toBe(false)
    expectReason(await h.fail({ operation: "remove", path: h.at("dir") }), "BadResource")
    await h.run({ operation: "remove", path: h.at("dir"), options: { recursive: true } })
    expect(fs.existsSync(h.s.abs("dir"))).toBe(false)
    expectReason(await h.fail({ operation: "remove", path: h.at("dir") }), "NotFound")
    await h.run({ operation: "remove", path: h.at("dir"), options: { force: true } })
    expectReason(await h.fail({ operation: "remove", path: h.at(""), options: { recursive: true } }), "BadArgument")
  })

  it("remove acts on a link itself and never on what it names, even recursively", async () => {
    const h = await setup()
    fs.symlinkSync(h.s.outside, h.s.abs("dir/out"))
    fs.symlinkSync(h.s.secret, h.s.abs("secret-link"))
    await h.run({ operation: "remove", path: h.at("secret-link") })
    await h.run({ operation: "remove", path: h.at("dir"), options: { recursive: true } })
    expect(fs.readFileSync(h.s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.existsSync(h.s.abs("secret-link"))).toBe(false)
  })

  it("rename: a file, a directory, a link as itself; a missing source is NotFound", async () => {
    const h = await setup()
    fs.symlinkSync(h.s.secret, h.s.abs("ln"))
    await h.run({ operation: "rename", from: h.at("keep.txt"), to: h.at("dir/kept.txt") })
    expect(fs.readFileSync(h.s.abs("dir/kept.txt"), "utf8")).toBe("keep")
    await h.run({ operation: "rename", from: h.at("dir/sub"), to: h.at("moved") })
    expect(fs.readFileSync(h.s.abs("moved/deep.txt"), "utf8")).toBe("deep")
    await h.run({ operation: "rename", from: h.at("ln"), to: h.at("ln2") })
    expect(fs.readlinkSync(h.s.abs("ln2"))).toBe(h.s.secret)
    expectReason(await h.fail({ operation: "rename", from: h.at("nope"), to: h.at("x") }), "NotFound")
    expectReason(await h.fail({ operation: "rename", from: h.at("ln2"), to: h.s.abs("../outside/x") }), "PermissionDenied")
  })

  it("chmod and chown change the file itself", async () => {
    const h = await setup()
    await h.run({ operation: "chmod", path: h.at("keep.txt"), options: { mode: 0o640 } })
    expect(fs.lstatSync(h.s.abs("keep.txt")).mode & 0o7777).toBe(0o640)
    // Given to another user (nobody) where that is allowed (root), and lstat must show it.
    const to = giveTo
    await h.run({ operation: "chown", path: h.at("keep.txt"), options: to })
    expect([fs.lstatSync(h.s.abs("keep.txt")).uid, fs.lstatSync(h.s.abs("keep.txt")).gid]).toEqual([to.uid, to.gid])
    expectReason(await h.fail({ operation: "chmod", path: h.at("nope"), options: { mode: 0o600 } }), "NotFound")
    expectReason(await h.fail({ operation: "chmod", path: h.at("keep.txt"), options: { mode: 0o10000 } }), "BadArgument")
    expectReason(await h.fail({ operation: "chmod", path: h.at("keep.txt") }), "BadArgument")
    expectReason(await h.fail({ operation: "chown", path: h.at("keep.txt"), options: { uid: "0", gid: to.gid } }), "BadArgument")
  })
})
