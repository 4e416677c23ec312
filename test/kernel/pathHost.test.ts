/**
 * The racy path-based executor (`PathAtomicFileSystem`) pins no root handle, so it must not claim
 * `noFollowAuthorization` (which the client reserves for executors that pin a root and refuse links
 * while traversing from it). Over such a host the kernel authorizes as the client's kernel does:
 * the host's `realPath` (through every existing ancestor) names the resource, and a hard-linked
 * file is refused by the kernel itself before anything is executed.
 */
import * as NFS from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { type AtomicRequest, withAtomicFileSystem } from "../../src/protocol/wire.ts"
import { PathAtomicFileSystem } from "../../src/fallback/index.ts"
import { GrantStore, type Permission } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

/** The fallback over Node's file system, every request it receives logged. */
const loggedFallback = () => {
  const log: Array<AtomicRequest> = []
  const atomic = PathAtomicFileSystem.make()
  const layer = Layer.effect(
    FileSystem.FileSystem,
    Effect.map(Effect.service(FileSystem.FileSystem), (fs) =>
      withAtomicFileSystem(
        { ...fs },
        {
          ...atomic,
          execute: (request) => Effect.suspend(() => (log.push(request), atomic.execute(request)))
        }
      )
    )
  ).pipe(Layer.provide(NodeFileSystem.layer))
  return { log, layer }
}

describe("the path-based executor", () => {
  it("does not advertise noFollowAuthorization", () => {
    expect(PathAtomicFileSystem.make().noFollowAuthorization).toBeUndefined()
  })

  it.effect("is authorized through the host's realPath, never asked to resolve", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "b/file.txt": "target", "plain.txt": "plain" })
      NFS.symlinkSync("b", s.abs("a"))
      const asked: Array<Permission.Capability> = []
      const store = GrantStore.GrantStore.of({ check: (c) => Effect.sync(() => void asked.push(c)) })
      const { layer, log } = loggedFallback()
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        expect(yield* fs.readFileString("plain.txt")).toBe("plain")
        yield* Effect.ignore(fs.readFileString("a/file.txt"))
      }).pipe(Effect.provide(kernelLayer(layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(asked[0]).toEqual({ action: "fs:read", resource: s.abs("plain.txt") })
      expect(asked).toContainEqual({ action: "fs:read", resource: s.abs("b/file.txt") })
      expect(log.some((r) => r.operation === "resolve")).toBe(false)
    })
  )

  it.effect("has a hard-linked file refused by the kernel's own guard, before anything executes", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "one.txt": "one" })
      NFS.linkSync(s.abs("one.txt"), s.abs("two.txt"))
      const before = snapshotTree(s.root, s.outside)
      const { layer, log } = loggedFallback()
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        log.length = 0
        return [yield* Effect.flip(fs.readFileString("two.txt")), yield* Effect.flip(fs.writeFileString("one.txt", "x"))]
      }).pipe(Effect.provide(kernelLayer(layer, s.root, allowAll(s.root))))
      for (const error of errors) {
        expect(reasonTag(error)).toBe("PermissionDenied")
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toBe("hard-linked files cannot be confined to the workspace")
      }
      expect(log).toEqual([])
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )
})
