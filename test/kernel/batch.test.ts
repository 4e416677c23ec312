/**
 * The read batch: one authorization round, one execution round, results in path order, grants
 * consumed in request order, members failing alone.
 */
import * as NFS from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Result } from "effect"
import { FileSystemBatch, GrantStore } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag } from "./support/kernel.ts"

const valueOf = (entry: FileSystemBatch.BatchEntry) =>
  Result.isSuccess(entry.result) ? entry.result.success.value : reasonTag(entry.result.failure)

describe.each(hosts)("FileSystemBatch ($name)", (host) => {
  it.effect("answers in path order, each member alone, in two executor batches", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "c.txt": "charlie", "a.txt": "alpha", "dir/b.txt": "bravo" })
      NFS.symlinkSync(s.outside, s.abs("out"))
      const made = host.make()
      const response = yield* Effect.gen(function* () {
        const batch = yield* FileSystemBatch.FileSystemBatch
        made.trips.log.length = 0
        return yield* batch.execute([
          { operation: "readFileString", path: "c.txt" },
          { operation: "readFileString", path: "missing.txt" },
          { operation: "exists", path: "a.txt" },
          { operation: "readFileString", path: "out/secret.txt" },
          { operation: "readDirectory", path: "dir" }
        ])
      }).pipe(Effect.provide(FileSystemBatch.layer.pipe(Layer.provideMerge(kernelLayer(made.layer, s.root, allowAll(s.root))))))
      expect(response.entries.map((e) => [e.path, e.index])).toEqual([
        [s.abs("a.txt"), 2],
        [s.abs("c.txt"), 0],
        [s.abs("dir"), 4],
        [s.abs("missing.txt"), 1],
        [s.abs("out/secret.txt"), 3]
      ])
      expect(response.entries.map(valueOf)).toEqual([true, "charlie", ["b.txt"], "NotFound", "PermissionDenied"])
      const outside = response.entries[4]!
      // Over a path host the client asks the store about what the host's realPath names, outside
      // included (not granted here); a no-follow executor's resolution is refused as outside.
      expect(Result.isFailure(outside.result) && kernelCause(outside.result.failure)?._tag).toBe(
        host.noFollow ? "PermissionDenied" : "PermissionRequired"
      )
      // Two executor trips over a no-follow executor, resolving and reading: the link met by
      // out/secret.txt names an absolute path outside both roots, which is denied from its text
      // without asking the executor again. A path host resolves through the host's own realPath:
      // one trip, the reads.
      expect(made.trips.log.map((r) => r.operation)).toEqual(host.noFollow ? ["batch", "batch"] : ["batch"])
    })
  )

  it.effect("consumes quota and one-shot grants in request order", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a", "b.txt": "b", "c.txt": "c" })
      const grants = GrantStore.layerRules({ root: s.root, allow: [{ action: "fs:read", glob: "*.txt", times: 2 }] })
      const response = yield* Effect.gen(function* () {
        const batch = yield* FileSystemBatch.FileSystemBatch
        return yield* batch.execute([
          { operation: "readFileString", path: "c.txt" },
          { operation: "readFileString", path: "a.txt" },
          { operation: "readFileString", path: "b.txt" }
        ])
      }).pipe(Effect.provide(FileSystemBatch.layer.pipe(Layer.provideMerge(kernelLayer(host.make().layer, s.root, grants)))))
      // Path order in the answer; request order for the quota: c and a were granted, b was not.
      expect(response.entries.map(valueOf)).toEqual(["a", "PermissionDenied", "c"])
      const b = response.entries[1]!
      expect(Result.isFailure(b.result) && kernelCause(b.result.failure)?._tag).toBe("PermissionRequired")
    })
  )

  it.effect("asks the grant store once per member, in request order", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "x.txt": "x", "y.txt": "y" })
      const asked: Array<string> = []
      const store = GrantStore.GrantStore.of({
        check: (capability) => Effect.sync(() => void asked.push(capability.resource))
      })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        yield* batch.execute([
          { operation: "stat", path: "y.txt" },
          { operation: "readFile", path: "x.txt" }
        ])
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(asked).toEqual([s.abs("y.txt"), s.abs("x.txt")])
    })
  )

  it.effect("refuses an empty or oversized batch as BadArgument", () =>
    Effect.gen(function* () {
      const s = scratch()
      const errors = yield* Effect.gen(function* () {
        const batch = yield* FileSystemBatch.FileSystemBatch
        const many = Array.from({ length: batch.maxSize + 1 }, () => ({ operation: "exists" as const, path: "a" }))
        return [yield* Effect.flip(batch.execute([])), yield* Effect.flip(batch.execute(many))]
      }).pipe(Effect.provide(FileSystemBatch.layer.pipe(Layer.provideMerge(kernelLayer(host.make().layer, s.root, allowAll(s.root))))))
      expect(errors.map((e) => e.reason._tag)).toEqual(["BadArgument", "BadArgument"])
    })
  )
})
