/**
 * `stat` answers `fs.Stats` (and `fs.BigIntStats` with `{ bigint: true }`), compared field for
 * field with node:fs/promises `lstat` on a twin tree, for every kind of entry a tree holds.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { BigIntStats, PinnedRoot, Stats } from "../../src/index.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, scratch } from "../support/tree.ts"

const numberFields = ["dev", "ino", "mode", "nlink", "uid", "gid", "rdev", "size", "blksize", "blocks"] as const
const timeFields = ["atime", "mtime", "ctime", "birthtime"] as const
const tests = ["isFile", "isDirectory", "isSymbolicLink", "isFIFO", "isSocket", "isBlockDevice", "isCharacterDevice"] as const

/** Every kind of entry, made at `at` (a workspace or its twin) the same way. */
const lay = (at: string): void => {
  fs.mkdirSync(`${at}/dir/sub`, { recursive: true })
  fs.writeFileSync(`${at}/dir/file.txt`, "x".repeat(5000))
  fs.writeFileSync(`${at}/empty`, "")
  fs.symlinkSync("dir/file.txt", `${at}/link`)
  mkfifo(`${at}/fifo`)
  execFileSync("mknod", [`${at}/null`, "c", "1", "3"])
  // A bound socket whose file stays (Node's server unlinks its socket when it closes).
  execFileSync("python3", ["-c", "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])", `${at}/sock`])
}

const names = ["dir", "dir/sub", "dir/file.txt", "empty", "link", "fifo", "null", "sock", ""]

describe.each(strategies)("stat answers fs.Stats (%s)", (strategy) => {
  it("field for field as lstat, numbers by default", async () => {
    const s = scratch()
    lay(s.root)
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const name of names) {
      const mine = await root.stat(name)
      const node = await fsp.lstat(s.abs(name))
      expect(mine, name).toBeInstanceOf(Stats)
      for (const f of numberFields) expect(mine[f], `${name} ${f}`).toBe(node[f])
      for (const f of timeFields) {
        expect(mine[`${f}Ms`], `${name} ${f}Ms`).toBe(node[`${f}Ms`])
        expect(mine[f], `${name} ${f}`).toBeInstanceOf(Date)
        expect(mine[f].getTime(), `${name} ${f}`).toBe(node[f].getTime())
      }
      for (const t of tests) expect(mine[t](), `${name} ${t}`).toBe(node[t]())
      expect(typeof mine.size).toBe("number")
    }
    expect((await root.stat("fifo")).type).toBe("FIFO")
    root.close()
  })

  /** Each laid-out name's bigint stat beside lstat's, through `check`; the root is left open. */
  const eachBigIntTwin = async (
    check: (name: string, mine: BigIntStats, node: fs.BigIntStats) => void
  ): Promise<{ s: ReturnType<typeof scratch>; root: PinnedRoot }> => {
    const s = scratch()
    lay(s.root)
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const name of names) {
      check(name, await root.stat(name, { bigint: true }), await fsp.lstat(s.abs(name), { bigint: true }))
    }
    return { s, root }
  }

  it("with { bigint: true }, field for field as lstat(..., { bigint: true })", async () => {
    const { root } = await eachBigIntTwin((name, mine, node) => {
      expect(mine, name).toBeInstanceOf(BigIntStats)
      for (const f of numberFields) expect(mine[f], `${name} ${f}`).toBe(node[f])
      for (const f of timeFields) {
        expect(mine[`${f}Ms`], `${name} ${f}Ms`).toBe(node[`${f}Ms`])
        expect(mine[f].getTime(), `${name} ${f}`).toBe(node[f].getTime())
      }
      for (const t of tests) expect(mine[t](), `${name} ${t}`).toBe(node[t]())
    })
    root.close()
  })

  it("with { bigint: true }, the …Ns times to the nanosecond, as lstat(..., { bigint: true }) and a handle's fstat", async () => {
    const { s, root } = await eachBigIntTwin((name, mine, node) => {
      for (const f of timeFields) {
        const ns = `${f}Ns` as const
        expect(typeof mine[ns], `${name} ${ns}`).toBe("bigint")
        expect(mine[ns], `${name} ${ns}`).toBe(node[ns])
      }
    })
    // A time with nanoseconds no double of milliseconds holds (2^40 ms and change).
    fs.writeFileSync(s.abs("ns.txt"), "x")
    execFileSync("touch", ["-h", "-d", "@1099511627.123456789", s.abs("ns.txt")])
    const exact = await root.stat("ns.txt", { bigint: true })
    expect(exact.mtimeNs).toBe((await fsp.lstat(s.abs("ns.txt"), { bigint: true })).mtimeNs)
    expect(exact.mtimeNs % 1_000_000_000n).toBe(123_456_789n)
    await using handle = await root.open("ns.txt")
    const viaHandle = await handle.stat({ bigint: true })
    await using twin = await fsp.open(s.abs("ns.txt"))
    const fstat = await twin.stat({ bigint: true })
    for (const f of timeFields) expect(viaHandle[`${f}Ns`], `handle ${f}Ns`).toBe(fstat[`${f}Ns`])
    root.close()
  })

  it("keeps every refusal, and bad options are typed", async () => {
    const s = scratch()
    s.make({ "a/f.txt": "x" })
    fs.symlinkSync(s.outside, s.abs("out"))
    fs.linkSync(s.secret, s.abs("hard"))
    const root = await PinnedRoot.open(s.root, { strategy })
    expect((await rejection(root.stat("out/secret.txt"))).refusal).toBe("symlink")
    expect((await rejection(root.stat("hard"))).refusal).toBe("hardlink")
    expect((await rejection(root.stat("../outside/secret.txt"))).reason).toBe("PermissionDenied")
    expect((await rejection(root.stat("/etc/passwd"))).reason).toBe("BadArgument")
    expect((await rejection(root.stat("a/nope"))).code).toBe("ENOENT")
    expect((await rejection(root.stat("a/f.txt", { bigint: "yes" } as never))).reason).toBe("BadArgument")
    // The link itself is described, never what it names (Node's lstat agrees).
    expect((await root.stat("out")).isSymbolicLink()).toBe(true)
    root.close()
  })
})
