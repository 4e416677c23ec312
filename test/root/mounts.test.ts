/**
 * A refusal at a mount point must not depend on what lies behind it. Names inside a mount are the
 * mounted file system's, not the workspace's: answering "no such file" for one name and "is a mount
 * point" for another would let a caller probe a directory it may not enter. So every path through
 * a mount point is refused alike, at the mount point, and the refusal names the mount point (not
 * the path asked), under both strategies: openat2 does it in the kernel (RESOLVE_NO_XDEV), the
 * walk before it looks up the next component.
 *
 * Mounting needs CAP_SYS_ADMIN (these tests run as root); if this machine cannot bind-mount, the
 * tests say why and are skipped. Every mount is undone after each test, also when one fails.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { snapshot } from "../support/attacker.ts"
import { rejection } from "../support/rejection.ts"
import { cannotMount, useBindMounts } from "../support/mounts.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const bind = useBindMounts()

/** The one refusal a path through the mount point gets, naming the mount point `where`. */
const refusedAt = (e: PinnedFsError, where: string, asked: string) => {
  expect(e.reason).toBe("PermissionDenied")
  expect(e.refusal).toBe("escape")
  expect(e.description).toBe(`'${where}' is a mount point: pinnedfs never crosses into another mount`)
  expect(e.path).toBe(asked)
}

describe.each(strategies)("a mount point inside the root (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const data = path.join(s.outside, "data")
    fs.mkdirSync(path.join(data, "sub"), { recursive: true })
    fs.writeFileSync(path.join(data, "m.txt"), "mounted")
    s.make({ "mnt/": "", "deep/mnt/": "", "a.txt": "a" })
    bind(data, s.abs("mnt"))
    bind(data, s.abs("deep/mnt"))
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, root, before: snapshot(s.outside) }
  }

  it("answers a name behind it exactly as one that is not there", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const { s, root, before } = await setup()
    // Each call once on a name that exists behind the mount and once on one that does not: the
    // answers must be the same refusal, naming the mount point.
    for (const [base, where] of [
      ["mnt", "mnt"],
      ["deep/mnt", "deep/mnt"]
    ] as const) {
      for (const leaf of ["m.txt", "nope", "sub", "m.txt/x", "nope/x", "sub/x"]) {
        const p = `${base}/${leaf}`
        refusedAt(await rejection(root.exists(p)), where, p)
        refusedAt(await rejection(root.stat(p)), where, p)
        refusedAt(await rejection(root.readFile(p)), where, p)
        refusedAt(await rejection(root.readDirectory(p)), where, p)
        refusedAt(await rejection(root.readLink(p)), where, p)
        refusedAt(await rejection(root.writeFileString(p, "x")), where, p)
        refusedAt(await rejection(root.makeDirectory(p)), where, p)
        refusedAt(await rejection(root.remove(p, { force: true })), where, p)
      }
      // Through ".." behind the mount: resolving the ".." would look the name up first.
      for (const leaf of ["m.txt/../a", "nope/../a", "sub/../a"]) {
        const p = `${base}/${leaf}`
        refusedAt(await rejection(root.stat(p)), where, p)
      }
    }
    expect(snapshot(s.outside)).toEqual(before)
    root.close()
  })

  it("refuses the mount point itself as a mount point, also for a write or a listing", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const { s, root, before } = await setup()
    refusedAt(await rejection(root.stat("mnt")), "mnt", "mnt")
    // One name in the root is answered by one statx where it is on the root's mount; a mount
    // point must still get the refusal, never true.
    refusedAt(await rejection(root.exists("mnt")), "mnt", "mnt")
    // resolve of the mount point itself: openat2's one statx sees the other mount and hands over to
    // the confined open, whose refusal this is. The walk does not look at a last component's
    // mount for resolve: it answers the name, and every act on it is then refused, as above.
    if (strategy === "openat2") refusedAt(await rejection(root.resolve("mnt")), "mnt", "mnt")
    else expect(await root.resolve("mnt")).toEqual({ path: "mnt", target: null })
    refusedAt(await rejection(root.readFile("mnt")), "mnt", "mnt")
    refusedAt(await rejection(root.readDirectory("mnt")), "mnt", "mnt")
    refusedAt(await rejection(root.writeFileString("mnt", "x")), "mnt", "mnt")
    refusedAt(await rejection(root.writeFileString("mnt", "x", { atomic: false })), "mnt", "mnt")
    refusedAt(await rejection(root.writeFileString("deep/mnt", "x", { flag: "a" })), "deep/mnt", "deep/mnt")
    expect(snapshot(s.outside)).toEqual(before)
    root.close()
  })

  it("positive control: node:fs reads and probes behind the mount point", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const { s, root } = await setup()
    expect(fs.readFileSync(s.abs("mnt/m.txt"), "utf8")).toBe("mounted")
    expect(fs.existsSync(s.abs("mnt/nope"))).toBe(false)
    expect(fs.existsSync(s.abs("mnt/m.txt"))).toBe(true)
    expect(await root.readFileString("a.txt")).toBe("a")
    root.close()
  })
})
