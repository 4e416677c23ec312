/**
 * The file handle's hot path into the addon, `openPath(path, flag, mode, verifyRoot)`: the same open
 * as `open({ op, path, flag, mode })` with its operands as arguments. What it opens is checked as
 * `open`'s is (test/root/open.test.ts); here: it answers the same descriptors and refusals, a
 * malformed argument is a typed refusal that opens nothing, and `verifyRoot` still checks the root.
 * Under both strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { native } from "../../src/internal/native.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount, scratch } from "../support/tree.ts"

const settle = (p: Promise<number>): Promise<{ fd: number } | { error: unknown }> =>
  p.then(
    (fd) => ({ fd }),
    (error: unknown) => ({ error })
  )

describe.each(strategies)("openPath, the file handle's open (%s)", (strategy) => {
  it("opens what open() opens and refuses what it refuses", async () => {
    const s = scratch()
    s.make({ "a/file.txt": "hello", "top.txt": "top" })
    fs.symlinkSync("top.txt", s.abs("link"))
    fs.linkSync(s.abs("top.txt"), s.abs("hard"))
    const root = await PinnedRoot.open(s.root, { strategy })
    try {
      const fd = await root.handle.openPath("a/file.txt", native.flags.r, undefined)
      expect(fs.readFileSync(fd, "utf8")).toBe("hello")
      // Blocking mode cleared, as open() leaves it; close-on-exec set.
      expect(fs.fstatSync(fd).isFile()).toBe(true)
      fs.closeSync(fd)
      const created = await root.handle.openPath("new.txt", native.flags.wx, 0o600)
      fs.closeSync(created)
      expect(fs.statSync(s.abs("new.txt")).mode & 0o777).toBe(0o600)
      for (const [name, refusal] of [
        ["link", "symlink"],
        ["hard", "hardlink"],
        ["../x", "escape"]
      ] as const) {
        const viaPath = await settle(root.handle.openPath(name, native.flags.w, undefined))
        const viaRequest = await settle(root.handle.open({ op: native.ops.open, path: name, flag: native.flags.w }))
        expect(viaPath).toMatchObject({ error: { refusal } })
        expect(viaRequest).toMatchObject({ error: { refusal } })
      }
      // "w" emptied nothing it refused.
      expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
    } finally {
      root.close()
    }
  })

  it("answers malformed arguments with a typed refusal, opening nothing", async () => {
    const s = scratch()
    s.make({ "top.txt": "top" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const before = openDescriptorCount()
    try {
      const bad: Array<[unknown, unknown, unknown]> = [
        [5, native.flags.r, undefined],
        [undefined, native.flags.r, undefined],
        ["top.txt", 99, undefined],
        ["top.txt", -1, undefined],
        ["top.txt", 0.5, undefined],
        ["top.txt", Number.NaN, undefined],
        ["top.txt", "r", undefined],
        ["top.txt", native.flags["w+"], undefined],
        ["top.txt", native.flags.w, 0o10000],
        ["top.txt", native.flags.w, -1],
        ["top.txt", native.flags.w, 1.5],
        ["top.txt", native.flags.w, "0644"],
        ["x".repeat(1 << 20), native.flags.r, undefined]
      ]
      for (const [p, flag, mode] of bad) {
        const e = await settle(root.handle.openPath(p as string, flag as number, mode as number))
        expect(e, JSON.stringify([typeof p === "string" ? p.slice(0, 20) : p, flag, mode])).toMatchObject({
          error: { refusal: "badargument" }
        })
      }
      expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
      expect(openDescriptorCount()).toBe(before)
    } finally {
      root.close()
    }
  })

  it("checks the root path first when asked to verify it", async () => {
    const s = scratch()
    s.make({ "top.txt": "top" })
    // An impostor made first, then put where the root was once the root is pinned.
    const impostor = `${s.root}-impostor`
    const moved = `${s.root}-moved`
    fs.mkdirSync(impostor)
    fs.writeFileSync(path.join(impostor, "top.txt"), "impostor")
    const root = await PinnedRoot.open(s.root, { strategy })
    fs.renameSync(s.root, moved)
    fs.renameSync(impostor, s.root)
    try {
      expect(await settle(root.handle.openPath("top.txt", native.flags.r, undefined, true))).toMatchObject({
        error: { refusal: "identity" }
      })
      // Control: without the check the pinned directory is still the one opened.
      const fd = await root.handle.openPath("top.txt", native.flags.r, undefined)
      expect(fs.readFileSync(fd, "utf8")).toBe("top")
      fs.closeSync(fd)
      root.close()
      // A closed root opens nothing.
      expect(await settle(root.handle.openPath("top.txt", native.flags.r, undefined))).toMatchObject({
        error: { refusal: "badargument" }
      })
    } finally {
      root.close()
      fs.rmSync(moved, { recursive: true, force: true })
    }
  })
})
