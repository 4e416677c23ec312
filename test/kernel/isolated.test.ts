/**
 * Isolated volumes: `withIsolatedFileSystem` attests a file system that cannot address the host
 * at all, and the kernel delegates to it the methods no executor request expresses, after the same
 * checks the client's kernel makes. (Node's own file system stands in for such a volume here: it is
 * not one, and only the kernel's delegation is under test.)
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Fiber, FileSystem, Layer, Option, Stream } from "effect"
import { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { testDouble } from "./support/hosts.ts"
import { allowAll, denyAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"
import { scratchSystemTemp } from "./support/systemTemp.ts"

const isolatedLayer = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(Effect.service(FileSystem.FileSystem), (fs) => KernelFileSystem.withIsolatedFileSystem({ ...fs }))
).pipe(Layer.provide(NodeFileSystem.layer))

const systemTemp = scratchSystemTemp()

describe("withIsolatedFileSystem", () => {
  it.effect("throws executor_already_present over a file system that already carries an executor", () =>
    Effect.gen(function* () {
      const withExecutor = yield* Effect.provide(Effect.service(FileSystem.FileSystem), testDouble.make().layer)
      let thrown: unknown
      try {
        KernelFileSystem.withIsolatedFileSystem(withExecutor)
      } catch (e) {
        thrown = e
      }
      expect(thrown).toBeInstanceOf(FileSystemFault)
      expect((thrown as FileSystemFault).code).toBe("executor_already_present")
    })
  )

  it.effect("dies with isolated_operation_unsupported for an operation it never advertises", () =>
    Effect.gen(function* () {
      const s = scratch()
      const fs = yield* Effect.provide(Effect.service(FileSystem.FileSystem), isolatedLayer)
      const atomic = (fs as unknown as Record<symbol, KernelFileSystem.AtomicFileSystem>)[KernelFileSystem.AtomicFileSystemTypeId]!
      expect(atomic.isolated).toBe(fs)
      for (const request of [
        { operation: "unlink", path: s.root },
        { operation: "resolve", path: s.root },
        { operation: "batch", requests: [] }
      ]) {
        const exit = yield* Effect.exit(atomic.execute(request as never))
        expect(Exit.isFailure(exit) && Cause.hasDies(exit.cause)).toBe(true)
        const defect = Exit.isFailure(exit) ? Cause.squash(exit.cause) : undefined
        expect(defect).toBeInstanceOf(FileSystemFault)
        expect((defect as FileSystemFault).code).toBe("isolated_operation_unsupported")
      }
      expect(yield* atomic.execute({ operation: "exists", path: s.root })).toBe(true)
    })
  )

  it.effect("is returned as it is by confined()", () =>
    Effect.gen(function* () {
      const s = scratch()
      const fs = yield* Effect.provide(Effect.service(FileSystem.FileSystem), isolatedLayer)
      expect(yield* Effect.provide(KernelFileSystem.confined(fs, s.root), NodePath.layer)).toBe(fs)
    })
  )
})

describe("the kernel over an isolated volume", () => {
  it.effect("delegates what no executor request expresses, after the client's checks", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha", "b.txt": "bravo" })
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.access("a.txt")
        yield* fs.copyFile("a.txt", "copy.txt")
        yield* fs.truncate("b.txt", 2)
        yield* fs.utimes("b.txt", 1_000_000, 2_000_000)
        yield* fs.symlink("a.txt", "soft.txt")
        const streamed = yield* fs.stream("a.txt", { chunkSize: 2 }).pipe(Stream.runCollect)
        yield* Stream.make(new TextEncoder().encode("sunk")).pipe(Stream.run(fs.sink("sunk.txt")))
        yield* fs.link("a.txt", "hard.txt")
        // Now a.txt has two names: the client's hard-link guard refuses it from here on.
        const refused = yield* Effect.flip(fs.readFileString("a.txt"))
        expect(kernelCause(refused)?._tag === "PermissionDenied" && kernelCause(refused)).toMatchObject({
          reason: "hard-linked files cannot be confined to the workspace"
        })
        return { streamed: Buffer.concat([...streamed]).toString(), batch: FileSystemBatch.fromFileSystem(fs) }
      }).pipe(Effect.provide(kernelLayer(isolatedLayer, s.root, allowAll(s.root))))
      expect(got.streamed).toBe("alpha")
      expect(got.batch).toBeUndefined() // no batch protocol advertised
      expect(NFS.readFileSync(s.abs("copy.txt"), "utf8")).toBe("alpha")
      expect(NFS.readFileSync(s.abs("b.txt"), "utf8")).toBe("br")
      expect(NFS.statSync(s.abs("b.txt")).mtimeMs).toBe(2_000_000_000)
      expect(NFS.readlinkSync(s.abs("soft.txt"))).toBe("a.txt")
      expect(NFS.readFileSync(s.abs("sunk.txt"), "utf8")).toBe("sunk")
    })
  )

  it.effect("refuses them when denied, touching nothing", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const before = snapshotTree(s.root)
      const deny = denyAll(s.root)
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.access("a.txt")),
          yield* Effect.flip(fs.truncate("a.txt", 1)),
          yield* Effect.flip(fs.symlink("a.txt", "soft.txt")),
          yield* Effect.flip(Effect.scoped(fs.open("a.txt"))),
          yield* Effect.flip(Stream.runCollect(fs.stream("a.txt")))
        ]
      }).pipe(Effect.provide(kernelLayer(isolatedLayer, s.root, deny)))
      for (const error of errors) expect(kernelCause(error)?._tag).toBe("PermissionDenied")
      expect(snapshotTree(s.root)).toEqual(before)
    })
  )

  it.effect("binds an open handle to the file it opened and refuses it once the path names another", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "first", "w.txt": "keep" })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const file = yield* fs.open("a.txt")
        const first = yield* file.readAlloc(5)
        expect(Option.map(first, (b) => Buffer.from(b).toString())).toEqual(Option.some("first"))
        NFS.renameSync(s.abs("a.txt"), s.abs("a.old"))
        NFS.writeFileSync(s.abs("a.txt"), "second")
        const error = yield* Effect.flip(file.readAlloc(5, { position: 0n }))
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toMatch(/descriptor no longer names/)

        const out = yield* fs.open("w.txt", { flag: "r+" })
        NFS.renameSync(s.abs("w.txt"), s.abs("w.old"))
        NFS.writeFileSync(s.abs("w.txt"), "replacement")
        expect(reasonTag(yield* Effect.flip(out.writeAll(new TextEncoder().encode("XX"))))).toBe("PermissionDenied")
        expect(NFS.readFileSync(s.abs("w.txt"), "utf8")).toBe("replacement")
        expect(NFS.readFileSync(s.abs("w.old"), "utf8")).toBe("keep")
      }).pipe(Effect.scoped, Effect.provide(kernelLayer(isolatedLayer, s.root, allowAll(s.root))))
    })
  )

  it.effect("snapshots stream options at the call: offset and length cannot change during the decision", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "data.txt": "0123456789" })
      const grants = yield* GrantStore.deferred
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const options: { offset: number; bytesToRead: number } = { offset: 2, bytesToRead: 3 }
        const fiber = yield* Effect.forkChild(
          Stream.runCollect(fs.stream("data.txt", options)).pipe(Effect.map((chunks) => Buffer.concat([...chunks]).toString()))
        )
        const pending = yield* grants.next
        options.offset = 0
        options.bytesToRead = 10
        yield* pending.allow
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(kernelLayer(isolatedLayer, s.root, Layer.succeed(GrantStore.GrantStore, grants.store))))
      expect(got).toBe("234")
    })
  )

  it.effect("makes a temporary entry without a directory on the volume, after a write to <system-temp>", () =>
    Effect.gen(function* () {
      const s = scratch()
      const systmp = systemTemp(NPath.dirname(s.root))
      const grants = yield* GrantStore.deferred
      const made = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const fiber = yield* Effect.forkChild(
          Effect.scoped(
            Effect.tap(fs.makeTempFileScoped({ prefix: "k-" }), (file) => Effect.sync(() => expect(NFS.existsSync(file)).toBe(true)))
          )
        )
        const pending = yield* grants.next
        expect(pending.capability).toEqual({
          action: "fs:write",
          resource: NPath.join(NPath.dirname(s.root), KernelFileSystem.systemTemporaryDirectoryName)
        })
        yield* pending.allow
        return yield* Fiber.join(fiber)
      }).pipe(Effect.provide(kernelLayer(isolatedLayer, s.root, Layer.succeed(GrantStore.GrantStore, grants.store))))
      expect(made.startsWith(systmp)).toBe(true)
      expect(NFS.existsSync(made)).toBe(false)
    })
  )
})
