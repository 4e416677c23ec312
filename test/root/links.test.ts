/**
 * symlink and link beneath a pinned root: happy paths beside node:fs/promises on a twin tree, the
 * link-text check (absolute, or climbing above the root from the link's directory), the hard-link
 * rule and every path refusal, with positive controls, under both strategies.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { native } from "../../src/internal/native.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { describeTree, outcome, pinnedTwins } from "./twin.ts"

describe.each(strategies)("symlink and link (%s)", (strategy) => {
  const twins = () => pinnedTwins(strategy, { "file.txt": "content", "a/b/deep.txt": "deep" })

  it("symlink and link match node:fs/promises: outcome and resulting tree", async () => {
    const { s, node, root } = await twins()
    const cases: Array<[string, (r: string) => Promise<unknown>, () => Promise<unknown>]> = []
    const both = (name: string, ours: () => Promise<unknown>, theirs: (base: string) => Promise<unknown>) => {
      cases.push([name, () => ours(), () => theirs(node)])
    }
    both(
      "symlink at top",
      () => root.symlink("file.txt", "l1"),
      (b) => fsp.symlink("file.txt", path.join(b, "l1"))
    )
    both(
      "symlink up",
      () => root.symlink("../../file.txt", "a/b/up"),
      (b) => fsp.symlink("../../file.txt", path.join(b, "a/b/up"))
    )
    both(
      "symlink dangling",
      () => root.symlink("nowhere", "a/dangling"),
      (b) => fsp.symlink("nowhere", path.join(b, "a/dangling"))
    )
    both(
      "symlink taken",
      () => root.symlink("x", "file.txt"),
      (b) => fsp.symlink("x", path.join(b, "file.txt"))
    )
    both(
      "symlink no parent",
      () => root.symlink("x", "none/l"),
      (b) => fsp.symlink("x", path.join(b, "none/l"))
    )
    both(
      "link",
      () => root.link("a/b/deep.txt", "deep-link"),
      (b) => fsp.link(path.join(b, "a/b/deep.txt"), path.join(b, "deep-link"))
    )
    both(
      "link a final symlink itself",
      () => root.link("ln", "ln2"),
      (b) => fsp.link(path.join(b, "ln"), path.join(b, "ln2"))
    )
    both(
      "link taken",
      () => root.link("file.txt", "a/b/deep.txt"),
      (b) => fsp.link(path.join(b, "file.txt"), path.join(b, "a/b/deep.txt"))
    )
    both(
      "link missing",
      () => root.link("missing", "m2"),
      (b) => fsp.link(path.join(b, "missing"), path.join(b, "m2"))
    )
    both(
      "link a directory",
      () => root.link("a", "a2"),
      (b) => fsp.link(path.join(b, "a"), path.join(b, "a2"))
    )
    for (const [name, ours, theirs] of cases) {
      const a = await outcome(ours(""))
      const b = await outcome(theirs())
      expect({ name, a }).toEqual({ name, a: b })
    }
    expect(describeTree(s.root)).toEqual(describeTree(node))
    // The link of a link is the link: same inode, still a link, its text unchanged.
    expect(fs.lstatSync(s.abs("ln2")).ino).toBe(fs.lstatSync(s.abs("ln")).ino)
    root.close()
  })

  it("symlink refuses text that is absolute or climbs above the root; node:fs makes it", async () => {
    const { s, root } = await twins()
    for (const [text, at] of [
      [s.secret, "abs"],
      ["/etc/passwd", "abs2"],
      ["../outside/secret.txt", "up"],
      ["../../outside", "a/up"],
      ["b/../../../outside", "a/sneaky"],
      ["..", "top-dotdot"],
      ["./../x", "dot-up"]
    ] as const) {
      // Positive control: node:fs makes the link, and it reaches outside.
      await fsp.symlink(text, path.join(s.outside, "control"))
      fs.rmSync(path.join(s.outside, "control"))
      const e = await rejection(root.symlink(text, at))
      expect({ text, reason: e.reason, refusal: e.refusal }).toEqual({ text, reason: "PermissionDenied", refusal: "escape" })
      expect(fs.existsSync(s.abs(at)) || fs.lstatSync(path.dirname(s.abs(at))).isDirectory()).toBe(true)
      expect(() => fs.lstatSync(s.abs(at))).toThrow()
    }
    // Climbing back down is fine as long as it never passes above the root.
    await root.symlink("../a/b/../../file.txt", "a/fine")
    expect(fs.readFileSync(s.abs("a/fine"), "utf8")).toBe("content")
    root.close()
  })

  it("link refuses a hard-linked source; a link it makes leaves both names unreadable through pinnedfs", async () => {
    const { s, root } = await twins()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    // Positive control: node:fs gives the outside file another name inside.
    await fsp.link(s.abs("hard.txt"), s.abs("control"))
    expect(fs.readFileSync(s.abs("control"), "utf8")).toBe("TOP SECRET")
    fs.rmSync(s.abs("control"))
    expect((await rejection(root.link("hard.txt", "again"))).refusal).toBe("hardlink")
    expect(fs.existsSync(s.abs("again"))).toBe(false)
    // The decision, stated in docs/pinnedroot.md: after link, the file has two names and the
    // hard-link rule refuses reading or writing it by either.
    await root.link("file.txt", "twin.txt")
    expect(fs.statSync(s.abs("file.txt")).nlink).toBe(2)
    for (const p of ["file.txt", "twin.txt"]) {
      expect((await rejection(root.readFileString(p))).refusal).toBe("hardlink")
      expect((await rejection(root.writeFileString(p, "x", { flag: "a" }))).refusal).toBe("hardlink")
      expect((await rejection(root.copyFile(p, "copied"))).refusal).toBe("hardlink")
    }
    // Removing one name makes the other readable again.
    await root.remove("twin.txt")
    expect(await root.readFileString("file.txt")).toBe("content")
    root.close()
  })

  it("refuses a symlink on the way, .. above the root and absolute paths, for both", async () => {
    const { s, root } = await twins()
    fs.symlinkSync(s.outside, s.abs("out"))
    // Positive control: through node:fs, a link made via the linked directory lands outside.
    await fsp.symlink("x", s.abs("out/control"))
    fs.rmSync(path.join(s.outside, "control"))
    const symlinkRefusals = [
      () => root.symlink("secret.txt", "out/planted"),
      () => root.link("out/secret.txt", "leak"),
      () => root.link("file.txt", "out/planted"),
      () => root.link("ln/x", "y")
    ]
    for (const [i, call] of symlinkRefusals.entries()) {
      const e = await rejection(call())
      expect({ i, refusal: e.refusal }).toEqual({ i, refusal: "symlink" })
    }
    const name = path.basename(s.root)
    for (const call of [
      () => root.symlink("x", "../outside/planted"),
      () => root.link("../outside/secret.txt", "leak"),
      () => root.link("file.txt", "../outside/planted"),
      () => root.link(`../${name}/file.txt`, "x")
    ]) {
      expect((await rejection(call())).refusal).toBe("escape")
    }
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    expect(fs.existsSync(s.abs("leak"))).toBe(false)
    root.close()
  })

  it("bad input is a typed BadArgument", async () => {
    const { root } = await twins()
    const calls: Array<() => Promise<unknown>> = [
      () => root.symlink("", "l"),
      () => root.symlink("a\0b", "l"),
      () => root.symlink(1 as unknown as string, "l"),
      () => root.symlink("x", "l", "pipe"),
      () => root.symlink("x", "/abs"),
      () => root.symlink("x", "l/"),
      () => root.link("file.txt", "/abs"),
      () => root.link(2 as unknown as string, "x"),
      () => root.link("a/", "x"),
      () => root.run({ op: native.ops.symlink, path: "l" }, "l"),
      () => root.run({ op: native.ops.link, path: "file.txt" }, "file.txt")
    ]
    for (const [i, call] of calls.entries()) {
      const e = await rejection((async () => call())())
      expect({ i, reason: e.reason }).toEqual({ i, reason: "BadArgument" })
    }
    root.close()
  })
})
