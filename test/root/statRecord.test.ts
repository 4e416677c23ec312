/**
 * The stat record: the addon's one Float64Array per stat, read into `Stats`, `BigIntStats`, the
 * public `FileInfo` (batch, MCP) and Effect's `File.Info`. Exactness beyond 2^53 cannot be made on
 * a real file system here, so it is checked on a record made from chosen values; the rest beside
 * node:fs/promises `lstat`, under both strategies.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { native } from "../../src/internal/native.ts"
import { fileInfoOf, isStatRecord, recordOf } from "../../src/internal/statRecord.ts"
import { BigIntStats, type FileInfo, PinnedRoot, Stats } from "../../src/index.ts"
import { fromNative, make } from "../../src/protocol/fileInfo.ts"
import { statsOf } from "../../src/root/stats.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const wide: FileInfo = {
  type: "File",
  dev: 2n ** 60n + 1n,
  ino: 2n ** 64n - 1n,
  mode: 0o100644,
  nlink: 1n,
  uid: 4_294_967_294,
  gid: 7,
  rdev: 0n,
  size: 2n ** 63n + 5n,
  blksize: 4096n,
  blocks: 2n ** 53n + 1n,
  atimeMs: -1500.25,
  mtimeMs: 1_099_511_627_123.4568,
  ctimeMs: 0,
  birthtimeMs: -1,
  atimeNs: -1_500_250_001n,
  mtimeNs: 1_099_511_627_123_456_789n,
  ctimeNs: 0n,
  birthtimeNs: 0n
}

describe("the stat record", () => {
  it("has the layout the addon exports, and every file type a name", () => {
    const r = native.statRecord
    for (const f of ["type", "dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size", "blksize", "blocks"]) {
      expect(r.numbers).toContain(f)
    }
    expect(r.exact).toEqual(["dev", "ino", "nlink", "rdev", "size", "blksize", "blocks"])
    expect(r.nanos).toEqual(["atimeNs", "mtimeNs", "ctimeNs", "birthtimeNs"])
    expect(r.types).toEqual(["File", "Directory", "SymbolicLink", "BlockDevice", "CharacterDevice", "FIFO", "Socket", "Unknown"])
  })

  it("keeps 64-bit integers and nanoseconds exact for { bigint: true }, rounds them as Number for the number form", () => {
    const r = recordOf(wide)
    expect(isStatRecord(r)).toBe(true)
    expect(fileInfoOf(r)).toEqual(wide)
    const big = statsOf(wide, true)
    expect([big.dev, big.ino, big.size, big.blocks]).toEqual([wide.dev, wide.ino, wide.size, wide.blocks])
    expect([big.atimeNs, big.mtimeNs, big.birthtimeNs]).toEqual([wide.atimeNs, wide.mtimeNs, 0n])
    expect([big.atimeMs, big.mtimeMs, big.birthtimeMs]).toEqual([-1501n, 1_099_511_627_123n, 0n])
    expect(big.uid).toBe(4_294_967_294n)
    const num = statsOf(wide)
    expect([num.dev, num.ino, num.size, num.blocks]).toEqual([Number(wide.dev), Number(wide.ino), Number(wide.size), Number(wide.blocks)])
    expect(num.birthtimeMs).toBe(0)
    expect(num.birthtime.getTime()).toBe(0)
    const info = fromNative(r)
    expect(info.size).toBe(wide.size)
    expect(info.birthtime._tag).toBe("None")
  })

  it("File.Info read from the slots is the one the builder makes from the public FileInfo, beyond 2^53 and with or without a birth time", () => {
    const viaBuilder = (info: FileInfo) =>
      make({
        ...info,
        atime: new Date(info.atimeMs),
        mtime: new Date(info.mtimeMs),
        birthtime: info.birthtimeMs < 0 ? undefined : new Date(info.birthtimeMs)
      })
    for (const chosen of [wide, { ...wide, birthtimeMs: 86_400_000.5, birthtimeNs: 86_400_000_500_000n, type: "Directory" as const }]) {
      const r = recordOf(chosen)
      expect(fromNative(r)).toEqual(viaBuilder(fileInfoOf(r)))
    }
  })

  it("a bad type code reads as Unknown, never a crash", () => {
    const r = recordOf(wide)
    r[native.statRecord.numbers.indexOf("type")] = 99
    expect(fileInfoOf(r).type).toBe("Unknown")
    expect(statsOf(fileInfoOf(r)).isFile()).toBe(false)
  })
})

describe.each(strategies)("stat's record, beside lstat (%s)", (strategy) => {
  it("Stats has Node's own enumerable keys (plus type), and its Dates are built once, on first read", async () => {
    const s = scratch()
    s.make({ "f.txt": "x" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const mine = await root.stat("f.txt")
    const node = await fsp.lstat(s.abs("f.txt"))
    expect(mine).toBeInstanceOf(Stats)
    expect(new Set(Object.keys(mine))).toEqual(new Set([...Object.keys(node), "type"]))
    const keys = (o: object) => {
      const out: Array<string> = []
      for (const k in o) if (typeof (o as Record<string, unknown>)[k] !== "function") out.push(k)
      return new Set(out)
    }
    expect(keys(mine)).toEqual(new Set([...keys(node), "type"]))
    expect(mine.mtime).toBe(mine.mtime)
    expect(mine.mtime.getTime()).toBe(node.mtime.getTime())
    const when = new Date(5)
    ;(mine as { mtime: Date }).mtime = when
    expect(mine.mtime).toBe(when)
    const big = await root.stat("f.txt", { bigint: true })
    expect(big).toBeInstanceOf(BigIntStats)
    expect(big.ctime.getTime()).toBe((await fsp.lstat(s.abs("f.txt"), { bigint: true })).ctime.getTime())
    root.close()
  })

  it("batch answers a stat member as FileInfo, field for field as lstat(..., { bigint: true })", async () => {
    const s = scratch()
    s.make({ "d/f.txt": "hello" })
    fs.symlinkSync("d/f.txt", s.abs("ln"))
    const root = await PinnedRoot.open(s.root, { strategy })
    const names = ["d/f.txt", "d", "ln"]
    const answers = await root.batch([
      ...names.map((path) => ({ operation: "stat" as const, path })),
      { operation: "readFile", path: "d/f.txt" }
    ])
    for (const [i, name] of names.entries()) {
      const a = answers[i]!
      expect(a.ok, name).toBe(true)
      const info = (a as { value: FileInfo }).value
      const node = await fsp.lstat(s.abs(name), { bigint: true })
      // Not atimeNs: the batch's own readFile moves it before this lstat.
      for (const f of ["dev", "ino", "nlink", "rdev", "size", "blksize", "blocks", "mtimeNs", "ctimeNs"] as const) {
        expect(info[f], `${name} ${f}`).toBe(node[f])
      }
      expect([info.mode, info.uid, info.gid]).toEqual([Number(node.mode), Number(node.uid), Number(node.gid)])
      expect(info.type).toBe(node.isSymbolicLink() ? "SymbolicLink" : node.isDirectory() ? "Directory" : "File")
    }
    expect(Buffer.from((answers[3] as { value: Uint8Array }).value).toString()).toBe("hello")
    root.close()
  })
})
