import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { strategies } from "./support/strategies.ts"
import { asRoot, callsAsNobody, NOBODY } from "./support/nobody.ts"
import { mkfifo, openDescriptorCount, scratch } from "./support/tree.ts"
import { rejection as failure } from "./support/rejection.ts"

const sorted = (names: ReadonlyArray<string>) => [...names].sort()

/** Node's own recursive listing, '/'-separated, as the reference (link-free trees only: Node follows links). */
const nodeListing = (dir: string, recursive: boolean) =>
  sorted(fs.readdirSync(dir, { recursive }).map((n) => String(n).split(path.sep).join("/")))

/** A chain of `levels` nested directories "d/d/…", made with one mkdir. */
const chain = (base: string, levels: number) => {
  fs.mkdirSync(path.join(base, ...Array.from({ length: levels }, () => "d")), { recursive: true })
}

describe.each(strategies)("readDirectory (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({
      "a/b/file.txt": "hello",
      "a/b/c/deep.txt": "deep",
      "a/sibling.txt": "s",
      "a/empty/": "",
      "top.txt": "top",
      ".hidden": "h"
    })
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  /** Adds the links and the outside tree used by the refusal tests. */
  const withLinks = (s: ReturnType<typeof scratch>) => {
    fs.mkdirSync(path.join(s.outside, "sub"))
    fs.writeFileSync(path.join(s.outside, "sub", "deeper-secret.txt"), "x")
    fs.symlinkSync(s.outside, s.abs("linkdir")) // absolute, to a directory outside
    fs.symlinkSync("../../outside", s.abs("a/relout")) // relative, to the same outside directory
    fs.symlinkSync("b", s.abs("a/inner")) // inside, still never descended
    fs.symlinkSync(s.secret, s.abs("a/b/linkfile"))
  }

  it("lists one directory, names only, like node:fs", async () => {
    const { s, root } = await setup()
    expect(sorted(await root.readDirectory(""))).toEqual(nodeListing(s.root, false))
    expect(sorted(await root.readDirectory(""))).toEqual([".hidden", "a", "top.txt"])
    expect(sorted(await root.readDirectory("a"))).toEqual(["b", "empty", "sibling.txt"])
    expect(sorted(await root.readDirectory("./a//b/"))).toEqual(["c", "file.txt"])
    expect(await root.readDirectory("a/empty")).toEqual([])
    expect(sorted(await root.readDirectory("a/b/.."))).toEqual(["b", "empty", "sibling.txt"])
  })

  it("lists recursively exactly what node:fs lists on a link-free tree", async () => {
    const { s, root } = await setup()
    s.make({ "a/b/c/d/e/f.txt": "f", "x/y/": "", "x/z.txt": "z" })
    expect(sorted(await root.readDirectory("", { recursive: true }))).toEqual(nodeListing(s.root, true))
    expect(sorted(await root.readDirectory("a", { recursive: true }))).toEqual(nodeListing(s.abs("a"), true))
    expect(sorted(await root.readDirectory("a/b", { recursive: true }))).toEqual([
      "c",
      "c/d",
      "c/d/e",
      "c/d/e/f.txt",
      "c/deep.txt",
      "file.txt"
    ])
  })

  it("lists a link entry but never descends into it, wherever it points", async () => {
    const { s, root } = await setup()
    withLinks(s)
    const all = await root.readDirectory("", { recursive: true })
    expect(all).toContain("linkdir")
    expect(all).toContain("a/relout")
    expect(all).toContain("a/inner")
    expect(all).toContain("a/b/linkfile")
    // Nothing from the outside directory, through either link, and nothing twice through the inner one.
    for (const n of all) {
      expect(n).not.toMatch(/secret|\/sub($|\/)/)
      expect(n.startsWith("linkdir/") || n.startsWith("a/relout/") || n.startsWith("a/inner/")).toBe(false)
    }
    expect(sorted(all)).toEqual(
      sorted([
        ".hidden",
        "a",
        "top.txt",
        "linkdir",
        "a/b",
        "a/empty",
        "a/sibling.txt",
        "a/relout",
        "a/inner",
        "a/b/file.txt",
        "a/b/c",
        "a/b/linkfile",
        "a/b/c/deep.txt"
      ])
    )
  })

  it("never lists outside entries while a subdirectory is swapped for a link to outside (bounded race)", async () => {
    const { s, root } = await setup()
    fs.mkdirSync(path.join(s.outside, "deep"))
    fs.writeFileSync(path.join(s.outside, "deep", "deeper-secret.txt"), "x")
    s.make({ "race/sub/inside.txt": "i", "race/sub/more/inner.txt": "i" })
    fs.symlinkSync(s.outside, s.abs("race/swap"))
    const swap = () => {
      fs.renameSync(s.abs("race/sub"), s.abs("race/held"))
      fs.renameSync(s.abs("race/swap"), s.abs("race/sub"))
      fs.renameSync(s.abs("race/sub"), s.abs("race/swap"))
      fs.renameSync(s.abs("race/held"), s.abs("race/sub"))
    }
    const deadline = Date.now() + 5000
    let listed = 0
    for (let i = 0; i < 300 && Date.now() < deadline; i++) {
      const pending = root.readDirectory("race", { recursive: true }).then(
        (names) => names,
        (e: unknown) => e
      )
      for (let k = 0; k < 5; k++) swap()
      const out = await pending
      if (Array.isArray(out)) {
        listed++
        for (const n of out) expect(n).not.toMatch(/secret|deep/)
      } else {
        // The listed directory itself never moves; a failure would be a bug, not the race.
        throw out
      }
    }
    expect(listed).toBeGreaterThan(0)
  })

  it("refuses a link as the listed directory, first, in the middle or last", async () => {
    const { s, root } = await setup()
    withLinks(s)
    for (const p of ["linkdir", "linkdir/", "linkdir/sub", "a/inner", "a/inner/c", "a/relout"]) {
      for (const recursive of [false, true]) {
        const e = await failure(root.readDirectory(p, { recursive }))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
        expect(e.path).toBe(p)
      }
    }
  })

  it("lists a FIFO entry without opening it", async () => {
    const { s, root } = await setup()
    mkfifo(s.abs("a/pipe"))
    mkfifo(s.abs("pipe-top"))
    // Opening either FIFO for reading would block until the test times out.
    expect(await root.readDirectory("a")).toContain("pipe")
    const all = await root.readDirectory("", { recursive: true })
    expect(all).toContain("a/pipe")
    expect(all).toContain("pipe-top")
    expect((await failure(root.readDirectory("a/pipe"))).reason).toBe("BadResource")
  })

  it("reads a directory of 1,000 entries over several getdents calls", async () => {
    const { s, root } = await setup()
    fs.mkdirSync(s.abs("many"))
    // 1,000 records of about 80 bytes each: well past one 32 KiB buffer.
    for (let i = 0; i < 1000; i++) fs.writeFileSync(s.abs(`many/${String(i).padStart(4, "0")}-${"n".repeat(56)}`), "")
    const names = await root.readDirectory("many")
    expect(names.length).toBe(1000)
    expect(new Set(names).size).toBe(1000)
    expect(sorted(names)).toEqual(nodeListing(s.abs("many"), false))
    const all = await root.readDirectory("", { recursive: true })
    expect(all.filter((n) => n.startsWith("many/")).length).toBe(1000)
  })

  it("bounds the recursion depth with an error that names the limit", async () => {
    const { s, root } = await setup()
    fs.mkdirSync(s.abs("ok"))
    chain(s.abs("ok"), 256)
    const listed = await root.readDirectory("ok", { recursive: true })
    expect(listed.length).toBe(256)
    expect(listed).toContain(Array.from({ length: 256 }, () => "d").join("/"))
    fs.mkdirSync(s.abs("deep"))
    chain(s.abs("deep"), 257)
    const before = openDescriptorCount()
    const e = await failure(root.readDirectory("deep", { recursive: true }))
    expect(e.reason).toBe("BadArgument")
    expect(e.refusal).toBe("toolarge")
    expect(e.description).toContain("256")
    expect(openDescriptorCount()).toBe(before)
    // Flat listing of the same tree is not limited.
    expect(await root.readDirectory("deep")).toEqual(["d"])
  })

  it("passes names that are not UTF-8 on the way node:fs does, never failing on them", async () => {
    const { s, root } = await setup()
    fs.mkdirSync(s.abs("bytes"))
    const raw = Buffer.concat([Buffer.from(s.abs("bytes/"), "utf8"), Buffer.from([0x66, 0xff, 0xfe, 0x6f])])
    fs.writeFileSync(raw, "")
    fs.mkdirSync(Buffer.concat([Buffer.from(s.abs("bytes/"), "utf8"), Buffer.from([0xc3, 0x28])]))
    expect(sorted(await root.readDirectory("bytes"))).toEqual(nodeListing(s.abs("bytes"), false))
    expect(sorted(await root.readDirectory("bytes", { recursive: true }))).toEqual(nodeListing(s.abs("bytes"), true))
    expect((await root.readDirectory("bytes")).some((n) => n.includes("\uFFFD"))).toBe(true)
  })

  it("maps a missing directory and a file", async () => {
    const { root } = await setup()
    expect((await failure(root.readDirectory("nope"))).reason).toBe("NotFound")
    expect((await failure(root.readDirectory("nope/x", { recursive: true }))).reason).toBe("NotFound")
    const file = await failure(root.readDirectory("top.txt"))
    expect(file.code).toBe("ENOTDIR")
    expect(file.reason).toBe("BadResource")
    expect((await failure(root.readDirectory("top.txt/x"))).reason).toBe("BadResource")
  })

  it("resolves .. physically and never above the root", async () => {
    const { s, root } = await setup()
    withLinks(s)
    expect((await failure(root.readDirectory("a/inner/.."))).refusal).toBe("symlink")
    expect((await failure(root.readDirectory("linkdir/../a"))).refusal).toBe("symlink")
    const name = path.basename(s.root)
    for (const p of ["..", `../${name}`, "a/../../outside"]) {
      const e = await failure(root.readDirectory(p, { recursive: true }))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("escape")
    }
  })

  it("refuses absolute paths and malformed input as BadArgument", async () => {
    const { s, root } = await setup()
    expect((await failure(root.readDirectory(s.root))).reason).toBe("BadArgument")
    expect((await failure(root.readDirectory(s.outside, { recursive: true }))).reason).toBe("BadArgument")
    const bad: Array<unknown> = [undefined, null, 42, {}, ["a"], "a\0b", "x".repeat(5000), `${"y".repeat(300)}/z`]
    for (const p of bad) {
      const e = await failure((async () => root.readDirectory(p as string, { recursive: true }))())
      expect(e.reason).toBe("BadArgument")
    }
  })

  it("leaks no descriptor, listing or failing", async () => {
    const { s, root } = await setup()
    withLinks(s)
    const before = openDescriptorCount()
    await root.readDirectory("", { recursive: true })
    await root.readDirectory("a")
    await root.readDirectory("linkdir").catch(() => undefined)
    await root.readDirectory("top.txt", { recursive: true }).catch(() => undefined)
    expect(openDescriptorCount()).toBe(before)
  })

  it("answers readDirectory members of a batch", async () => {
    const { root } = await setup()
    const out = await root.batch([
      { operation: "readDirectory", path: "a/b", recursive: true },
      { operation: "readDirectory", path: "missing" }
    ])
    expect(out[0]!.ok).toBe(true)
    expect(sorted((out[0] as { value: Array<string> }).value)).toEqual(["c", "c/deep.txt", "file.txt"])
    expect(out[1]!.ok).toBe(false)
  })

  it("fails a listing with PermissionDenied where the caller may not read, as Node does (unprivileged)", async () => {
    const { s } = await setup()
    s.make({ "a/locked/inside.txt": "x" })
    for (let d = s.root; d !== path.dirname(path.dirname(s.root)); d = path.dirname(d)) fs.chmodSync(d, 0o755)
    fs.chmodSync(s.abs("a/locked"), 0o000)
    // Through PinnedRoot in a child as nobody: a test as root proves nothing about permissions.
    const out = callsAsNobody(s.root, strategy, [
      { method: "readDirectory", args: ["a"] },
      { method: "readDirectory", args: ["a", { recursive: true }] },
      { method: "readDirectory", args: ["a/locked"] },
      { method: "resolve", args: ["a/locked/inside.txt"] },
      { method: "resolve", args: ["a/b/file.txt"] }
    ])
    expect(out[0]!.ok).toBe(true)
    if (asRoot) expect(out[0]!.uid).toBe(NOBODY)
    expect(sorted(out[0]!.ok ? (out[0]!.value as Array<string>) : [])).toEqual(["b", "empty", "locked", "sibling.txt"])
    for (const r of out.slice(1, 4)) {
      expect(r).toEqual({ ok: false, code: "EACCES", refusal: "", reason: "PermissionDenied", uid: r.uid })
    }
    expect(out[4]).toMatchObject({ ok: true, value: { path: "a/b/file.txt", target: null } })
  })
})
