// The hot paths: call() for a single path-only read, readMany() for a batch in the compact encoding,
// and the buffers they recycle. Each must answer exactly what execute()/batch() answer, refuse what
// they refuse, and never hand one answer's bytes to another.
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { type PinnedFsError, PinnedRoot } from "../src/index.ts"
import { native } from "../src/internal/native.ts"
import { noTestHooks, testHooks, trips } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"

describe.each(strategies)("fast paths (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const files: Record<string, string> = { "d/sub/x.txt": "x", "empty.txt": "" }
    for (let i = 0; i < 64; i++) files[`f${i}.txt`] = `content ${i} `.repeat(i + 1)
    files["big.bin"] = "B".repeat(200 * 1024) // past the copy threshold: its own external Buffer
    s.make(files)
    fs.symlinkSync(s.secret, s.abs("link"))
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, root, files }
  }

  it("answers every member of a mixed batch as the single calls do, in one trip", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { root, files } = await setup()
    const start = trips()
    const out = await root.batch([
      { operation: "readFile", path: "f3.txt" },
      { operation: "readFile", path: "missing.txt" },
      { operation: "readFile", path: "link" },
      { operation: "readFile", path: "/etc/passwd" },
      { operation: "readFileString", path: "f5.txt" },
      { operation: "readFile", path: "empty.txt" },
      { operation: "readFile", path: "big.bin" },
      { operation: "exists", path: "d/sub/x.txt" },
      { operation: "stat", path: "f1.txt" },
      { operation: "readDirectory", path: "d", recursive: true },
      { operation: "readFile", path: "f4.txt" }
    ])
    expect(trips() - start).toBe(1)
    const value = (i: number) => {
      const e = out[i]!
      if (!e.ok) throw e.error
      return e.value
    }
    const reason = (i: number) => {
      const e = out[i]!
      expect(e.ok).toBe(false)
      return (e as { error: PinnedFsError }).error.reason
    }
    expect(Buffer.isBuffer(value(0))).toBe(true)
    expect((value(0) as Buffer).toString()).toBe(files["f3.txt"])
    expect(reason(1)).toBe("NotFound")
    expect(reason(2)).toBe("PermissionDenied")
    expect(reason(3)).toBe("BadArgument")
    expect(value(4)).toBe(files["f5.txt"])
    expect((value(5) as Buffer).length).toBe(0)
    expect((value(6) as Buffer).equals(Buffer.from(files["big.bin"]!))).toBe(true)
    expect(value(7)).toBe(true)
    expect((value(8) as { size: bigint }).size).toBe(BigInt(files["f1.txt"]!.length))
    expect([...(value(9) as Array<string>)].sort()).toEqual(["sub", "sub/x.txt"])
    expect((value(10) as Buffer).toString()).toBe(files["f4.txt"])
  })

  it("never mixes contents across members or across batches (recycled buffers)", async () => {
    const { root, files } = await setup()
    const names = Array.from({ length: 64 }, (_, i) => `f${i}.txt`)
    const kept: Array<Array<Buffer>> = []
    for (let round = 0; round < 3; round++) {
      const out = await root.batch(names.map((path) => ({ operation: "readFile" as const, path })))
      kept.push(out.map((e) => (e.ok ? (e.value as Buffer) : Buffer.from("failed"))))
    }
    const single = await Promise.all(names.map((n) => root.readFile(n)))
    for (const answers of [...kept, single]) {
      answers.forEach((b, i) => expect(b.toString()).toBe(files[names[i]!]))
    }
  })

  it("readMany: a malformed member fails alone; call refuses what is not a path-only read", async () => {
    const { root } = await setup()
    const ops = new Uint8Array([native.ops.readFile, native.ops.writeFile, native.ops.readFile, 255])
    const [failed, values] = await root.handle.readMany(
      ops,
      ["f1.txt", "f2.txt", 42 as unknown as string, "f3.txt"],
      new Uint8Array(4),
      256,
      1 << 20
    )
    expect([...failed]).toEqual([0, 1, 1, 1])
    expect((values[0] as Buffer).toString()).toBe("content 1 content 1 ")
    for (const i of [1, 2, 3]) expect((values[i] as { refusal: string }).refusal).toBe("badargument")
    const wrongOp = await root.handle.call(native.ops.writeFile, "f1.txt").then(
      () => undefined,
      (e: unknown) => e
    )
    expect((wrongOp as { refusal: string }).refusal).toBe("badargument")
    const nanOp = await root.handle.call(Number.NaN, "f1.txt").then(
      () => undefined,
      (e: unknown) => e
    )
    expect((nanOp as { refusal: string }).refusal).toBe("badargument")
    const limit = await root.handle.readMany(new Uint8Array(3), ["a", "b", "c"], new Uint8Array(3), 2, 1 << 20).then(
      () => undefined,
      (e: unknown) => e
    )
    expect((limit as { refusal: string }).refusal).toBe("badargument")
  })

  it("keeps the answer budget: a member past what is left fails alone with TooLarge", async () => {
    const { root } = await setup()
    const out = await root.batch(
      [
        { operation: "readFile", path: "f10.txt" },
        { operation: "readFile", path: "big.bin" },
        { operation: "readFile", path: "f2.txt" }
      ],
      { response: 1024 }
    )
    expect(out[0]!.ok).toBe(true)
    expect(out[1]!.ok).toBe(false)
    expect(out[2]!.ok).toBe(true)
  })
})
