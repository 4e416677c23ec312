import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { AtomicFileSystemTypeId, type AtomicHostFileSystem } from "../../src/protocol/wire.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { scratch } from "../support/tree.ts"
import { expectReason, harness } from "./support.ts"

describe("fallback malformed requests", () => {
  it("fails with BadArgument, never a defect", async () => {
    const h = await harness("boundary", { "a.txt": "a" })
    const bad: Array<{ operation: string } & Record<string, unknown>> = [
      { operation: "nope", path: h.at("a.txt") },
      { operation: "readFile" },
      { operation: "readFile", path: 42 },
      { operation: "readFile", path: `${h.at("a.txt")}\0x` },
      { operation: "readFile", path: "a.txt" },
      { operation: "readFile", path: h.at("x".repeat(256)) },
      { operation: "readFile", path: h.at("x/".repeat(2100)) },
      { operation: "rename", from: h.at("a.txt") },
      { operation: "makeDirectory", path: h.at("d"), options: { mode: -1 } },
      { operation: "makeDirectory", path: h.at("d"), options: { recursive: "yes" } },
      { operation: "writeFile", path: h.at("w"), data: 7 },
      { operation: "writeFile", path: h.at("w"), data: "", options: { flag: "rw" } },
      { operation: "readFileString", path: h.at("a.txt"), encoding: 5 },
      { operation: "readFileString", path: h.at("missing"), encoding: "klingon" },
      { operation: "glob", pattern: h.at("*"), root: h.base, options: { exclude: ["\0"] } },
      { operation: "glob", pattern: h.at("*\0"), root: h.base }
    ]
    for (const request of bad) expectReason(await h.fail(request), "BadArgument")
    const exit = await Effect.runPromise(Effect.flip(h.extension.execute(null as never)))
    expectReason(exit, "BadArgument")
  })

  it("requires the root triple", async () => {
    const h = await harness("boundary", { "a.txt": "a" })
    const path = h.at("a.txt")
    const send = (request: Record<string, unknown>) => Effect.runPromise(Effect.flip(h.extension.execute(request as never)))
    expectReason(await send({ operation: "readFile", path }), "BadArgument")
    expectReason(await send({ operation: "readFile", path, boundaryRoot: h.base }), "BadArgument")
    expectReason(await send({ operation: "readFile", path, boundaryRoot: "rel", rootIdentity: h.triple.rootIdentity }), "BadArgument")
    expectReason(await send({ operation: "readFile", path, boundaryRoot: h.base, rootIdentity: 7 }), "BadArgument")
  })
})

describe("fallback identifyRoot", () => {
  it("answers the exact dev:ino and birth time of the directory a path names, through a link too", async () => {
    const s = scratch()
    const extension = PathAtomicFileSystem.make()
    const st = fs.statSync(s.root, { bigint: true })
    const birth = `${st.birthtimeNs / 10n ** 9n}.${String(st.birthtimeNs % 10n ** 9n).padStart(9, "0")}`
    const expected = `${BigInt.asUintN(64, st.dev)}:${BigInt.asUintN(64, st.ino)}:b${birth}`
    expect(await Effect.runPromise(extension.identifyRoot!(s.root))).toBe(expected)
    const link = path.join(s.outside, "to-root")
    fs.symlinkSync(s.root, link)
    expect(await Effect.runPromise(extension.identifyRoot!(link))).toBe(expected)
    expectReason(await Effect.runPromise(Effect.flip(extension.identifyRoot!(s.secret))), "BadResource")
    expectReason(await Effect.runPromise(Effect.flip(extension.identifyRoot!(`${s.root}-none`))), "NotFound")
    expectReason(await Effect.runPromise(Effect.flip(extension.identifyRoot!("relative"))), "BadArgument")
  })

  it("advertises its limits, and no no-follow authorization (it pins no root handle)", () => {
    const extension = PathAtomicFileSystem.make()
    expect(extension.noFollowAuthorization).toBeUndefined()
    expect(extension.batchLimits).toEqual(PathAtomicFileSystem.defaults.batchLimits)
    expect(extension.contentLimit).toBe(PathAtomicFileSystem.defaults.contentLimit)
  })
})

describe("fallback layer", () => {
  it("attaches the extension to a copy of Node's FileSystem, which keeps working as before", async () => {
    const s = scratch()
    fs.writeFileSync(s.abs("a.txt"), "via layer")
    const service = Effect.gen(function* () {
      return yield* FileSystem.FileSystem
    })
    const withExtension = await Effect.runPromise(Effect.provide(service, PathAtomicFileSystem.layer))
    const plain = await Effect.runPromise(Effect.provide(service, NodeFileSystem.layer))
    const atomic = (withExtension as AtomicHostFileSystem)[AtomicFileSystemTypeId]
    expect(atomic.noFollowAuthorization).toBeUndefined()
    expect(AtomicFileSystemTypeId in plain).toBe(false)
    expect(await Effect.runPromise(withExtension.readFileString(s.abs("a.txt")))).toBe("via layer")
    const rootIdentity = await Effect.runPromise(atomic.identifyRoot!(s.root))
    const text = await Effect.runPromise(
      atomic.execute({ operation: "readFileString", path: s.abs("a.txt"), boundaryRoot: s.root, logicalRoot: s.root, rootIdentity })
    )
    expect(text).toBe("via layer")
  })
})
