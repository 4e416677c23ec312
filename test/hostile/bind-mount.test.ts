/**
 * Same-file-system bind mounts inside the workspace. A bind mount of an outside directory (or file)
 * onto a name inside the root has the root's st_dev, so no device comparison sees it; its mount id
 * differs. pinnedfs promises that no mount carries a program outside: a lookup that would cross
 * one is refused (PermissionDenied, saying it is a mount point), a recursive listing or glob lists
 * the mount point's name and never enters it, and a recursive remove that meets one stops there,
 * having deleted nothing beneath it. The outside data is checksummed before and after.
 *
 * Mounting needs CAP_SYS_ADMIN (these tests run as root). If this machine cannot mount, the tests
 * say why and are skipped; every mount made is undone after each test, also when a test fails.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { snapshot } from "../support/attacker.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { rejection as failure } from "../support/rejection.ts"
import { cannotMount, useBindMounts } from "../support/mounts.ts"
import { skipUnless } from "../support/skip.ts"

const bind = useBindMounts()

const mountRefusal = (e: PinnedFsError) => {
  expect(e.reason).toBe("PermissionDenied")
  expect(e.refusal).toBe("escape")
  expect(e.description).toMatch(/is a mount point/)
}

describe.each(strategies)("bind mounts inside the root (%s)", (strategy) => {
  beforeEach((ctx) => skipUnless(ctx, cannotMount === "", cannotMount))
  const setup = async () => {
    const s = scratch()
    const data = path.join(s.outside, "data")
    fs.mkdirSync(path.join(data, "sub"), { recursive: true })
    fs.writeFileSync(path.join(data, "keep.txt"), "outside data")
    fs.writeFileSync(path.join(data, "sub", "deep.txt"), "outside deep")
    const file = path.join(s.outside, "file.txt")
    fs.writeFileSync(file, "outside file")
    s.make({ "tree/a.txt": "a", "tree/m/": "", "tree/z.txt": "z", "m/": "", f: "inside", "plain/x.txt": "x" })
    bind(data, s.abs("m"))
    bind(data, s.abs("tree/m"))
    bind(file, s.abs("f"))
    const root = await PinnedRoot.open(s.root, { strategy })
    const before = snapshot(s.outside)
    const outsideUnchanged = () => {
      expect(snapshot(s.outside)).toEqual(before)
      expect(fs.readFileSync(path.join(data, "keep.txt"), "utf8")).toBe("outside data")
      expect(fs.readFileSync(file, "utf8")).toBe("outside file")
    }
    return { s, root, outsideUnchanged }
  }

  it("refuses every lookup that crosses a mount point", async () => {
    const { root, outsideUnchanged } = await setup()
    const crossing: Array<() => Promise<unknown>> = [
      () => root.stat("m"),
      () => root.stat("m/keep.txt"),
      () => root.exists("m/keep.txt"),
      () => root.readFile("m/keep.txt"),
      () => root.readDirectory("m"),
      () => root.readDirectory("m/sub"),
      () => root.realPath("m/keep.txt"),
      () => root.writeFileString("m/keep.txt", "x"),
      () => root.writeFileString("m/new.txt", "x"),
      () => root.writeFileString("m/keep.txt", "x", { atomic: true }),
      () => root.chmod("m/keep.txt", 0o777),
      () => root.chown("m/keep.txt", 4242, 4242),
      () => root.makeDirectory("m/newdir"),
      () => root.makeDirectory("m/a/b", { recursive: true }),
      () => root.remove("m/keep.txt"),
      () => root.rename("m/keep.txt", "moved.txt"),
      () => root.rename("plain/x.txt", "m/x.txt"),
      () => root.glob("*", { root: "m" }),
      () => root.stat("f"),
      () => root.readFile("f"),
      () => root.writeFileString("f", "x"),
      // A file mounted over a name, as the target of a replacement and as a copy's source: the
      // mount is told by the one look at the name (statx's mount id), and by nothing else.
      () => root.writeFileString("f", "x", { atomic: true }),
      () => root.copyFile("plain/x.txt", "f"),
      () => root.copyFile("f", "plain/copy.txt"),
      () => root.cp("f", "plain/cp.txt"),
      () => root.chmod("f", 0o777)
    ]
    for (const call of crossing) mountRefusal(await failure(call()))
    const planned = await root.mkdirs([{ path: "m/planned" }])
    expect(planned.created).toEqual([])
    mountRefusal(planned.error as PinnedFsError)
    outsideUnchanged()
    root.close()
  })

  it("a recursive remove stops at a mount point and deletes nothing beneath it", async () => {
    const { s, root, outsideUnchanged } = await setup()
    mountRefusal(await failure(root.remove("m", { recursive: true })))
    mountRefusal(await failure(root.remove("tree", { recursive: true })))
    mountRefusal(await failure(root.remove("f")))
    outsideUnchanged()
    // The mount points themselves are still there, mounted.
    expect(fs.readFileSync(s.abs("m/keep.txt"), "utf8")).toBe("outside data")
    expect(fs.readFileSync(s.abs("tree/m/keep.txt"), "utf8")).toBe("outside data")
    root.close()
  })

  it("a recursive listing and glob name a mount point and never enter it", async () => {
    const { root, outsideUnchanged } = await setup()
    const listed = await root.readDirectory("", { recursive: true })
    expect(listed).toContain("m")
    expect(listed).toContain("tree/m")
    expect(listed.filter((n) => n.includes("keep") || n.includes("deep"))).toEqual([])
    const globbed = await root.glob("**")
    expect(globbed).toContain("tree/m")
    expect(globbed.filter((n) => n.includes("keep") || n.includes("deep"))).toEqual([])
    outsideUnchanged()
    root.close()
  })

  it("still works on everything beside the mount points", async () => {
    const { s, root, outsideUnchanged } = await setup()
    expect(await root.readFileString("tree/a.txt")).toBe("a")
    await root.writeFileString("tree/new.txt", "n", { atomic: true })
    await root.remove("plain", { recursive: true })
    expect(fs.existsSync(s.abs("plain"))).toBe(false)
    outsideUnchanged()
    root.close()
  })
})
