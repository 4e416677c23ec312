import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { expectReason, harness, spellings } from "./support.ts"

const tree = { "a/b/file.txt": "hello", "top.txt": "top", "empty/": "", "latin.txt": "" }

describe.each(spellings)("fallback reads (%s root)", (spelling) => {
  const setup = async () => {
    const h = await harness(spelling, tree)
    fs.writeFileSync(h.s.abs("latin.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9])) // "café" in latin1
    fs.symlinkSync("a/b/file.txt", h.s.abs("link"))
    return h
  }

  it("exists: files, directories, the root, a trailing link; false only for missing names", async () => {
    const h = await setup()
    for (const p of ["a/b/file.txt", "a/b", "", "link", "a/b/"]) {
      expect(await h.run({ operation: "exists", path: h.at(p) })).toBe(true)
    }
    for (const p of ["nope", "a/nope/deeper"]) {
      expect(await h.run({ operation: "exists", path: h.at(p) })).toBe(false)
    }
    // As Effect's exists (and the native executor): a file used as a directory is an error.
    for (const p of ["top.txt/x", "top.txt/"]) {
      expectReason(await h.fail({ operation: "exists", path: `${h.base}/${p}` }), "BadResource")
    }
  })

  it("stat: the same File.Info as Effect's Node lstat, link described not followed", async () => {
    const h = await setup()
    const effectLstat = (p: string) =>
      Effect.runPromise(
        Effect.gen(function* () {
          const efs = yield* FileSystem.FileSystem
          return yield* efs.lstat(p)
        }).pipe(Effect.provide(NodeFileSystem.layer))
      )
    for (const p of ["a/b/file.txt", "a", "link", ""]) {
      const ours = await h.run({ operation: "stat", path: h.at(p) })
      expect(ours).toEqual(await effectLstat(h.canonical(p)))
    }
    const info = await h.run<FileSystem.File.Info>({ operation: "stat", path: h.at("link") })
    expect(info.type).toBe("SymbolicLink")
  })

  it("readFile answers a plain Uint8Array of the bytes", async () => {
    const h = await setup()
    const bytes = await h.run<Uint8Array>({ operation: "readFile", path: h.at("a/b/file.txt") })
    expect(bytes).toBeInstanceOf(Uint8Array)
    expect(Buffer.from(bytes).toString()).toBe("hello")
    expect(await h.run({ operation: "readFile", path: h.at("a/b/../b/file.txt") })).toEqual(bytes)
  })

  it("readFileString decodes with TextDecoder: encodings, U+FFFD, an unknown encoding is BadArgument", async () => {
    const h = await setup()
    expect(await h.run({ operation: "readFileString", path: h.at("top.txt") })).toBe("top")
    expect(await h.run({ operation: "readFileString", path: h.at("latin.txt"), encoding: "latin1" })).toBe("café")
    expect(await h.run({ operation: "readFileString", path: h.at("latin.txt") })).toBe("caf\uFFFD")
    expectReason(
      await h.fail({ operation: "readFileString", path: h.at("top.txt"), encoding: "no-such-encoding" }),
      "BadArgument",
      /encoding/
    )
  })

  it("readFile of a directory or a missing file fails with Effect's tags", async () => {
    const h = await setup()
    expectReason(await h.fail({ operation: "readFile", path: h.at("a") }), "BadResource")
    expectReason(await h.fail({ operation: "readFile", path: h.at("nope") }), "NotFound")
    expectReason(await h.fail({ operation: "readFile", path: h.at("nope/x") }), "NotFound")
    expectReason(await h.fail({ operation: "readFile", path: h.at("top.txt/x") }), "BadResource")
  })

  it("readDirectory: names, recursive paths, never through a link", async () => {
    const h = await setup()
    fs.symlinkSync(h.s.outside, h.s.abs("a/out"))
    const names = await h.run<Array<string>>({ operation: "readDirectory", path: h.at("") })
    expect(names.sort()).toEqual(["a", "empty", "latin.txt", "link", "top.txt"])
    const deep = await h.run<Array<string>>({ operation: "readDirectory", path: h.at("a"), options: { recursive: true } })
    expect(deep.sort()).toEqual(["b", "b/file.txt", "out"])
    expect(await h.run({ operation: "readDirectory", path: h.at("empty") })).toEqual([])
    expectReason(await h.fail({ operation: "readDirectory", path: h.at("top.txt") }), "BadResource")
    expectReason(await h.fail({ operation: "readDirectory", path: h.at("a/out") }), "PermissionDenied", /symbolic link/)
  })

  it("readDirectory bounds the recursion depth as the native listing does", async () => {
    const h = await setup()
    const chain = (top: string, levels: number) => fs.mkdirSync(`${top}/${Array(levels).fill("d").join("/")}`, { recursive: true })
    chain(h.s.abs("ok"), 256)
    expect(await h.run<Array<string>>({ operation: "readDirectory", path: h.at("ok"), options: { recursive: true } })).toHaveLength(256)
    chain(h.s.abs("deep"), 257)
    expectReason(await h.fail({ operation: "readDirectory", path: h.at("deep"), options: { recursive: true } }), "BadArgument", /256/)
    expect(await h.run({ operation: "readDirectory", path: h.at("deep") })).toEqual(["d"])
  })

  it("readLink answers the link text; a non-link is not a link", async () => {
    const h = await setup()
    expectReason(await h.fail({ operation: "readLink", path: h.at("") }), "Unknown")
    expect(await h.run({ operation: "readLink", path: h.at("link") })).toBe("a/b/file.txt")
    expectReason(await h.fail({ operation: "readLink", path: h.at("top.txt") }), "Unknown")
    expectReason(await h.fail({ operation: "readLink", path: h.at("nope") }), "NotFound")
  })

  it("realPath answers the canonical path, in the boundary spelling, and refuses a link", async () => {
    const h = await setup()
    expect(await h.run({ operation: "realPath", path: h.at("a/./b/../b/file.txt") })).toBe(h.canonical("a/b/file.txt"))
    expect(await h.run({ operation: "realPath", path: h.at("") })).toBe(h.canonical(""))
    expectReason(await h.fail({ operation: "realPath", path: h.at("link") }), "PermissionDenied", /symbolic link/)
    expectReason(await h.fail({ operation: "realPath", path: h.at("nope") }), "NotFound")
  })
})
