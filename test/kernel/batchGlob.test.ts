/**
 * `glob` members of a `FileSystemBatch`: framed as the client's batch frames them (the pattern read
 * against the member's own normalized `root`), authorized by their literal prefix, and their
 * results filtered by the read grants exactly as `glob` filters its own.
 */
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, Result } from "effect"
import { FileSystemBatch, GrantStore } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { kernelCause, kernelLayer, reasonTag } from "./support/kernel.ts"

const world = () => {
  const s = scratch()
  s.make({ "src/a.txt": "a", "top.txt": "t", "secret/key.txt": "k", "secret/deep/more.txt": "m", "other/o.txt": "o" })
  const grants = GrantStore.layerRules({
    root: s.root,
    allow: [{ action: "fs:read", glob: "**" }],
    deny: [{ action: "fs:read", glob: "secret/**" }]
  })
  return { s, grants }
}

const member = (path: string, root: string) => ({ operation: "glob", path, root }) as unknown as FileSystemBatch.BatchRequest

describe.each(hosts)("glob members in a batch ($name)", (host) => {
  it.effect("list what glob lists: nothing under a read-denied folder", () =>
    Effect.gen(function* () {
      const { grants, s } = world()
      const [batched, direct] = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        const response = yield* batch.execute([member("**/*.txt", ".")])
        const entry = response.entries[0]!
        expect(Result.isSuccess(entry.result)).toBe(true)
        const value = Result.isSuccess(entry.result) ? (entry.result.success as { value: Array<string> }).value : []
        return [value, yield* fs.glob("**/*.txt")] as const
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, grants)))
      expect([...batched].sort()).toEqual([s.abs("other/o.txt"), s.abs("src/a.txt"), s.abs("top.txt")])
      expect(batched.some((p) => p.includes("secret"))).toBe(false)
      expect([...direct].map((p) => (NPath.isAbsolute(p) ? p : s.abs(p))).sort()).toEqual([...batched].sort())
    })
  )

  it.effect("are authorized by their literal prefix: a read-denied one is refused alone", () =>
    Effect.gen(function* () {
      const { grants, s } = world()
      const response = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        return yield* batch.execute([member("secret/*", "."), { operation: "readFileString", path: "top.txt" }])
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, grants)))
      const [first, second] = [...response.entries].sort((a, b) => a.index - b.index)
      expect(Result.isFailure(first!.result) && reasonTag(first!.result.failure)).toBe("PermissionDenied")
      expect(Result.isFailure(first!.result) && kernelCause(first!.result.failure)?._tag).toBe("PermissionDenied")
      expect(Result.isSuccess(second!.result) && second!.result.success).toEqual({ operation: "readFileString", value: "t" })
    })
  )

  it.effect("read the pattern against the member's own root", () =>
    Effect.gen(function* () {
      const { grants, s } = world()
      const response = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        return yield* batch.execute([member("*.txt", "src")])
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, grants)))
      const entry = response.entries[0]!
      expect(entry.path).toBe(s.abs("src/*.txt"))
      expect(Result.isSuccess(entry.result) && entry.result.success).toEqual({ operation: "glob", value: [s.abs("src/a.txt")] })
    })
  )

  it.effect("ask the grant store about the pattern, then about each result, in order", () =>
    Effect.gen(function* () {
      const { s } = world()
      const asked: Array<string> = []
      const store = GrantStore.GrantStore.of({ check: (capability) => Effect.sync(() => void asked.push(capability.resource)) })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const batch = FileSystemBatch.fromFileSystem(fs)!
        yield* batch.execute([member("*.txt", "src")])
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(asked[0]).toBe(s.abs("src/*.txt"))
      expect(asked).toContain(s.abs("src/a.txt"))
    })
  )
})
