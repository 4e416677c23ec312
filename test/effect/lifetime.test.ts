/**
 * Lifetime of what the extension holds: pinned roots are cached, bounded, and closed when evicted
 * or when the extension (or the layer that made it) is closed; thousands of operations, failing or
 * not, leave the descriptor count where it was. A batch is one trip off the JavaScript thread.
 */
import { Effect, FileSystem } from "effect"
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { noTestHooks, testHooks, trips } from "../support/hooks.ts"
import { skipUnless } from "../support/skip.ts"
import { AtomicFileSystemTypeId, NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount } from "../support/tree.ts"
import { base64, host, ok, refused, rootIdentityOf, run, workspace } from "./support.ts"

describe.each(strategies)("extension lifetime (%s)", (strategy) => {
  it("keeps the descriptor count after 10,000 operations, failures included", async () => {
    const w = workspace({ "top.txt": "top", "a/b/file.txt": "hello" })
    fs.symlinkSync(w.s.outside, w.s.abs("linkdir"))
    fs.linkSync(w.s.secret, w.s.abs("hard.txt"))
    const extension = NodeAtomicFileSystem.make({ strategy, rootCacheSize: 4 })
    const h = host(extension)
    await ok(h, w.req("exists", { path: w.l("top.txt") }))
    const baseline = openDescriptorCount()
    const wrongIdentity = rootIdentityOf(w.s.outside)
    const requests: ReadonlyArray<unknown> = [
      w.req("readFile", { path: w.l("top.txt") }),
      w.req("readFileString", { path: w.b("a/b/file.txt") }),
      w.req("stat", { path: w.l("a/b") }),
      w.req("exists", { path: w.l("nope") }),
      w.req("readFile", { path: w.l("missing") }),
      w.req("readFile", { path: w.l("linkdir/secret.txt") }),
      w.req("stat", { path: w.l("hard.txt") }),
      w.req("readFile", { path: w.l("../outside/secret.txt") }),
      w.req("readFile", { path: w.s.secret }),
      w.req("readFile", { path: "relative" }),
      w.req("frobnicate", {}),
      // Pins the root again, finds the identity wrong, closes that handle.
      { ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: wrongIdentity },
      w.req("batch", {
        requests: [
          { operation: "readFile", path: w.l("top.txt") },
          { operation: "stat", path: w.l("missing") },
          { operation: "resolve", path: w.l("a/b/file.txt") }
        ]
      }),
      w.req("writeFileString", { path: w.l("out.txt"), data: "x" }),
      w.req("writeFile", { path: w.l("out.bin"), data: base64("x") }),
      w.req("readDirectory", { path: w.l("a") })
    ]
    const total = 10_000
    await Effect.runPromise(
      Effect.forEach(
        Array.from({ length: total }, (_, i) => requests[i % requests.length]),
        (request) => Effect.exit(h.execute(request)),
        { concurrency: 16, discard: true }
      )
    )
    expect(openDescriptorCount()).toBe(baseline)
    extension.close()
    expect(openDescriptorCount()).toBe(baseline - 1)
    expect(fs.readFileSync(w.s.secret, "utf8")).toBe("TOP SECRET")
  }, 120_000) // bounded in iterations; the timeout only bounds a machine shared by many

  it("bounds the pinned roots, closing the least recently used, and closes all on close()", async () => {
    const workspaces = [workspace({ f: "0" }), workspace({ f: "1" }), workspace({ f: "2" })]
    const extension = NodeAtomicFileSystem.make({ strategy, rootCacheSize: 2 })
    const h = host(extension)
    const baseline = openDescriptorCount()
    const read = (i: number) => ok(h, workspaces[i]!.req("readFileString", { path: workspaces[i]!.l("f") }))
    expect(await read(0)).toBe("0")
    expect(openDescriptorCount()).toBe(baseline + 1)
    expect(await read(1)).toBe("1")
    expect(openDescriptorCount()).toBe(baseline + 2)
    expect(await read(0)).toBe("0") // 0 is now the most recently used
    expect(await read(2)).toBe("2") // evicts 1
    expect(openDescriptorCount()).toBe(baseline + 2)
    expect(await read(1)).toBe("1") // pins 1 again, evicts 0
    expect(openDescriptorCount()).toBe(baseline + 2)
    extension.close()
    expect(openDescriptorCount()).toBe(baseline)
    // Still usable: it pins again.
    expect(await read(2)).toBe("2")
    extension.close()
    expect(openDescriptorCount()).toBe(baseline)
  })

  it("does not close a root under a request that is using it", async () => {
    const workspaces = Array.from({ length: 6 }, (_, i) => workspace({ f: String(i) }))
    const extension = NodeAtomicFileSystem.make({ strategy, rootCacheSize: 1 })
    const h = host(extension)
    const baseline = openDescriptorCount()
    // Every request evicts the others' roots while they may still be in flight.
    const answers = await Effect.runPromise(
      Effect.forEach(
        Array.from({ length: 300 }, (_, i) => workspaces[i % workspaces.length]!),
        (w) => h.execute(w.req("readFileString", { path: w.l("f") })),
        { concurrency: 12 }
      )
    )
    expect(answers).toEqual(Array.from({ length: 300 }, (_, i) => String(i % workspaces.length)))
    extension.close()
    expect(openDescriptorCount()).toBe(baseline)
  })

  it("runs a batch in one trip off the JavaScript thread", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const w = workspace({ "top.txt": "top", "a/b/file.txt": "hello" })
    const extension = NodeAtomicFileSystem.make({ strategy })
    const h = host(extension)
    await ok(h, w.req("exists", { path: w.l("top.txt") })) // pins the root
    const requests = Array.from({ length: 200 }, (_, i) => ({
      operation: ["readFile", "stat", "exists", "resolve", "readFileString"][i % 5],
      path: w.l(i % 2 === 0 ? "top.txt" : "a/b/file.txt")
    }))
    const before = trips()
    const answer = await ok(h, w.req("batch", { requests }))
    expect(trips() - before).toBe(1)
    expect(answer.entries).toHaveLength(200)
    // A batch whose members are all malformed still vouches for its root: one trip.
    const none = trips()
    const all = await ok(h, w.req("batch", { requests: [42, { operation: "writeFile" }] }))
    expect(trips() - none).toBe(1)
    expect(all.entries).toHaveLength(2)
    // One request, one trip; a malformed one, none.
    const single = trips()
    await ok(h, w.req("readFileString", { path: w.l("top.txt") }))
    await refused(h, w.req("readFileString", { path: 42 }), "BadArgument")
    expect(trips() - single).toBe(1)
    extension.close()
  })
})

describe("NodeAtomicFileSystem.layer", () => {
  it("provides NodeFileSystem with the extension attached, and closes its roots with the scope", async () => {
    const w = workspace({ "top.txt": "top" })
    const baseline = openDescriptorCount()
    const program = Effect.gen(function* () {
      const fileSystem = yield* FileSystem.FileSystem
      const extension = (
        fileSystem as unknown as Record<
          symbol,
          NodeAtomicFileSystem.Options & {
            readonly noFollowAuthorization: true
            readonly execute: (r: unknown) => Effect.Effect<unknown, unknown>
          }
        >
      )[AtomicFileSystemTypeId]!
      expect(extension.noFollowAuthorization).toBe(true)
      expect(yield* fileSystem.readFileString(w.b("top.txt"))).toBe("top")
      expect(yield* extension.execute(w.req("readFileString", { path: w.l("top.txt") }))).toBe("top")
      return openDescriptorCount()
    })
    const inside = await Effect.runPromise(program.pipe(Effect.provide(NodeAtomicFileSystem.layerWith({ strategy: "walk" }))))
    expect(inside).toBe(baseline + 1)
    expect(openDescriptorCount()).toBe(baseline)
    const exit = await run(
      Effect.gen(function* () {
        const fileSystem = yield* FileSystem.FileSystem
        return AtomicFileSystemTypeId in fileSystem
      }).pipe(Effect.provide(NodeAtomicFileSystem.layer))
    )
    expect(exit).toMatchObject({ _tag: "Success", value: true })
  })

  it("refuses bad options at construction", () => {
    expect(() => NodeAtomicFileSystem.make({ strategy: "fast" as never })).toThrow(RangeError)
    expect(() => NodeAtomicFileSystem.make({ batchLimits: { size: 0 } })).toThrow(RangeError)
    expect(() => NodeAtomicFileSystem.make({ contentLimit: 1.5 })).toThrow(RangeError)
    expect(() => NodeAtomicFileSystem.make({ rootCacheSize: -1 })).toThrow(RangeError)
    expect(() => NodeAtomicFileSystem.make({ durable: "yes" as never })).toThrow(/durable must be a boolean/)
    const e = NodeAtomicFileSystem.make()
    expect(e.batchLimits).toEqual({ size: 256, response: 64 * 1024 * 1024 })
    expect(e.contentLimit).toBe(64 * 1024 * 1024)
    expect(e.noFollowAuthorization).toBe(true)
  })
})
