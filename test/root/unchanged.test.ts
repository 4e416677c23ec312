/**
 * `PinnedRoot.replaceIfUnchanged` and `removeIfUnchanged`: compare-and-swap on one file. The happy
 * paths (by content, by identity, the mode kept or given), the `changed` refusal (content,
 * identity, a file renamed over the name), and every refusal of the contract (a final link, a link
 * on the way, a hard link, `..` above the root, an absolute path, a directory moved out, a
 * directory, a FIFO) and bad input, under both resolve strategies. Nothing outside the root changes,
 * and no temporary or private name is left in the directory.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, openDescriptorCount, scratch } from "../support/tree.ts"

const setup = async (strategy: "openat2" | "walk") => {
  const s = scratch()
  s.make({ "a/f.txt": "old", "top.txt": "top", "d/": "" })
  const root = await PinnedRoot.open(s.root, { strategy })
  expect(root.strategy).toBe(strategy)
  const idOf = (rel: string) => {
    const st = fs.lstatSync(s.abs(rel), { bigint: true })
    return `${st.dev}:${st.ino}`
  }
  return { s, root, idOf }
}

type Act = "replace" | "remove"
const acts: ReadonlyArray<Act> = ["replace", "remove"]
const act = (root: PinnedRoot, how: Act, p: string, options: { expect?: string; identity?: string }) =>
  how === "replace" ? root.replaceIfUnchanged(p, "new", options) : root.removeIfUnchanged(p, options)

describe.each(strategies)("compare-and-swap on PinnedRoot (%s)", (strategy) => {
  it("replaces a file that holds what was expected, keeping or setting its mode", async () => {
    const { s, root, idOf } = await setup(strategy)
    fs.chmodSync(s.abs("a/f.txt"), 0o751)
    await root.replaceIfUnchanged("a/f.txt", "new", { expect: "old" })
    expect(fs.readFileSync(s.abs("a/f.txt"), "utf8")).toBe("new")
    expect(fs.statSync(s.abs("a/f.txt")).mode & 0o7777).toBe(0o751)
    await root.replaceIfUnchanged("a/f.txt", new Uint8Array([0, 1, 2]), {
      expect: Buffer.from("new"),
      identity: idOf("a/f.txt"),
      mode: 0o600
    })
    expect([...fs.readFileSync(s.abs("a/f.txt"))]).toEqual([0, 1, 2])
    expect(fs.statSync(s.abs("a/f.txt")).mode & 0o7777).toBe(0o600)
    await root.replaceIfUnchanged("a/f.txt", "", { identity: idOf("a/f.txt"), durable: true })
    expect(fs.readFileSync(s.abs("a/f.txt"), "utf8")).toBe("")
    expect(fs.readdirSync(s.abs("a"))).toEqual(["f.txt"])
    root.close()
  })

  it("removes a file that holds what was expected, by content or by identity", async () => {
    const { s, root, idOf } = await setup(strategy)
    await root.removeIfUnchanged("a/f.txt", { expect: "old" })
    await root.removeIfUnchanged("top.txt", { identity: idOf("top.txt") })
    expect(fs.readdirSync(s.abs("a"))).toEqual([])
    expect(fs.existsSync(s.abs("top.txt"))).toBe(false)
    root.close()
  })

  for (const how of acts) {
    it(`${how}: a file not as expected is left as it is (changed, Busy)`, async () => {
      const { s, root, idOf } = await setup(strategy)
      for (const options of [
        { expect: "ol" },
        { expect: "old!" },
        { expect: "OLD" },
        { identity: idOf("top.txt") },
        { expect: "old", identity: "1:2" }
      ]) {
        const e = await rejection(act(root, how, "a/f.txt", options))
        expect([e.refusal, e.reason, e.code]).toEqual(["changed", "Busy", "EBUSY"])
        expect(e.message).toMatch(/changed since it was read/)
      }
      // Replaced by a rename since it was read: the same bytes, another file.
      const id = idOf("a/f.txt")
      fs.writeFileSync(s.abs("a/g.txt"), "old")
      fs.renameSync(s.abs("a/g.txt"), s.abs("a/f.txt"))
      expect((await rejection(act(root, how, "a/f.txt", { expect: "old", identity: id }))).refusal).toBe("changed")
      expect(fs.readFileSync(s.abs("a/f.txt"), "utf8")).toBe("old")
      expect(fs.readdirSync(s.abs("a"))).toEqual(["f.txt"])
      root.close()
    })

    it(`${how}: links, hard links, .., absolute paths, directories and FIFOs are refused`, async () => {
      const { s, root } = await setup(strategy)
      fs.symlinkSync("f.txt", s.abs("a/link"))
      fs.symlinkSync("a", s.abs("dirlink"))
      fs.symlinkSync(s.secret, s.abs("out"))
      fs.linkSync(s.secret, s.abs("hard"))
      mkfifo(s.abs("fifo"))
      const secret = fs.readFileSync(s.secret, "utf8")
      const before = openDescriptorCount()
      const refusal = async (p: string, expect_ = secret) => (await rejection(act(root, how, p, { expect: expect_ }))).refusal
      expect(await refusal("a/link", "old")).toBe("symlink")
      expect(await refusal("dirlink/f.txt", "old")).toBe("symlink")
      expect(await refusal("out")).toBe("symlink")
      expect(await refusal("hard")).toBe("hardlink")
      expect(await refusal("fifo", "")).toBe("notregular")
      expect(await refusal("../outside/secret.txt")).toBe("escape")
      expect((await rejection(act(root, how, s.secret, { expect: secret }))).refusal).toBe("badargument")
      expect((await rejection(act(root, how, "d", { expect: "" }))).code).toBe("EISDIR")
      expect((await rejection(act(root, how, "", { expect: "" }))).refusal).toBe("badargument")
      expect((await rejection(act(root, how, "missing", { expect: "" }))).reason).toBe("NotFound")
      expect(fs.readFileSync(s.secret, "utf8")).toBe(secret)
      expect(fs.readFileSync(s.abs("a/f.txt"), "utf8")).toBe("old")
      expect(fs.readdirSync(s.root).sort()).toEqual(["a", "d", "dirlink", "fifo", "hard", "out", "top.txt"])
      expect(openDescriptorCount()).toBe(before)
      root.close()
    })

    it(`${how}: a directory moved out of the root is no longer reachable`, async () => {
      const { s, root } = await setup(strategy)
      fs.renameSync(s.abs("a"), path.join(s.outside, "a"))
      expect((await rejection(act(root, how, "a/f.txt", { expect: "old" }))).reason).toBe("NotFound")
      expect(fs.readFileSync(path.join(s.outside, "a/f.txt"), "utf8")).toBe("old")
      expect(fs.readdirSync(path.join(s.outside, "a"))).toEqual(["f.txt"])
      root.close()
    })
  }

  it("bad input is a typed BadArgument, and nothing is touched", async () => {
    const { s, root } = await setup(strategy)
    const bad: Array<() => Promise<void>> = [
      () => root.removeIfUnchanged("a/f.txt", {}),
      () => root.removeIfUnchanged("a/f.txt", undefined as never),
      () => root.removeIfUnchanged("a/f.txt", { identity: "12" }),
      () => root.removeIfUnchanged("a/f.txt", { identity: "-1:2" }),
      () => root.removeIfUnchanged("a/f.txt", { expect: 5 as never }),
      () => root.removeIfUnchanged(5 as never, { expect: "old" }),
      () => root.replaceIfUnchanged("a/f.txt", 5 as never, { expect: "old" }),
      () => root.replaceIfUnchanged("a/f.txt", "new", { expect: "old", mode: 0o10000 }),
      () => root.replaceIfUnchanged("a/f.txt", "new", { expect: "old", mode: -1 }),
      () => root.replaceIfUnchanged("a/f.txt", "new", {})
    ]
    for (const call of bad) {
      const e = await rejection(Promise.resolve().then(call))
      expect([e.refusal, e.reason]).toEqual(["badargument", "BadArgument"])
    }
    expect(fs.readFileSync(s.abs("a/f.txt"), "utf8")).toBe("old")
    root.close()
  })
})
