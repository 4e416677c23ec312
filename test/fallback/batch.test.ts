import { Result } from "effect"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import type { AtomicBatchResponse } from "../../src/protocol/wire.ts"
import { expectReason, harness, spellings } from "./support.ts"

describe.each(spellings)("fallback batch (%s root)", (spelling) => {
  const setup = (options?: Parameters<typeof harness>[2]) =>
    harness(spelling, { "a.txt": "aaaa", "b.txt": "bbbb", "dir/c.txt": "c" }, options)

  it("answers every member in order, each with its own Result, one missing file failing alone", async () => {
    const h = await setup()
    fs.symlinkSync(h.s.outside, h.s.abs("out"))
    const answer = await h.run<AtomicBatchResponse>({
      operation: "batch",
      requests: [
        { operation: "readFile", path: h.at("a.txt") },
        { operation: "readFileString", path: h.at("missing.txt") },
        { operation: "readFileString", path: h.at("b.txt") },
        { operation: "exists", path: h.at("dir/c.txt") },
        { operation: "stat", path: h.at("dir") },
        { operation: "readDirectory", path: h.at("dir") },
        { operation: "readLink", path: h.at("out") },
        { operation: "realPath", path: h.at("dir/c.txt") },
        { operation: "resolve", path: h.at("out/secret.txt") },
        { operation: "readFile", path: h.at("out/secret.txt") }
      ]
    })
    expect(answer.rootIdentity).toBe(h.triple.rootIdentity)
    expect(answer.entries.map((e) => e.index)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9])
    expect(answer.entries[1]!.path).toBe(h.at("missing.txt"))
    const [a, missing, b, exists, stat, dir, link, real, resolved, refused] = answer.entries.map((e) => e.result)
    expect(Result.getOrThrow(a!)).toEqual({ operation: "readFile", value: new Uint8Array(Buffer.from("aaaa")) })
    expect(Result.isFailure(missing!) && missing.failure.reason._tag).toBe("NotFound")
    expect(Result.getOrThrow(b!)).toEqual({ operation: "readFileString", value: "bbbb" })
    expect(Result.getOrThrow(exists!)).toEqual({ operation: "exists", value: true })
    expect((Result.getOrThrow(stat!) as { value: { type: string } }).value.type).toBe("Directory")
    expect(Result.getOrThrow(dir!)).toEqual({ operation: "readDirectory", value: ["c.txt"] })
    expect(Result.getOrThrow(link!)).toEqual({ operation: "readLink", value: h.s.outside })
    expect(Result.getOrThrow(real!)).toEqual({ operation: "realPath", value: h.canonical("dir/c.txt") })
    expect(Result.getOrThrow(resolved!)).toEqual({
      operation: "resolve",
      resolution: { path: h.canonical("out"), target: h.s.outside }
    })
    expect(Result.isFailure(refused!) && refused.failure.reason._tag).toBe("PermissionDenied")
  })

  it("runs glob members, the pinnedfs extension the native executor also takes", async () => {
    const h = await setup()
    const answer = await h.run<AtomicBatchResponse>({
      operation: "batch",
      requests: [
        { operation: "glob", path: h.at("*.txt"), root: h.base },
        { operation: "glob", path: `${h.s.outside}/*`, root: h.base },
        { operation: "glob", path: "relative/*", root: h.base }
      ]
    })
    const [txt, outside, relative] = answer.entries.map((e) => e.result)
    expect(txt).toEqual(Result.succeed({ operation: "glob", value: [h.at("a.txt"), h.at("b.txt")] }))
    expect(Result.isFailure(outside!) && outside.failure.reason._tag).toBe("PermissionDenied")
    expect(Result.isFailure(relative!) && relative.failure.reason._tag).toBe("BadArgument")
  })

  it("fails a member alone when its content would pass the response budget", async () => {
    const h = await setup({ batchLimits: { size: 8, response: 6 } })
    const answer = await h.run<AtomicBatchResponse>({
      operation: "batch",
      requests: [
        { operation: "readFile", path: h.at("a.txt") },
        { operation: "readFile", path: h.at("b.txt") },
        { operation: "readFileString", path: h.at("dir/c.txt") }
      ]
    })
    const [a, b, c] = answer.entries.map((e) => e.result)
    expect(Result.isSuccess(a!)).toBe(true)
    expect(Result.isFailure(b!) && b.failure.reason._tag).toBe("BadArgument")
    expect(Result.getOrThrow(c!)).toEqual({ operation: "readFileString", value: "c" })
  })

  it("refuses a batch over the size limit as a whole, and a non-read member alone", async () => {
    const h = await setup({ batchLimits: { size: 2, response: 1024 } })
    expect(h.extension.batchLimits).toEqual({ size: 2, response: 1024 })
    const member = { operation: "exists", path: h.at("a.txt") }
    expectReason(await h.fail({ operation: "batch", requests: [member, member, member] }), "BadArgument", /limit/)
    expectReason(await h.fail({ operation: "batch", requests: "nope" }), "BadArgument")
    const answer = await h.run<AtomicBatchResponse>({
      operation: "batch",
      requests: [{ operation: "writeFileString", path: h.at("a.txt"), data: "x" }, null]
    })
    for (const e of answer.entries) expect(Result.isFailure(e.result) && e.result.failure.reason._tag).toBe("BadArgument")
    expect(fs.readFileSync(h.s.abs("a.txt"), "utf8")).toBe("aaaa")
    expect(await h.run({ operation: "batch", requests: [] })).toEqual({ rootIdentity: h.triple.rootIdentity, entries: [] })
  })
})
