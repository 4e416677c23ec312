/**
 * The behaviours the kernel promises beyond delegation, each proven over every host.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, FileSystem, Layer, PlatformError } from "effect"
import { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { rootIdentityOf } from "../../src/protocol/root.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

const deferredKernel = (host: (typeof hosts)[number], root: string) =>
  Effect.map(GrantStore.deferred, (grants) => {
    const made = host.make()
    return { grants, trips: made.trips, layer: kernelLayer(made.layer, root, Layer.succeed(GrantStore.GrantStore, grants.store)) }
  })

describe.each(hosts)("kernel behaviours ($name)", (host) => {
  describe("a decision that suspends", () => {
    it.effect("refuses a read whose directory became a link while the grant was pending", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "dir/file.txt": "inside", "other/file.txt": "other" })
        NFS.writeFileSync(NPath.join(s.outside, "file.txt"), "OUTSIDE")
        const { grants, layer, trips } = yield* deferredKernel(host, s.root)
        const error = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.forkChild(Effect.flip(fs.readFileString("dir/file.txt")))
          const pending = yield* grants.next
          expect(pending.capability).toEqual({ action: "fs:read", resource: s.abs("dir/file.txt") })
          NFS.renameSync(s.abs("dir"), s.abs("dir-old"))
          NFS.symlinkSync(s.outside, s.abs("dir"))
          yield* pending.allow
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(layer))
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(kernelCause(error)?._tag).toBe("PermissionDenied")
        // Nothing was read: no read request ever reached the executor.
        expect(trips.log.some((r) => r.operation === "readFile" || r.operation === "readFileString")).toBe(false)
      })
    )

    it.effect("refuses a write whose path names another resource when the grant arrives, and writes nothing", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "dir/keep.txt": "keep", "other/keep.txt": "other" })
        const { grants, layer, trips } = yield* deferredKernel(host, s.root)
        const error = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.forkChild(Effect.flip(fs.writeFileString("dir/new.txt", "written")))
          const pending = yield* grants.next
          expect(pending.capability).toEqual({ action: "fs:write", resource: s.abs("dir/new.txt") })
          NFS.renameSync(s.abs("dir"), s.abs("dir-old"))
          NFS.symlinkSync("other", s.abs("dir")) // inside the workspace, but another resource
          const before = snapshotTree(s.root, s.outside)
          yield* pending.allow
          const error = yield* Fiber.join(fiber)
          expect(snapshotTree(s.root, s.outside)).toEqual(before)
          return error
        }).pipe(Effect.provide(layer))
        expect(reasonTag(error)).toBe("PermissionDenied")
        const cause = kernelCause(error)
        expect(cause?._tag).toBe("PermissionDenied")
        expect(cause?._tag === "PermissionDenied" && cause.reason).toMatch(/no longer names/)
        expect(NFS.existsSync(s.abs("other/new.txt"))).toBe(false)
        expect(trips.log.some((r) => r.operation === "writeFileString")).toBe(false)
      })
    )
  })

  describe("link text met during resolution", () => {
    it.effect("is followed lexically and asked again: the resource is the link's target", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "b/file.txt": "target" })
        NFS.symlinkSync("b", s.abs("a"))
        const { grants, layer } = yield* deferredKernel(host, s.root)
        const error = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.forkChild(Effect.flip(fs.readFileString("a/file.txt")))
          const pending = yield* grants.next
          expect(pending.capability.resource).toBe(s.abs("b/file.txt"))
          yield* pending.allow
          // Then the path the caller named: the read goes through it, so it needs a grant of its own
          // (a grant of the target alone would let a link lend it to a path that has none).
          const entry = yield* grants.next
          expect(entry.capability.resource).toBe(s.abs("a/file.txt"))
          yield* entry.allow
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(layer))
        // The executor acts on the caller's path, which is what the client's kernel sends, and
        // refuses the link on it (the refusal is the executor's, not a grant's).
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(kernelCause(error)).toBeUndefined()
      })
    )

    // The kernel's own hop limit applies where it follows link text itself (a no-follow executor);
    // over a path host the host's realPath decides, as in the client's kernel.
    if (host.noFollow) {
      it.effect("follows at most 40 links: 40 resolve, 41 are refused", () =>
        Effect.gen(function* () {
          const s = scratch()
          s.make({ "end.txt": "end" })
          const chain = (name: string, length: number) => {
            for (let i = 0; i < length; i++) {
              NFS.symlinkSync(i === length - 1 ? "end.txt" : `${name}${i + 1}`, s.abs(`${name}${i}`))
            }
          }
          chain("forty", 40)
          chain("fortyone", 41)
          const made = host.make()
          const layer = kernelLayer(made.layer, s.root, allowAll(s.root))
          const [forty, error] = yield* Effect.gen(function* () {
            const fs = yield* FileSystem.FileSystem
            return [yield* Effect.flip(fs.readFileString("forty0")), yield* Effect.flip(fs.readFileString("fortyone0"))] as const
          }).pipe(Effect.provide(layer))
          // Forty links resolve (authorization passes); the read itself is then refused by the
          // executor, which acts on the caller's path and follows no link. Forty-one are refused by the
          // kernel.
          expect(reasonTag(forty)).toBe("PermissionDenied")
          expect(kernelCause(forty)).toBeUndefined()
          const cause = kernelCause(error)
          expect(cause?._tag === "PermissionDenied" && cause.reason).toMatch(/too many levels/)
        })
      )
    } else {
      it.effect("over a path host, the host's realPath decides, a link it cannot resolve read in its place", () =>
        Effect.gen(function* () {
          const s = scratch()
          s.make({ "end.txt": "end" })
          for (let i = 0; i < 41; i++) NFS.symlinkSync(i === 40 ? "end.txt" : `fortyone${i + 1}`, s.abs(`fortyone${i}`))
          const asked: Array<string> = []
          const store = GrantStore.GrantStore.of({ check: (c) => Effect.sync(() => void asked.push(c.resource)) })
          yield* Effect.gen(function* () {
            const fs = yield* FileSystem.FileSystem
            yield* Effect.ignore(fs.readFileString("fortyone0"))
          }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
          // realPath gives up after 40 links (ELOOP); the first link is read and its text resolved.
          expect(asked[0]).toBe(s.abs("end.txt"))
        })
      )
    }

    it.effect("denies a target outside the workspace as outside", () =>
      Effect.gen(function* () {
        const s = scratch()
        NFS.symlinkSync(s.outside, s.abs("out"))
        NFS.symlinkSync("../outside/secret.txt", s.abs("relative-out"))
        const before = snapshotTree(s.root, s.outside)
        const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
        const errors = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return [
            yield* Effect.flip(fs.readFileString("out/secret.txt")),
            yield* Effect.flip(fs.readFileString("relative-out")),
            yield* Effect.flip(fs.writeFileString("out/new.txt", "x"))
          ]
        }).pipe(Effect.provide(layer))
        for (const error of errors) {
          const cause = kernelCause(error)
          if (host.noFollow) expect(cause?._tag === "PermissionDenied" && cause.reason).toBe("path is outside the workspace")
          // Over a path host the client asks the store about whatever the host's realPath names,
          // outside included; the workspace grants do not cover it.
          else expect(cause?._tag).toBe("PermissionRequired")
          expect(cause?.capability.resource.startsWith(s.outside)).toBe(true)
        }
        expect(snapshotTree(s.root, s.outside)).toEqual(before)
      })
    )
  })

  describe("glob", () => {
    it.effect("authorizes the literal prefix and never looks pattern syntax up as a name", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "a", "src/b.txt": "b" })
        // A link literally named `*`, pointing outside: looked up as a name, it would be denied.
        NFS.symlinkSync(s.outside, s.abs("*"))
        const { grants, layer } = yield* deferredKernel(host, s.root)
        const found = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const fiber = yield* Effect.forkChild(fs.glob("*.txt"))
          const pending = yield* grants.next
          expect(pending.capability).toEqual({ action: "fs:read", resource: `${s.root}/*.txt` })
          yield* pending.allow
          const result = yield* grants.next // the result a.txt is itself checked
          expect(result.capability).toEqual({ action: "fs:read", resource: s.abs("a.txt") })
          yield* result.allow
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(layer))
        expect(found).toEqual([s.abs("a.txt")])
      })
    )

    it.effect("drops every result the read grants deny (the client's kernel lists them)", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "src/a.txt": "a", "secret/key.txt": "k", "secret/deep/more.txt": "m", "top.txt": "t" })
        const grants = GrantStore.layerRules({
          root: s.root,
          allow: [{ action: "fs:read", glob: "**" }],
          deny: [{ action: "fs:read", glob: "secret/**" }]
        })
        const found = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* fs.glob("**/*.txt")
        }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, grants)))
        expect([...found].sort()).toEqual([s.abs("src/a.txt"), s.abs("top.txt")])
      })
    )
  })

  describe("the workspace root", () => {
    it.effect("renamed away and replaced makes a batch fail as Busy with workspace_identity_changed", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "a" })
        const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
        const error = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const batch = FileSystemBatch.fromFileSystem(fs)!
          NFS.renameSync(s.root, `${s.root}-old`)
          NFS.mkdirSync(s.root)
          NFS.writeFileSync(s.abs("a.txt"), "impostor")
          return yield* Effect.flip(batch.execute([{ operation: "readFileString", path: "a.txt" }]))
        }).pipe(Effect.provide(layer))
        expect(reasonTag(error)).toBe("Busy")
        const cause = PlatformError.isPlatformError(error) ? (error.reason as { cause?: unknown }).cause : undefined
        expect(cause).toBeInstanceOf(FileSystemFault)
        expect((cause as FileSystemFault).code).toBe("workspace_identity_changed")
      })
    )

    it.effect("replaced while a batch's grant is pending fails the batch as Busy", () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "a" })
        const { grants, layer } = yield* deferredKernel(host, s.root)
        const error = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          const batch = FileSystemBatch.fromFileSystem(fs)!
          const fiber = yield* Effect.forkChild(Effect.flip(batch.execute([{ operation: "readFileString", path: "a.txt" }])))
          const pending = yield* grants.next
          NFS.renameSync(s.root, `${s.root}-old`)
          NFS.mkdirSync(s.root)
          NFS.writeFileSync(s.abs("a.txt"), "impostor")
          yield* pending.allow
          return yield* Fiber.join(fiber)
        }).pipe(Effect.provide(layer))
        expect(reasonTag(error)).toBe("Busy")
        const cause = PlatformError.isPlatformError(error) ? (error.reason as { cause?: unknown }).cause : undefined
        expect((cause as FileSystemFault).code).toBe("workspace_identity_changed")
      })
    )
  })

  it.effect("snapshots options before any asynchronous check", () =>
    Effect.gen(function* () {
      const s = scratch()
      const { grants, layer } = yield* deferredKernel(host, s.root)
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const options: { recursive: boolean; mode: number } = { recursive: true, mode: 0o700 }
        const fiber = yield* Effect.forkChild(fs.makeDirectory("x/y/z", options))
        const pending = yield* grants.next
        options.recursive = false // would fail: x does not exist
        options.mode = 0o777
        yield* pending.allow
        yield* Fiber.join(fiber)
      }).pipe(Effect.provide(layer))
      expect(NFS.statSync(s.abs("x/y/z")).isDirectory()).toBe(true)
      expect(NFS.statSync(s.abs("x/y/z")).mode & 0o777).toBe(0o700)
    })
  )

  describe("temporary files", () => {
    it.effect("without a directory are refused as the client refuses them, naming <system-temp> beside the workspace", () =>
      Effect.gen(function* () {
        const s = scratch()
        const before = snapshotTree(s.root)
        const errors = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return [
            yield* Effect.flip(fs.makeTempDirectory()),
            yield* Effect.flip(Effect.scoped(fs.makeTempFileScoped({ prefix: "kernel-" })))
          ]
        }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, allowAll(s.root))))
        for (const error of errors) {
          const cause = kernelCause(error)
          expect(cause?._tag === "PermissionDenied" && cause.reason).toBe(KernelFileSystem.unconfinedDescription)
          expect(cause?.capability).toEqual({
            action: "fs:write",
            resource: NPath.join(NPath.dirname(s.root), KernelFileSystem.systemTemporaryDirectoryName)
          })
        }
        expect(snapshotTree(s.root)).toEqual(before)
      })
    )
  })

  it.effect("refuses a writeFile payload over contentLimit as BadArgument before anything else", () =>
    Effect.gen(function* () {
      const s = scratch()
      const made = host.make({ contentLimit: 16 })
      const layer = kernelLayer(made.layer, s.root, allowAll(s.root))
      const [error, fine] = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.writeFile("big.bin", new Uint8Array(17))),
          yield* fs.writeFile("small.bin", new Uint8Array(16))
        ] as const
      }).pipe(Effect.provide(layer))
      expect(PlatformError.isPlatformError(error) && error.reason._tag).toBe("BadArgument")
      expect(fine).toBeUndefined()
      expect(NFS.existsSync(s.abs("big.bin"))).toBe(false)
      expect(made.trips.log.filter((r) => "path" in r && r.path.endsWith("big.bin"))).toEqual([])
    })
  )
})

describe.each(hosts)("operations on a link itself ($name)", (host) => {
  it.effect("lstat, readLink, rename and remove of a link to outside are authorized as the whole path: refused, nothing touched", () =>
    Effect.gen(function* () {
      const s = scratch()
      NFS.symlinkSync(s.outside, s.abs("out"))
      const before = snapshotTree(s.root, s.outside)
      const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.lstat("out")),
          yield* Effect.flip(fs.readLink("out")),
          yield* Effect.flip(fs.stat("out")),
          yield* Effect.flip(fs.rename("out", "moved")),
          yield* Effect.flip(fs.remove("out"))
        ]
      }).pipe(Effect.provide(layer))
      // As in the client's kernel, the link's target is what is authorized (it is what a following
      // read would reach), and a link to outside is refused as outside (over a path host: asked about,
      // and not granted).
      for (const error of errors) {
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(kernelCause(error)?.capability.resource.startsWith(s.outside)).toBe(true)
      }
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )
})

describe.each(hosts)("requests reaching the executor ($name)", (host) => {
  it.effect("are stamped with the root pinned at composition", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const made = host.make()
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.readFileString("a.txt")
        yield* fs.writeFileString("b.txt", "b")
        yield* fs.glob("*.txt")
      }).pipe(Effect.provide(kernelLayer(made.layer, s.root, allowAll(s.root))))
      // The test trees record birth times, so every executor's identity is dev:ino and that birth
      // time, the spelling Node's stat gives too.
      const identity = rootIdentityOf(NFS.statSync(s.root, { bigint: true }))
      expect(made.trips.log.length).toBeGreaterThan(0)
      for (const request of made.trips.log) {
        expect([request.boundaryRoot, request.logicalRoot, request.rootIdentity]).toEqual([NFS.realpathSync(s.root), s.root, identity])
      }
    })
  )
})
