/**
 * The read limit's settings and refusals, in process (huge-files.test.ts runs the sizes that would
 * have aborted the process, in children): per root at open, per call, per batch member, through the
 * extension's contentLimit; bad limits are BadArgument; a call that would copy more text out of
 * JavaScript than one call may carry is refused before it is copied.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { failure, host, ok, tagOf, workspace } from "../effect/support.ts"

const refusedTooLarge = async (p: Promise<unknown>, description: RegExp): Promise<void> => {
  const e = await p.then(
    () => null,
    (x: unknown) => x
  )
  expect(e).toBeInstanceOf(PinnedFsError)
  expect((e as PinnedFsError).reason).toBe("BadArgument")
  expect((e as PinnedFsError).refusal).toBe("toolarge")
  expect((e as PinnedFsError).code).toBe("EFBIG")
  expect((e as PinnedFsError).description).toMatch(description)
}

describe.each(strategies)("read limits (%s)", (strategy) => {
  it("holds a root to its readLimit, a call to its own limit, a batch member to the root's", async () => {
    const s = scratch()
    s.make({ "eleven.txt": "eleven byte", "ten.txt": "ten bytes!" })
    const root = await PinnedRoot.open(s.root, { strategy, readLimit: 10 })
    try {
      expect(root.readLimit).toBe(10)
      expect((await root.readFile("ten.txt")).toString()).toBe("ten bytes!")
      await refusedTooLarge(root.readFile("eleven.txt"), /file of 11 bytes exceeds the read limit of 10 bytes/)
      await refusedTooLarge(root.readFileString("eleven.txt"), /read limit of 10 bytes/)
      // Per call, either way.
      expect(await root.readFileString("eleven.txt", { limit: 11 })).toBe("eleven byte")
      expect(await root.readFileString("eleven.txt", { encoding: "utf-8", limit: 11 })).toBe("eleven byte")
      await refusedTooLarge(root.readFile("ten.txt", { limit: 9 }), /read limit of 9 bytes/)
      const [a, b] = await root.batch([
        { operation: "readFile", path: "ten.txt" },
        { operation: "readFileString", path: "eleven.txt" }
      ])
      expect(a!.ok).toBe(true)
      expect(b!.ok).toBe(false)
      if (!b!.ok) expect(b!.error.refusal).toBe("toolarge")
    } finally {
      root.close()
    }
    const plain = await PinnedRoot.open(s.root, { strategy })
    expect(plain.readLimit).toBe(PinnedRoot.defaultReadLimit)
    expect(PinnedRoot.defaultReadLimit).toBe(512 * 1024 * 1024)
    expect(PinnedRoot.maxReadLimit).toBe(2 ** 31 - 1)
    plain.close()
  })

  it("reads a large content whole and exactly, either side of the size that asks for huge pages", async () => {
    // A content of 8 MiB or more is read into a buffer advised for huge pages (native/ops/read.cc):
    // the advice must change no byte, at the threshold, around it, and off a 2 MiB boundary.
    const s = scratch()
    const sizes = [(8 << 20) - 1, 8 << 20, (8 << 20) + 1, (9 << 20) + 12345]
    const contents = sizes.map((n, k) => {
      const b = Buffer.alloc(n, k + 1)
      for (let i = 0; i + 4 <= n; i += 4093) b.writeUInt32LE((i * 2654435761 + k) >>> 0, i)
      b[n - 1] = 0x5a
      return b
    })
    for (const [k, b] of contents.entries()) fs.writeFileSync(path.join(s.root, `big${k}.bin`), b)
    const root = await PinnedRoot.open(s.root, { strategy })
    try {
      for (const [k, b] of contents.entries()) expect((await root.readFile(`big${k}.bin`)).equals(b)).toBe(true)
    } finally {
      root.close()
    }
  })

  it("refuses limits that are not integers from 1 to 2 GiB - 1", async () => {
    const s = scratch()
    s.make({ "f.txt": "f" })
    for (const bad of [0, -1, 1.5, NaN, 2 ** 31, "10", null]) {
      const e = await PinnedRoot.open(s.root, { strategy, readLimit: bad as number }).then(
        () => null,
        (x: unknown) => x
      )
      expect((e as PinnedFsError).reason, String(bad)).toBe("BadArgument")
    }
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const bad of [0, -1, 1.5, 2 ** 31, "10"]) {
      const e = await root.readFile("f.txt", { limit: bad as number }).then(
        () => null,
        (x: unknown) => x
      )
      expect((e as PinnedFsError).reason, String(bad)).toBe("BadArgument")
    }
    // Straight at the addon: out-of-range limits are BadArgument there too.
    for (const bad of [0, -1, 2 ** 31, NaN, "1"]) {
      const e = await root.handle.call(2, "f.txt", false, bad as number).then(
        () => null,
        (x: { refusal: string }) => x
      )
      expect(e?.refusal, String(bad)).toBe("badargument")
    }
    root.close()
  })

  it("refuses a call that would copy more than 64 MiB of text out of JavaScript", async () => {
    const s = scratch()
    const root = await PinnedRoot.open(s.root, { strategy })
    // One 1 MiB string referenced 100 times: 100 MiB of copies from 1 MiB of JavaScript memory.
    const piece = "x".repeat(1 << 20)
    const e = await root.glob("*", { exclude: Array.from({ length: 100 }, () => piece) }).then(
      () => null,
      (x: unknown) => x
    )
    expect((e as PinnedFsError).reason).toBe("BadArgument")
    expect((e as PinnedFsError).description).toMatch(/exceeds what one call may carry/)
    root.close()
  })

  it("holds the extension's reads to contentLimit: execute, readMany-backed and general batches", async () => {
    const w = workspace({ "ten.txt": "ten bytes!", "nine.txt": "nine byte" })
    const extension = NodeAtomicFileSystem.make({ strategy, contentLimit: 9 })
    const h = host(extension)
    try {
      expect(await ok(h, w.req("readFileString", { path: w.l("nine.txt") }))).toBe("nine byte")
      const e = await failure(h, w.req("readFile", { path: w.l("ten.txt") }))
      expect(e.reason._tag).toBe("BadArgument")
      expect((e.reason as { cause?: { refusal?: string } }).cause?.refusal).toBe("toolarge")
      const members = [
        { operation: "readFile", path: w.l("ten.txt") },
        { operation: "readFileString", path: w.l("nine.txt") }
      ]
      for (const requests of [members, [...members, { operation: "glob", path: w.l("*.none"), root: w.l("") }]]) {
        const answer = await ok(h, w.req("batch", { requests }))
        expect(answer.entries.slice(0, 2).map((x: { result: never }) => tagOf(x.result))).toEqual(["BadArgument", "ok"])
      }
      const exit = await Effect.runPromiseExit(h.execute(w.req("readFileString", { path: w.l("ten.txt") })))
      expect(Exit.isFailure(exit)).toBe(true)
    } finally {
      extension.close()
    }
  })
})
