/**
 * `confined(fs, root)`: nothing it does leaves `root`. Every method that cannot be one executor
 * request against the pinned root is refused, as the client's confined view refuses it (its
 * `confined`, the refusals of `access` through `watch` and of every `makeTemp*`).
 */
import * as NPath from "node:path"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, type PlatformError, type Scope, Stream } from "effect"
import { KernelFileSystem } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { reasonTag, snapshotTree } from "./support/kernel.ts"
import { scratchSystemTemp } from "./support/systemTemp.ts"

const systemTemp = scratchSystemTemp()

type Call = readonly [string, (fs: FileSystem.FileSystem) => Effect.Effect<unknown, PlatformError.PlatformError, Scope.Scope>]

const refused: ReadonlyArray<Call> = [
  ["makeTempDirectory", (fs) => fs.makeTempDirectory()],
  ["makeTempDirectoryScoped", (fs) => fs.makeTempDirectoryScoped()],
  ["makeTempFile", (fs) => fs.makeTempFile()],
  ["makeTempFileScoped", (fs) => fs.makeTempFileScoped()],
  ["makeTempDirectory in a directory", (fs) => fs.makeTempDirectory({ directory: "." })],
  ["makeTempFile in a directory", (fs) => fs.makeTempFile({ directory: "." })],
  ["open", (fs) => fs.open("a.txt")],
  ["open for writing", (fs) => fs.open("new.txt", { flag: "w" })],
  ["copy", (fs) => fs.copy("a.txt", "b.txt")],
  ["copyFile", (fs) => fs.copyFile("a.txt", "b.txt")],
  ["access", (fs) => fs.access("a.txt")],
  ["truncate", (fs) => fs.truncate("a.txt", 1)],
  ["utimes", (fs) => fs.utimes("a.txt", 1, 2)],
  ["link", (fs) => fs.link("a.txt", "hard.txt")],
  ["symlink", (fs) => fs.symlink("a.txt", "soft.txt")],
  ["watch", (fs) => Stream.runHead(fs.watch("."))],
  ["stream", (fs) => Stream.runCollect(fs.stream("a.txt"))],
  ["sink", (fs) => Stream.make(new Uint8Array([1])).pipe(Stream.run(fs.sink("a.txt")))]
]

describe.each(hosts)("confined() refuses what is not one executor request ($name)", (host) => {
  for (const [name, call] of refused) {
    it.effect(`${name}: PermissionDenied, nothing created anywhere`, () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "alpha" })
        const base = NPath.dirname(s.root)
        systemTemp(base)
        const before = snapshotTree(base)
        const error = yield* Effect.gen(function* () {
          const fs = yield* KernelFileSystem.confined(yield* FileSystem.FileSystem, s.root)
          return yield* Effect.flip(Effect.scoped(call(fs)))
        }).pipe(Effect.provide(Layer.mergeAll(host.make().layer, NodePath.layer)))
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect((error as PlatformError.PlatformError).message).toContain(KernelFileSystem.unconfinedDescription)
        expect(snapshotTree(base)).toEqual(before)
      })
    )
  }
})
