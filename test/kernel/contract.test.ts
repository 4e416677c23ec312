/**
 * The client's exports and identities, and the smaller points of its contract: what a client
 * switching its kernel for ours relies on without ever calling a file operation.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Cause, Data, Effect, Exit, FileSystem, Layer, Option, type PlatformError, Schema, Tracer } from "effect"
import { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem, Permission } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts, testDouble } from "./support/hosts.ts"
import { allowAll, denyAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

describe("identities", () => {
  it("FileSystemFault is tagged and coded as the client's", () => {
    const fault = new FileSystemFault({ code: "workspace_identity_changed", message: "m" })
    expect(fault._tag).toBe("@smthrs/kernel/FileSystemFault")
    expect(fault.name).toBe("FileSystemFault")
    expect(fault).toBeInstanceOf(Error)
    for (const code of ["executor_already_present", "isolated_operation_unsupported", "workspace_identity_changed"]) {
      expect(Schema.decodeUnknownSync(KernelFileSystem.FileSystemFaultCode)(code)).toBe(code)
    }
    expect(() => Schema.decodeUnknownSync(KernelFileSystem.FileSystemFaultCode)("other")).toThrow()
  })

  it("the type ids are the client's symbols", () => {
    expect(KernelFileSystem.AtomicFileSystemTypeId).toBe(Symbol.for("@smthrs/kernel/AtomicFileSystem"))
    expect(FileSystemBatch.FileSystemBatchTypeId).toBe(Symbol.for("@smthrs/kernel/FileSystemBatch"))
    expect(KernelFileSystem.systemTemporaryDirectoryName).toBe("<system-temp>")
  })

  it.effect("a guarded service is branded with its workspace root, confinable, and carries its batch", () =>
    Effect.gen(function* () {
      const s = scratch()
      const fs = yield* Effect.provide(
        Effect.service(FileSystem.FileSystem),
        kernelLayer(testDouble.make().layer, s.root, allowAll(s.root))
      )
      expect((fs as unknown as Record<symbol, unknown>)[Symbol.for("@smthrs/kernel/ConfinedFileSystem")]).toBe(s.root)
      expect(KernelFileSystem.confinedRoot(fs)).toBe(s.root)
      expect(KernelFileSystem.isConfinable(fs)).toBe(true)
      expect(Symbol.for("@smthrs/kernel/FileSystemBatch") in fs).toBe(true)
      // confined() over the guarded service at the same root is the service itself.
      expect(yield* Effect.provide(KernelFileSystem.confined(fs, s.root), NodePath.layer)).toBe(fs)
    })
  )
})

describe("isConfinable and requireConfinable", () => {
  it.effect("answer as the client's: any host with the extension, a view, or a guarded service", () =>
    Effect.gen(function* () {
      const s = scratch()
      const plain = yield* Effect.provide(Effect.service(FileSystem.FileSystem), NodeFileSystem.layer)
      expect(KernelFileSystem.isConfinable(plain)).toBe(false)
      expect(reasonTag(yield* Effect.flip(KernelFileSystem.requireConfinable(plain, s.root)))).toBe("PermissionDenied")
      for (const host of hosts) {
        const fs = yield* Effect.provide(Effect.service(FileSystem.FileSystem), host.make().layer)
        expect(KernelFileSystem.isConfinable(fs), host.name).toBe(true)
        yield* KernelFileSystem.requireConfinable(fs, s.root)
        const view = yield* Effect.provide(KernelFileSystem.confined(fs, s.root), NodePath.layer)
        expect(KernelFileSystem.isConfinable(view)).toBe(true)
        expect(KernelFileSystem.confinedRoot(view)).toBe(s.root)
        expect(KernelFileSystem.confinedRoot(fs)).toBeUndefined()
      }
      const isolated = KernelFileSystem.withIsolatedFileSystem({ ...plain })
      expect(KernelFileSystem.isConfinable(isolated)).toBe(true)
    })
  )
})

describe("a host that reports no inode", () => {
  it.effect("has no root identity: confined() is refused and a batch is refused, as the client's identifyRoot leaves them", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const made = testDouble.make()
      const inodeless = Layer.effect(
        FileSystem.FileSystem,
        Effect.map(Effect.service(FileSystem.FileSystem), (fs) => {
          const atomic = (fs as unknown as Record<symbol, KernelFileSystem.AtomicFileSystem>)[KernelFileSystem.AtomicFileSystemTypeId]!
          return KernelFileSystem.withAtomicFileSystem(
            { ...fs, stat: (p) => Effect.map(fs.stat(p), (info) => ({ ...info, ino: Option.none() })) },
            { ...atomic, identifyRoot: undefined }
          )
        })
      ).pipe(Layer.provide(made.layer))
      const view = yield* Effect.gen(function* () {
        const host = yield* FileSystem.FileSystem
        return yield* Effect.flip(KernelFileSystem.confined(host, s.root))
      }).pipe(Effect.provide(Layer.mergeAll(inodeless, NodePath.layer)))
      expect(reasonTag(view)).toBe("PermissionDenied")
      const refused = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* Effect.flip(FileSystemBatch.fromFileSystem(fs)!.execute([{ operation: "exists", path: "a.txt" }]))
      }).pipe(Effect.provide(kernelLayer(inodeless, s.root, allowAll(s.root))))
      expect(reasonTag(refused)).toBe("PermissionDenied")
      expect(kernelCause(refused)?._tag === "PermissionDenied" && kernelCause(refused)?.capability.resource).toBe(s.root)
    })
  )
})

describe.each(hosts)("smaller points of the contract ($name)", (host) => {
  it.effect("guard refusals carry the client's method values: read and write", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const deny = denyAll(s.root)
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.readFileString("a.txt")),
          yield* Effect.flip(fs.stat("a.txt")),
          yield* Effect.flip(fs.writeFileString("a.txt", "x")),
          yield* Effect.flip(fs.remove("a.txt"))
        ]
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, deny)))
      expect(errors.map((e) => (e as PlatformError.PlatformError).reason)).toMatchObject([
        { method: "read" },
        { method: "read" },
        { method: "write" },
        { method: "write" }
      ])
    })
  )

  it.effect("every method runs in a FileSystem.<method> span", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const names: Array<string> = []
      const tracer = Tracer.make({ span: (options) => (names.push(options.name), Tracer.nativeTracer.span(options)) })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.readFileString("a.txt")
        yield* fs.writeFileString("b.txt", "b")
        yield* fs.stat("a.txt")
        yield* fs.exists("a.txt")
        yield* fs.glob("*.txt")
        yield* fs.readDirectory(".")
        yield* fs.rename("b.txt", "c.txt")
        yield* fs.remove("c.txt")
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))), Effect.withTracer(tracer))
      for (const method of ["readFileString", "writeFileString", "stat", "exists", "glob", "readDirectory", "rename", "remove"]) {
        expect(names).toContain(`FileSystem.${method}`)
      }
    })
  )

  it.effect("options with accessors are refused as BadArgument, before anything is asked or done", () =>
    Effect.gen(function* () {
      const s = scratch()
      const asked: Array<string> = []
      const store = GrantStore.GrantStore.of({ check: (c) => Effect.sync(() => void asked.push(c.resource)) })
      const before = snapshotTree(s.root)
      let reads = 0
      const options = Object.defineProperty({}, "recursive", { enumerable: true, get: () => (reads++, true) })
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.makeDirectory("x/y", options)),
          yield* Effect.flip(fs.readDirectory(".", options)),
          yield* Effect.flip(fs.remove("x", options))
        ]
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(errors.map(reasonTag)).toEqual(["BadArgument", "BadArgument", "BadArgument"])
      expect(reads).toBe(0)
      expect(asked).toEqual([])
      expect(snapshotTree(s.root)).toEqual(before)
    })
  )

  it.effect("a malformed path is a BadArgument failure, never a throw or a defect", () =>
    Effect.gen(function* () {
      const s = scratch()
      const exits = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const calls: Array<() => Effect.Effect<unknown, PlatformError.PlatformError>> = [
          () => fs.readFile(42 as never),
          () => fs.readFileString("a\0b"),
          () => fs.writeFileString(undefined as never, "x"),
          () => fs.stat(null as never),
          () => fs.glob(7 as never),
          () => fs.rename("a", {} as never),
          () => fs.makeTempFile({ directory: 3 as never })
        ]
        const out: Array<Exit.Exit<unknown, PlatformError.PlatformError>> = []
        for (const call of calls) out.push(yield* Effect.exit(Effect.suspend(call)))
        return out
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
      for (const exit of exits) {
        expect(Exit.isFailure(exit) && !Cause.hasDies(exit.cause)).toBe(true)
        expect(Exit.isFailure(exit) && reasonTag(Cause.squash(exit.cause))).toBe("BadArgument")
      }
    })
  )
})

describe("FileSystemBatch trips (test double)", () => {
  it.effect("a full batch of reads costs two executor trips: one to resolve, one to execute", () =>
    Effect.gen(function* () {
      const s = scratch()
      const names = Array.from({ length: 64 }, (_, i) => `f${i}.txt`)
      s.make(Object.fromEntries(names.map((n) => [n, n])))
      const made = testDouble.make()
      const response = yield* Effect.gen(function* () {
        const batch = yield* FileSystemBatch.FileSystemBatch
        expect(batch.maxSize).toBe(64)
        made.trips!.log.length = 0
        return yield* batch.execute(names.map((path) => ({ operation: "readFileString" as const, path })))
      }).pipe(Effect.provide(FileSystemBatch.layer.pipe(Layer.provideMerge(kernelLayer(made.layer, s.root, allowAll(s.root))))))
      expect(response.entries.length).toBe(64)
      expect(made.trips!.log.map((r) => r.operation)).toEqual(["batch", "batch"])
    })
  )
})

describe.each(hosts.filter((h) => h !== testDouble))("FileSystemBatch trips ($name)", (host) => {
  // The executor's own limit, not the double's: at 256 members the batch once took three trips.
  it.effect("a batch of the executor's full size costs two executor trips (one over a host that does not resolve)", () =>
    Effect.gen(function* () {
      const s = scratch()
      const made = host.make()
      const { names, response } = yield* Effect.gen(function* () {
        const batch = yield* FileSystemBatch.FileSystemBatch
        const names = Array.from({ length: batch.maxSize }, (_, i) => `f${i}.txt`)
        s.make(Object.fromEntries(names.map((n) => [n, n])))
        made.trips.log.length = 0
        const response = yield* batch.execute(names.map((path) => ({ operation: "readFileString" as const, path })))
        return { names, response }
      }).pipe(Effect.provide(FileSystemBatch.layer.pipe(Layer.provideMerge(kernelLayer(made.layer, s.root, allowAll(s.root))))))
      expect(names.length).toBe(256)
      expect(response.entries.length).toBe(256)
      expect(response.entries.every((e) => e.result._tag === "Success")).toBe(true)
      expect(made.trips.log.map((r) => r.operation)).toEqual(host.noFollow ? ["batch", "batch"] : ["batch"])
    })
  )
})

describe("a client's own grant store", () => {
  // The client's store fails with its own error classes; the kernel must understand them and hand
  // them back unchanged.
  class ClientDenied extends Data.TaggedError("PermissionDenied")<{
    readonly capability: { readonly action: string; readonly resource: string; readonly origin: string }
    readonly reason: string
  }> {}
  class ClientRequired extends Data.TaggedError("PermissionRequired")<{
    readonly capability: { readonly action: string; readonly resource: string; readonly origin: string }
    readonly message: string
  }> {}

  it.effect("is provided unchanged: its refusals are read back as they were made", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha", "b.txt": "bravo", "c.txt": "charlie" })
      const store = {
        check: (capability: Permission.Capability) =>
          capability.resource.endsWith("a.txt")
            ? Effect.void
            : capability.resource.endsWith("b.txt")
              ? Effect.fail(new ClientDenied({ capability: { ...capability, origin: "client" }, reason: "client says no" }))
              : Effect.fail(new ClientRequired({ capability: { ...capability, origin: "client" }, message: "ask the user" }))
      }
      const [a, b, c] = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* fs.readFileString("a.txt"),
          yield* Effect.flip(fs.readFileString("b.txt")),
          yield* Effect.flip(fs.readFileString("c.txt"))
        ] as const
      }).pipe(Effect.provide(kernelLayer(testDouble.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store as never))))
      expect(a).toBe("alpha")
      expect(Option.getOrUndefined(Permission.fromPlatformError(b))).toBeInstanceOf(ClientDenied)
      expect(Option.getOrUndefined(Permission.fromPlatformError(c))).toBeInstanceOf(ClientRequired)
      expect(b.message).toContain("client says no")
    })
  )

  it.effect("failing with anything else refuses as GrantStoreError, never grants", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const store = { check: () => Effect.fail(new Error("journal gone")) }
      const error = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* Effect.flip(fs.readFileString("a.txt"))
      }).pipe(Effect.provide(kernelLayer(testDouble.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store as never))))
      expect(kernelCause(error)?._tag).toBe("GrantStoreError")
    })
  )
})
