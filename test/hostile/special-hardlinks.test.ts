/**
 * Hard links to special files outside the root. A FIFO, a socket, a character or block device or a
 * symbolic link created outside and hard-linked into the workspace is one inode with two names:
 * changing or describing it through the inside name changes or describes the outside object. The
 * rule is one for every kind of file but directories: more than one link is refused for read,
 * write, stat, chmod and chown, and the outside object is left exactly as it was (mode, owner,
 * content). mknod needs root, as these tests run; every object is made on the same file system
 * as the workspace so that the hard link can exist at all.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, scratch } from "../support/tree.ts"
import { rejection as failure } from "../support/rejection.ts"

const servers: Array<net.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise<void>((resolve) => s.close(() => resolve()))
})

const makeSocket = async (at: string) => {
  const server = net.createServer()
  servers.push(server)
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject)
    server.listen(at, () => resolve())
  })
}

/** Each special kind, created outside; then hard-linked into the root under `hl-<kind>`. */
const kinds = ["fifo", "socket", "chardev", "blockdev", "symlink"] as const
type Kind = (typeof kinds)[number]

const setup = async (strategy: "openat2" | "walk") => {
  const s = scratch()
  const outsideOf = (k: Kind) => path.join(s.outside, `obj-${k}`)
  mkfifo(outsideOf("fifo"))
  await makeSocket(outsideOf("socket"))
  execFileSync("mknod", [outsideOf("chardev"), "c", "1", "3"]) // as /dev/null
  execFileSync("mknod", [outsideOf("blockdev"), "b", "7", "250"]) // a loop device number; never opened
  fs.symlinkSync("/etc/passwd", outsideOf("symlink"))
  for (const k of kinds) {
    fs.chmodSync(outsideOf(k), 0o640) // a link's own mode cannot be changed on Linux; harmless
    fs.linkSync(outsideOf(k), s.abs(`hl-${k}`))
    expect(fs.lstatSync(s.abs(`hl-${k}`)).nlink).toBe(2)
  }
  const root = await PinnedRoot.open(s.root, { strategy })
  const describe = (k: Kind) => {
    const st = fs.lstatSync(outsideOf(k))
    return { mode: st.mode, uid: st.uid, gid: st.gid, ino: st.ino, nlink: st.nlink }
  }
  const before = Object.fromEntries(kinds.map((k) => [k, describe(k)]))
  const unchanged = () => {
    for (const k of kinds) expect(describe(k)).toEqual(before[k])
  }
  return { s, root, unchanged }
}

const hardLinkRefusal = (e: PinnedFsError) => {
  expect(e.reason).toBe("PermissionDenied")
  expect(e.refusal).toBe("hardlink")
  expect(e.description).toMatch(/hard-linked \(2 links\)/)
}

describe.each(strategies)("hard links to special files outside the root (%s)", (strategy) => {
  it("stat refuses every kind, describing nothing of the outside object", async () => {
    const { root, unchanged } = await setup(strategy)
    for (const k of kinds) hardLinkRefusal(await failure(root.stat(`hl-${k}`)))
    unchanged()
    root.close()
  })

  it("chmod refuses every kind and leaves the outside mode as it was", async () => {
    const { root, unchanged } = await setup(strategy)
    for (const k of kinds) {
      const e = await failure(root.chmod(`hl-${k}`, 0o777))
      // A link is refused as a link before its link count is looked at.
      if (k === "symlink") expect(e.refusal).toBe("symlink")
      else hardLinkRefusal(e)
    }
    unchanged()
    root.close()
  })

  it("chown refuses every kind and leaves the outside owner as it was", async () => {
    const { root, unchanged } = await setup(strategy)
    for (const k of kinds) {
      const e = await failure(root.chown(`hl-${k}`, 4242, 4242))
      if (k === "symlink") expect(e.refusal).toBe("symlink")
      else hardLinkRefusal(e)
    }
    unchanged()
    root.close()
  })

  it("readFile refuses every kind without reading it", async () => {
    const { root, unchanged } = await setup(strategy)
    for (const k of ["fifo", "chardev", "symlink"] as const) {
      const e = await failure(root.readFile(`hl-${k}`))
      expect(e.reason === "PermissionDenied" || e.reason === "BadResource").toBe(true)
      expect(["hardlink", "notregular", "symlink"]).toContain(e.refusal)
    }
    // A socket cannot be opened for reading at all: the kernel answers ENXIO before any check.
    expect((await failure(root.readFile("hl-socket"))).code).toBe("ENXIO")
    unchanged()
    root.close()
  })

  it("writeFile refuses every kind, in place and atomically, writing nothing", async () => {
    const { s, root, unchanged } = await setup(strategy)
    for (const k of ["fifo", "socket", "chardev", "symlink"] as const) {
      for (const atomic of [false, true]) {
        const e = await failure(root.writeFileString(`hl-${k}`, "payload", { atomic }))
        expect(e.reason === "PermissionDenied" || e.reason === "BadResource").toBe(true)
        expect(["hardlink", "notregular", "symlink"]).toContain(e.refusal)
      }
      // Still the same inode under the inside name: nothing replaced it either.
      expect(fs.lstatSync(s.abs(`hl-${k}`)).nlink).toBe(2)
    }
    unchanged()
    root.close()
  })

  it("still stats, removes and renames its own name of a special file with one link", async () => {
    const { s, root } = await setup(strategy)
    mkfifo(s.abs("own-fifo"))
    expect((await root.stat("own-fifo")).type).toBe("FIFO")
    await root.rename("hl-fifo", "renamed-fifo")
    await root.remove("renamed-fifo")
    expect(fs.existsSync(path.join(s.outside, "obj-fifo"))).toBe(true)
    root.close()
  })
})
