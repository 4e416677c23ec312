import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { native } from "../src/internal/native.ts"
import { pinnedScratch } from "./support/pinned.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo } from "./support/tree.ts"
import { expectEachBadArgument, rejection as refusal } from "./support/rejection.ts"
import { asRoot, NOBODY } from "./support/ids.ts"

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777
const ownerOf = (p: string) => {
  const st = fs.lstatSync(p)
  return [st.uid, st.gid]
}

describe.each(strategies)("chmod, chown (%s)", (strategy) => {
  const setup = () =>
    pinnedScratch(strategy, (s) => {
      s.make({ "a/b/file.txt": "hello", "top.txt": "top", "dir/": "" })
      fs.chmodSync(s.secret, 0o640)
      fs.symlinkSync(s.outside, s.abs("linkdir"))
      fs.symlinkSync(s.secret, s.abs("a/linkfile"))
      fs.symlinkSync("b", s.abs("a/inner"))
    })

  it("changes the mode of files and directories, at the root and at depth", async () => {
    const { s, root } = await setup()
    await root.chmod("a/b/file.txt", 0o600)
    expect(modeOf(s.abs("a/b/file.txt"))).toBe(0o600)
    await root.chmod("top.txt", 0o4755) // set-id bits pass through untouched by any umask
    expect(modeOf(s.abs("top.txt"))).toBe(0o4755)
    await root.chmod("dir", 0o1777)
    expect(modeOf(s.abs("dir"))).toBe(0o1777)
    await root.chmod("a/b/", 0o700)
    expect(modeOf(s.abs("a/b"))).toBe(0o700)
    await root.chmod("a/b/../b/file.txt", 0o444)
    expect(modeOf(s.abs("a/b/file.txt"))).toBe(0o444)
    await root.chmod("", 0o750)
    expect(modeOf(s.root)).toBe(0o750)
  })

  it("changes a FIFO's mode without opening it", async () => {
    const { s, root } = await setup()
    mkfifo(s.abs("pipe"))
    await root.chmod("pipe", 0o600)
    expect(modeOf(s.abs("pipe"))).toBe(0o600)
  })

  it("changes the owner, -1 leaving an id unchanged", async () => {
    const { s, root } = await setup()
    // Giving a file away needs privilege; as another user only our own ids are allowed.
    const uid = asRoot ? NOBODY : process.getuid!()
    const gid = asRoot ? 65533 : process.getgid!()
    await root.chown("a/b/file.txt", uid, -1)
    expect(ownerOf(s.abs("a/b/file.txt"))).toEqual([uid, fs.statSync(s.root).gid])
    await root.chown("a/b/file.txt", -1, gid)
    expect(ownerOf(s.abs("a/b/file.txt"))).toEqual([uid, gid])
    await root.chown("dir", uid, gid)
    expect(ownerOf(s.abs("dir"))).toEqual([uid, gid])
    await root.chown("top.txt", -1, -1)
    expect(ownerOf(s.abs("top.txt"))).toEqual(ownerOf(s.root))
  })

  it("refuses a symlink first, in the middle and last, leaving the outside target unchanged", async () => {
    const { s, root } = await setup()
    const snapshot = () => ({
      secret: [modeOf(s.secret), ...ownerOf(s.secret)],
      outside: [modeOf(s.outside), ...ownerOf(s.outside)],
      inner: [modeOf(s.abs("a/b")), ...ownerOf(s.abs("a/b"))], // what a/inner names
      link: ownerOf(s.abs("a/linkfile"))
    })
    const before = snapshot()
    for (const p of ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile", "linkdir", "linkdir/", "a/inner/"]) {
      for (const op of [() => root.chmod(p, 0o777), () => root.chown(p, NOBODY, NOBODY)]) {
        const e = await refusal(op())
        expect({ p, reason: e.reason, refusal: e.refusal }).toEqual({ p, reason: "PermissionDenied", refusal: "symlink" })
        expect(e.path).toBe(p)
      }
    }
    expect(snapshot()).toEqual(before)
  })

  it("refuses a hard-linked file, leaving both names unchanged", async () => {
    const { s, root } = await setup()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    const before = { mode: modeOf(s.secret), owner: ownerOf(s.secret) }
    for (const op of [() => root.chmod("hard.txt", 0o777), () => root.chown("hard.txt", NOBODY, NOBODY)]) {
      const e = await refusal(op())
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("hardlink")
    }
    expect(modeOf(s.secret)).toBe(before.mode)
    expect(ownerOf(s.secret)).toEqual(before.owner)
  })

  it("never climbs above the root with ..", async () => {
    const { s, root } = await setup()
    const name = path.basename(s.root)
    for (const p of ["../outside/secret.txt", `../${name}/top.txt`, "a/../../outside", ".."]) {
      for (const op of [() => root.chmod(p, 0o777), () => root.chown(p, NOBODY, NOBODY)]) {
        const e = await refusal(op())
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("escape")
      }
    }
    expect(modeOf(s.secret)).toBe(0o640)
    expect(ownerOf(s.outside)).toEqual(ownerOf(path.dirname(s.outside)))
  })

  it("maps plain errors", async () => {
    const { root } = await setup()
    expect((await refusal(root.chmod("missing", 0o600))).reason).toBe("NotFound")
    expect((await refusal(root.chown("a/missing", 0, 0))).reason).toBe("NotFound")
    expect((await refusal(root.chmod("top.txt/x", 0o600))).reason).toBe("BadResource")
    expect((await refusal(root.chmod("top.txt/", 0o600))).reason).toBe("BadResource")
  })

  it("refuses absolute paths and malformed input as BadArgument", async () => {
    const { s, root } = await setup()
    const before = modeOf(s.abs("top.txt"))
    const calls: Array<() => Promise<unknown>> = [
      () => root.chmod(s.secret, 0o777),
      () => root.chmod(s.abs("top.txt"), 0o777),
      () => root.chown(s.secret, 0, 0),
      () => root.chmod("top.txt", 0o10000),
      () => root.chmod("top.txt", -1),
      () => root.chmod("top.txt", 1.5),
      () => root.chmod("top.txt", "777" as unknown as number),
      () => root.chmod("top.txt", undefined as unknown as number),
      () => root.chown("top.txt", -2, 0),
      () => root.chown("top.txt", 0, 2 ** 32),
      () => root.chown("top.txt", 1.5, 0),
      () => root.chown("top.txt", "0" as unknown as number, 0),
      () => root.chmod("a\0b", 0o777),
      () => root.chmod(42 as unknown as string, 0o777),
      // The addon's own checks, reached without the PinnedRoot guards.
      () => root.run({ op: native.ops.chmod, path: "top.txt" }, "top.txt"),
      () => root.run({ op: native.ops.chmod, path: "top.txt", mode: 0o17777 }, "top.txt"),
      () => root.run({ op: native.ops.chown, path: "top.txt", uid: -5, gid: 0 }, "top.txt")
    ]
    await expectEachBadArgument(calls)
    expect(modeOf(s.abs("top.txt"))).toBe(before)
    expect(modeOf(s.secret)).toBe(0o640)
  })
})
