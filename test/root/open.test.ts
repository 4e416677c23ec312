/**
 * PinnedRoot.open: a file handle whose descriptor was opened beneath the root. Every refusal is
 * paired with its positive control (the same path through node:fs reaches outside), and every
 * happy path is compared with node:fs/promises' FileHandle on a twin tree.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import * as v8 from "node:v8"
import * as vm from "node:vm"
import { describe, expect, it } from "vitest"
import { PinnedFileHandle, PinnedRoot } from "../../src/index.ts"
import { native } from "../../src/internal/native.ts"
import { raceRounds, tally } from "../support/attacker.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, openDescriptorCount, scratch } from "../support/tree.ts"

const setup = async (strategy: "openat2" | "walk") => {
  const s = scratch()
  const spec = { "a/b/file.txt": "hello world", "top.txt": "top", "d/": "" }
  s.make(spec)
  // The twin: the same tree, acted on by node:fs/promises.
  const twin = `${path.dirname(s.root)}/twin`
  fs.mkdirSync(twin)
  for (const [name, content] of Object.entries(spec)) {
    if (name.endsWith("/")) fs.mkdirSync(path.join(twin, name), { recursive: true })
    else {
      fs.mkdirSync(path.dirname(path.join(twin, name)), { recursive: true })
      fs.writeFileSync(path.join(twin, name), content)
    }
  }
  const root = await PinnedRoot.open(s.root, { strategy })
  expect(root.strategy).toBe(strategy)
  return { s, twin, root }
}

describe.each(strategies)("PinnedRoot.open (%s)", (strategy) => {
  it("reads, writes, stats, truncates and syncs as fs.promises' FileHandle does", async () => {
    const { s, twin, root } = await setup(strategy)
    const before = openDescriptorCount()
    for (const flags of ["r", "r+", "w", "wx", "a", "ax"] as const) {
      const name = flags.includes("x") ? `new-${flags}.txt` : "a/b/file.txt"
      const mine = await root.open(name, flags, 0o640)
      const theirs = await fsp.open(path.join(twin, name), flags, 0o640)
      try {
        if (flags === "r" || flags === "r+") {
          const a = await mine.read(Buffer.alloc(5), 0, 5, 6)
          const b = await theirs.read(Buffer.alloc(5), 0, 5, 6)
          expect(a.bytesRead).toBe(b.bytesRead)
          expect(a.buffer.toString()).toBe(b.buffer.toString())
          expect(await mine.readFile({ encoding: "utf8" })).toBe(await theirs.readFile({ encoding: "utf8" }))
        }
        if (flags !== "r") {
          await mine.write("abc")
          await theirs.write("abc")
          await mine.writeFile(Buffer.from("def"))
          await theirs.writeFile(Buffer.from("def"))
          await mine.sync()
          await theirs.sync()
          await mine.datasync()
          await theirs.datasync()
        } else {
          expect((await rejection(mine.write("x"))).code).toBe("EBADF")
        }
        const si = await mine.stat({ bigint: true })
        const st = await theirs.stat({ bigint: true })
        expect(si.type).toBe("File")
        expect(si.isFile()).toBe(true)
        expect(si.size).toBe(st.size)
        expect(si.nlink).toBe(1n)
        expect(si.mode).toBe(st.mode)
        expect(si.ino).toBe((await fsp.stat(s.abs(name), { bigint: true })).ino)
        const plain = await mine.stat()
        expect(plain.size).toBe(Number(st.size))
      } finally {
        await mine.close()
        await theirs.close()
      }
      expect(fs.readFileSync(s.abs(name), "utf8")).toBe(fs.readFileSync(path.join(twin, name), "utf8"))
      expect(fs.statSync(s.abs(name)).mode).toBe(fs.statSync(path.join(twin, name)).mode)
    }
    const t = await root.open("top.txt", "r+")
    await t.truncate(1)
    await t.truncate(4)
    await t.close()
    expect(fs.readFileSync(s.abs("top.txt"))).toEqual(Buffer.from("t\0\0\0"))
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("is refused anywhere a link is, a hard-linked file, a FIFO, a directory and above the root", async () => {
    const { s, root } = await setup(strategy)
    fs.symlinkSync(s.secret, s.abs("leaf"))
    fs.symlinkSync(s.outside, s.abs("linkdir"))
    fs.symlinkSync("b", s.abs("a/inner"))
    fs.linkSync(s.secret, s.abs("hard"))
    mkfifo(s.abs("fifo"))
    const name = path.basename(s.outside)
    // Positive controls: node:fs follows each of these out of the root.
    expect(fs.readFileSync(s.abs("leaf"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("linkdir/secret.txt"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("hard"), "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(path.join(s.root, "..", name, "secret.txt"), "utf8")).toBe("TOP SECRET")
    const before = openDescriptorCount()
    for (const flags of ["r", "r+", "w", "a"] as const) {
      for (const [p, refusal, reason] of [
        ["leaf", "symlink", "PermissionDenied"],
        ["linkdir/secret.txt", "symlink", "PermissionDenied"],
        ["a/inner/file.txt", "symlink", "PermissionDenied"],
        ["hard", "hardlink", "PermissionDenied"],
        ["fifo", "notregular", "BadResource"],
        [`../${name}/secret.txt`, "escape", "PermissionDenied"],
        [`a/../../${name}/secret.txt`, "escape", "PermissionDenied"]
      ] as const) {
        const e = await rejection(root.open(p, flags))
        expect({ p, flags, refusal: e.refusal, reason: e.reason, path: e.path }).toEqual({ p, flags, refusal, reason, path: p })
      }
      const dir = await rejection(root.open("d", flags))
      expect(dir.code).toBe("EISDIR")
    }
    // `w` truncated nothing it refused, and the links are still links.
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.lstatSync(s.abs("leaf")).isSymbolicLink()).toBe(true)
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("refuses bad input with a typed error", async () => {
    const { s, root } = await setup(strategy)
    for (const flags of ["w+", "a+", "rs", "", "x"]) {
      const e = await rejection(root.open("top.txt", flags as "r"))
      expect(e.reason).toBe("BadArgument")
    }
    expect((await rejection(root.open(42 as unknown as string))).reason).toBe("BadArgument")
    expect((await rejection(root.open(s.abs("top.txt")))).reason).toBe("BadArgument")
    expect((await rejection(root.open("top.txt", "r", -1))).reason).toBe("BadArgument")
    expect((await rejection(root.open("top\0.txt"))).reason).toBe("BadArgument")
    const h = await root.open("top.txt", "r+")
    expect((await rejection(h.read(Buffer.alloc(4), -1))).reason).toBe("BadArgument")
    expect((await rejection(h.read(Buffer.alloc(4), 0, 5))).reason).toBe("BadArgument")
    expect((await rejection(h.read(Buffer.alloc(4), 0, 4, -3))).reason).toBe("BadArgument")
    expect((await rejection(h.truncate(-1))).reason).toBe("BadArgument")
    expect((await rejection(h.write(7 as unknown as string))).reason).toBe("BadArgument")
    await h.close()
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
    root.close()
  })

  it("refuses every call once closed, closes once, and closing the root closes its handles", async () => {
    const { root } = await setup(strategy)
    const before = openDescriptorCount()
    const h = await root.open("top.txt")
    const fd = h.fd
    expect(fd).toBeGreaterThan(2)
    // A read in flight when close() is called finishes first, on the descriptor it started on.
    const reading = h.read(Buffer.alloc(3), 0, 3, 0)
    const closing = h.close()
    expect((await reading).buffer.toString()).toBe("top")
    await closing
    await h.close()
    expect(h.fd).toBe(-1)
    expect((await rejection(h.read())).code).toBe("EBADF")
    expect((await rejection(h.stat())).code).toBe("EBADF")
    const a = await root.open("top.txt")
    const b = await root.open("a/b/file.txt", "r+")
    expect(openDescriptorCount()).toBe(before + 2)
    root.close()
    expect((await rejection(a.read())).code).toBe("EBADF")
    expect((await rejection(b.write("x"))).code).toBe("EBADF")
    // root.close() is synchronous and starts the handles' closes; each handle's close() is the
    // promise of its own.
    await Promise.all([a.close(), b.close()])
    // The root's own descriptor went with it.
    expect(openDescriptorCount()).toBe(before - 1)
    expect((await rejection(root.open("top.txt"))).code).toBe("EBADF")
  })

  it("works with await using, and a handle the collector finds unreachable closes its descriptor", async () => {
    const { root } = await setup(strategy)
    const before = openDescriptorCount()
    {
      await using h = await root.open("top.txt")
      expect(h).toBeInstanceOf(PinnedFileHandle)
      expect(openDescriptorCount()).toBe(before + 1)
    }
    expect(openDescriptorCount()).toBe(before)
    // The collector, exposed from inside the process (no flag on the runner's command line).
    v8.setFlagsFromString("--expose-gc")
    const gc = vm.runInNewContext("gc") as () => void
    await (async () => {
      await root.open("top.txt")
    })()
    expect(openDescriptorCount()).toBe(before + 1)
    for (let i = 0; i < 50 && openDescriptorCount() > before; i++) {
      gc()
      await new Promise((r) => setImmediate(r))
    }
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("acts on the pinned directory after the root path is replaced, and is refused when asked to verify", async () => {
    const { s, root } = await setup(strategy)
    const moved = `${s.root}-moved`
    fs.renameSync(s.root, moved)
    fs.mkdirSync(s.root)
    fs.writeFileSync(path.join(s.root, "top.txt"), "impostor")
    try {
      const e = await root.handle.open({ op: native.ops.open, path: "top.txt", flag: native.flags.r }, true).then(
        () => undefined,
        (u: unknown) => u
      )
      expect(e).toMatchObject({ refusal: "identity" })
      const h = await root.open("top.txt")
      expect(await h.readFile({ encoding: "utf8" })).toBe("top")
      await h.close()
    } finally {
      root.close()
      fs.rmSync(moved, { recursive: true, force: true })
    }
  })

  it("a directory moved out of the root is no longer reachable through it", async () => {
    const { s, root } = await setup(strategy)
    // Control: the moved directory's file is still there, through its new name outside.
    fs.renameSync(s.abs("a"), path.join(s.outside, "a"))
    expect(fs.readFileSync(path.join(s.outside, "a/b/file.txt"), "utf8")).toBe("hello world")
    expect((await rejection(root.open("a/b/file.txt"))).reason).toBe("NotFound")
    expect((await rejection(root.open("a/b/file.txt", "w"))).reason).toBe("NotFound")
    expect(fs.readFileSync(path.join(s.outside, "a/b/file.txt"), "utf8")).toBe("hello world")
    root.close()
  })
})

describe("PinnedRoot.open's native call", () => {
  it("answers malformed requests with a typed refusal, opening nothing", async () => {
    const { s, root } = await setup(strategies[0]!)
    const before = openDescriptorCount()
    const open = native.ops.open
    const bad: Array<unknown> = [
      null,
      42,
      [],
      {},
      { op: open },
      { op: open, path: 5 },
      { op: open, path: "top.txt", flag: 99 },
      { op: open, path: "top.txt", flag: native.flags["w+"] },
      { op: open, path: "top.txt", flag: native.flags.w, mode: 0o10000 },
      { op: native.ops.readFile, path: "top.txt" },
      {
        op: open,
        path: "top.txt",
        flag: native.flags.r,
        get mode() {
          throw new Error("a getter that throws")
        }
      }
    ]
    for (const request of bad) {
      const e = await root.handle.open(request as never).then(
        (fd: number) => ({ fd }),
        (u: unknown) => u
      )
      expect(e).toMatchObject({ refusal: "badargument" })
    }
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
    expect(openDescriptorCount()).toBe(before)
    root.close()
  }, 45_000)
})

describe("PinnedRoot.open ops table", () => {
  it("is not an execute() or batch operation (the descriptor would be lost)", async () => {
    const { root } = await setup(strategies[0]!)
    const e = await root.handle.execute({ op: native.ops.open, path: "top.txt", flag: native.flags.r }).then(
      () => undefined,
      (u: unknown) => u
    )
    expect(e).toMatchObject({ refusal: "badargument" })
    root.close()
  })
})

describe.each(strategies)("PinnedRoot.open under a swap race (%s)", (strategy) => {
  // The attacker exchanges, with RENAME_EXCHANGE, a parent directory with a link to an outside
  // directory, and the leaf file with a hard link to an outside file, while each round opens and
  // reads through the contested name. The control (node:fs, the same name, the same attacker) must
  // reach outside at least once, so the attack was live; pinnedfs must never.
  const cases = [
    [
      "a parent swapped with a link",
      (s: ReturnType<typeof scratch>) => {
        fs.mkdirSync(path.join(s.outside, "o"))
        fs.writeFileSync(path.join(s.outside, "o/f.txt"), "TOP SECRET")
        fs.symlinkSync(path.join(s.outside, "o"), s.abs("swap"))
        return { pair: [s.abs("d"), s.abs("swap")] as const, name: "d/f.txt" }
      }
    ],
    [
      "the leaf swapped with a link",
      (s: ReturnType<typeof scratch>) => {
        fs.symlinkSync(s.secret, s.abs("swap"))
        return { pair: [s.abs("d/f.txt"), s.abs("swap")] as const, name: "d/f.txt" }
      }
    ],
    [
      "the leaf swapped with a hard link",
      (s: ReturnType<typeof scratch>) => {
        fs.linkSync(s.secret, s.abs("swap"))
        return { pair: [s.abs("d/f.txt"), s.abs("swap")] as const, name: "d/f.txt" }
      }
    ]
  ] as const
  it.each(cases)(
    "%s",
    async (_name, plant) => {
      const s = scratch()
      s.make({ "d/f.txt": "inside" })
      const { pair, name } = plant(s)
      const root = await PinnedRoot.open(s.root, { strategy })
      const before = openDescriptorCount()
      const bounds = { pairs: [pair], maxRounds: 300, maxMs: 8_000, reset: () => {} }
      // The control only has to show the attack is live: it may take many more rounds, on a loaded
      // machine, and stops at its first escape.
      const control = await raceRounds({
        ...bounds,
        maxRounds: 20_000,
        maxMs: 15_000,
        until: (a: string) => a === "TOP SECRET",
        round: (): Promise<string> =>
          fsp.readFile(s.abs(name), { encoding: "utf8" }).catch((e: NodeJS.ErrnoException) => e.code ?? "error"),
        inspect: (r) => r
      })
      const controlSeen = JSON.stringify({ swaps: control.swaps, answers: tally(control.answers) })
      expect(control.swaps, controlSeen).toBeGreaterThan(0)
      expect(tally(control.answers)["TOP SECRET"] ?? 0, controlSeen).toBeGreaterThan(0)
      const race = await raceRounds({
        ...bounds,
        round: async () => {
          try {
            const h = await root.open(name, "r+")
            try {
              return await h.readFile({ encoding: "utf8" })
            } finally {
              await h.close()
            }
          } catch (e) {
            return `refused ${(e as { refusal?: string }).refusal ?? "?"} ${(e as { code?: string }).code ?? "?"}`
          }
        },
        inspect: (r) => r
      })
      const seen = tally(race.answers)
      expect(race.swaps, JSON.stringify(seen)).toBeGreaterThan(0)
      expect(seen["TOP SECRET"]).toBeUndefined()
      // Every answer is the inside file or a failure the attack explains. ENOTDIR: under the walk, a
      // component found as a link by O_DIRECTORY|O_NOFOLLOW, exchanged back before the failure could
      // be explained as one; the open failed, nothing was reached.
      const explained = ["inside", "refused symlink ELOOP", "refused hardlink EPERM", "refused  ENOENT", "refused  ENOTDIR"]
      expect(
        Object.keys(seen).filter((answer) => !explained.includes(answer)),
        JSON.stringify(seen)
      ).toEqual([])
      expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
      expect(openDescriptorCount()).toBe(before)
      root.close()
    },
    45_000
  )
})
