/**
 * The client's kernel's behaviour, case by case, each case naming the line of the client's
 * `FileSystem.ts` (as quoted in its document) that it encodes, run over the native extension
 * under both resolve strategies and over the path-based fallback: what a client switching its
 * kernel for ours would see unchanged. pinnedfs's additions have their own suites (see
 * docs/kernel.md); where one changes an answer here it is said so.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, FileSystem, Layer, type PlatformError, Result, Stream } from "effect"
import { FileSystemBatch, FileSystemFault, GrantStore, KernelFileSystem, Workspace } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

const real = hosts.filter((h) => h.name !== "test double")

const fsOf = <A, E>(layer: ReturnType<typeof kernelLayer>, f: (fs: FileSystem.FileSystem) => Effect.Effect<A, E>) =>
  Effect.gen(function* () {
    return yield* f(yield* FileSystem.FileSystem)
  }).pipe(Effect.scoped, Effect.provide(layer))

const logging = (root: string) =>
  Effect.gen(function* () {
    const rules = yield* Effect.provide(
      GrantStore.fromRules({
        root,
        allow: [
          { action: "fs:read", glob: "**" },
          { action: "fs:write", glob: "**" }
        ]
      }),
      NodePath.layer
    )
    const asked: Array<{ action: string; resource: string }> = []
    const store = GrantStore.GrantStore.of({
      check: (c) =>
        Effect.andThen(
          Effect.sync(() => void asked.push({ ...c })),
          rules.check(c)
        )
    })
    return { asked, grants: Layer.succeed(GrantStore.GrantStore, store) }
  })

describe.each(real)("the client's kernel, case by case ($name)", (host) => {
  it.effect(
    "l.1102-1110, 1381-1386: the executor receives the caller's path, so a read through a link inside the workspace is refused",
    () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "alpha" })
        NFS.symlinkSync("a.txt", s.abs("link"))
        const error = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) => Effect.flip(fs.readFileString("link")))
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(kernelCause(error)).toBeUndefined() // the executor's refusal, not a grant's
      })
  )

  it.effect("l.1414-1419: stat of a link answers SymbolicLink; l.1475-1480: exists of a dangling link answers true", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      NFS.symlinkSync("a.txt", s.abs("link"))
      NFS.symlinkSync("nowhere", s.abs("dangling"))
      const got = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) =>
        Effect.all([fs.stat("link"), fs.exists("dangling"), fs.exists("nowhere")])
      )
      expect([got[0].type, got[1], got[2]]).toEqual(["SymbolicLink", true, false])
    })
  )

  it.effect("l.954-957, 973-985 / 986-1000: a path resolving outside the workspace", () =>
    Effect.gen(function* () {
      const s = scratch()
      NFS.symlinkSync(s.outside, s.abs("out"))
      const { asked, grants } = yield* logging(s.root)
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) => Effect.flip(fs.readFileString("out/secret.txt")))
      const cause = kernelCause(error)
      if (host.noFollow) {
        // Refused as outside, without asking the store about it (l.954-957). The caller's own
        // path is then asked about (pinnedfs, so the refusal is the same for a denied path).
        expect(cause?._tag === "PermissionDenied" && cause.reason).toBe("path is outside the workspace")
        expect(cause?.capability.resource).toBe(NPath.join(s.outside, "secret.txt"))
        expect(asked).toEqual([{ action: "fs:read", resource: s.abs("out/secret.txt") }])
      } else {
        // A host without noFollowAuthorization: the store is asked about what its realPath names,
        // outside included (l.986-1000 has no outside check); the workspace grants do not cover it.
        expect(cause?._tag).toBe("PermissionRequired")
        expect(asked[0]).toEqual({ action: "fs:read", resource: NPath.join(NFS.realpathSync(s.outside), "secret.txt") })
      }
    })
  )

  it.effect("l.849-851 / 727-733: link hops are bounded", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "end.txt": "end" })
      for (let i = 0; i < 41; i++) NFS.symlinkSync(i === 40 ? "end.txt" : `l${i + 1}`, s.abs(`l${i}`))
      const { asked, grants } = yield* logging(s.root)
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) => Effect.flip(fs.readFileString("l0")))
      if (host.noFollow) {
        // 41 links: "too many levels of symbolic links", nothing asked about a target.
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toMatch(/too many levels of symbolic links/)
        expect(asked).toEqual([{ action: "fs:read", resource: s.abs("l0") }])
      } else {
        // realPath gives up (ELOOP); the link is read and its text resolved instead.
        expect(asked[0]).toEqual({ action: "fs:read", resource: s.abs("end.txt") })
      }
    })
  )

  it.effect("l.258-262, 992-995: a hard-linked file is refused (by the executor, or by the kernel's guard over a path host)", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "one.txt": "one" })
      NFS.linkSync(s.abs("one.txt"), s.abs("two.txt"))
      const { asked, grants } = yield* logging(s.root)
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) => Effect.flip(fs.readFileString("two.txt")))
      expect(reasonTag(error)).toBe("PermissionDenied")
      if (host.noFollow) {
        expect(asked).toEqual([{ action: "fs:read", resource: s.abs("two.txt") }])
        expect(kernelCause(error)).toBeUndefined()
      } else {
        // The client refuses it before asking anything; the one question here is pinnedfs's (the
        // caller's own path, asked before a refusal is reported: docs/kernel.md).
        expect(asked).toEqual([{ action: "fs:read", resource: s.abs("two.txt") }])
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toBe("hard-linked files cannot be confined to the workspace")
      }
    })
  )

  it.effect("l.1063-1088: resolve, ask, resolve again: a path that names another resource once the decision arrives is refused", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "dir/f.txt": "inside", "other/f.txt": "other" })
      const grants = yield* GrantStore.deferred
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, grants.store)), (fs) =>
        Effect.gen(function* () {
          const fiber = yield* Effect.forkChild(Effect.flip(fs.readFileString("dir/f.txt")))
          const pending = yield* grants.next
          NFS.renameSync(s.abs("dir"), s.abs("dir-old"))
          NFS.symlinkSync("other", s.abs("dir"))
          yield* pending.allow
          return yield* Fiber.join(fiber)
        })
      )
      const cause = kernelCause(error)
      expect(cause?._tag === "PermissionDenied" && cause.reason).toBe("path no longer names the resource that was authorized")
    })
  )

  it.effect("l.1407-1413: rename asks write of the source, then of the destination", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const { asked, grants } = yield* logging(s.root)
      yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) => fs.rename("a.txt", "b.txt"))
      // (Then pinnedfs reads what moves: docs/kernel.md.)
      expect(asked.slice(0, 2)).toEqual([
        { action: "fs:write", resource: s.abs("a.txt") },
        { action: "fs:write", resource: s.abs("b.txt") }
      ])
    })
  )

  it.effect(
    "l.1276-1286, 774-789: glob reads the pattern from its root, asks about it with the literal prefix resolved, answers absolute paths",
    () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "src/a.ts": "a", "src/b.js": "b", "src/.h.ts": "h" })
        const { asked, grants } = yield* logging(s.root)
        const got = yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) =>
          Effect.all([fs.glob("*.ts", { root: "src" }), fs.glob("src/../src/*.ts", { dot: true })])
        )
        expect(asked[0]).toEqual({ action: "fs:read", resource: s.abs("src/*.ts") })
        // `dot` is not carried by the request (l.1284): `.h.ts` is not matched by `*`.
        expect(got).toEqual([[s.abs("src/a.ts")], [s.abs("src/a.ts")]])
      })
  )

  it.effect("l.782: the workspace's own name is literal in a glob", () =>
    Effect.gen(function* () {
      const s = scratch()
      const root = NPath.join(NPath.dirname(s.root), "w[s]")
      NFS.mkdirSync(root)
      NFS.writeFileSync(NPath.join(root, "a.txt"), "a")
      const got = yield* fsOf(kernelLayer(host.make().layer, root, allowAll(root)), (fs) => fs.glob("*.txt"))
      expect(got).toEqual([NPath.join(root, "a.txt")])
    })
  )

  it.effect(
    "l.1243-1246, 1354-1359, 1420-1438, 1488-1515: methods no executor request expresses are refused over a non-isolated host",
    () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "a" })
        const before = snapshotTree(s.root)
        const errors = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) =>
          Effect.all([
            Effect.flip(fs.access("a.txt")),
            // pinnedfs's own extension opens beneath its root (test/kernel/openPinned.test.ts); the others cannot.
            Effect.flip(host.name.startsWith("NodeAtomicFileSystem") ? fs.access("a.txt") : Effect.scoped(fs.open("a.txt"))),
            Effect.flip(fs.symlink("a.txt", "l")),
            Effect.flip(fs.link("a.txt", "h")),
            Effect.flip(fs.truncate("a.txt", 0)),
            Effect.flip(fs.utimes("a.txt", 1, 2)),
            Effect.flip(Stream.runHead(fs.watch("."))),
            Effect.flip(Stream.runCollect(fs.stream("a.txt"))),
            Effect.flip(Stream.make(new Uint8Array([1])).pipe(Stream.run(fs.sink("a.txt"))))
          ])
        )
        for (const error of errors) {
          const cause = kernelCause(error)
          expect(cause?._tag === "PermissionDenied" && cause.reason).toBe(KernelFileSystem.unconfinedDescription)
        }
        expect(snapshotTree(s.root)).toEqual(before)
      })
  )

  it.effect("l.1298-1311: a temporary entry without a directory is refused, naming <system-temp> beside the workspace", () =>
    Effect.gen(function* () {
      const s = scratch()
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) => Effect.flip(fs.makeTempDirectory()))
      expect(kernelCause(error)?.capability).toEqual({
        action: "fs:write",
        resource: NPath.join(NPath.dirname(s.root), "<system-temp>")
      })
    })
  )

  it.effect("l.1458-1466: a writeFile payload over contentLimit is BadArgument, before any question", () =>
    Effect.gen(function* () {
      const s = scratch()
      const { asked, grants } = yield* logging(s.root)
      const error = yield* fsOf(kernelLayer(host.make({ contentLimit: 4 }).layer, s.root, grants), (fs) =>
        Effect.flip(fs.writeFile("x", new Uint8Array(5)))
      )
      expect(reasonTag(error)).toBe("BadArgument")
      expect(asked).toEqual([])
    })
  )

  it.effect("l.926-927, 1068-1073: a guard's refusal carries method read or write and names the resource", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const deny = GrantStore.layerRules({ root: s.root, deny: [{ action: "fs:read", glob: "**" }] })
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, deny), (fs) => Effect.flip(fs.readFileString("a.txt")))
      expect((error as PlatformError.PlatformError).reason).toMatchObject({
        _tag: "PermissionDenied",
        module: "FileSystem",
        method: "read",
        pathOrDescriptor: s.abs("a.txt")
      })
    })
  )

  it.effect(
    "l.1535-1544: an empty or oversized batch is BadArgument; l.1597-1608, 1648: questions in request order, entries by path then index",
    () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "b.txt": "b", "a.txt": "a" })
        const { asked, grants } = yield* logging(s.root)
        const [empty, response] = yield* fsOf(kernelLayer(host.make().layer, s.root, grants), (fs) => {
          const batch = FileSystemBatch.fromFileSystem(fs)!
          return Effect.all([
            Effect.flip(batch.execute([])),
            batch.execute([
              { operation: "readFileString", path: "b.txt" },
              { operation: "readFileString", path: "a.txt" },
              { operation: "exists", path: "a.txt" }
            ])
          ])
        })
        expect(reasonTag(empty)).toBe("BadArgument")
        expect(asked.map((q) => q.resource)).toEqual([s.abs("b.txt"), s.abs("a.txt"), s.abs("a.txt")])
        expect(response.entries.map((e) => [NPath.basename(e.path), e.index])).toEqual([
          ["a.txt", 1],
          ["a.txt", 2],
          ["b.txt", 0]
        ])
      })
  )

  it.effect("l.1549-1555: a batch glob member's pattern is read against its own root", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "src/a.ts": "a", "b.ts": "b" })
      const response = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) =>
        FileSystemBatch.fromFileSystem(fs)!.execute([{ operation: "glob", path: "*.ts", root: "src" }])
      )
      const entry = response.entries[0]!
      expect(entry.path).toBe(s.abs("src/*.ts"))
      expect(Result.isSuccess(entry.result) && entry.result.success).toEqual({ operation: "glob", value: [s.abs("src/a.ts")] })
    })
  )

  it.effect("l.1556-1586: a batch whose workspace root was replaced fails as Busy with workspace_identity_changed", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const error = yield* fsOf(kernelLayer(host.make().layer, s.root, allowAll(s.root)), (fs) => {
        NFS.renameSync(s.root, `${s.root}-old`)
        NFS.mkdirSync(s.root)
        return Effect.flip(FileSystemBatch.fromFileSystem(fs)!.execute([{ operation: "exists", path: "a.txt" }]))
      })
      expect(reasonTag(error)).toBe("Busy")
      const cause = (error as PlatformError.PlatformError).reason as { readonly cause?: unknown }
      expect(cause.cause).toBeInstanceOf(FileSystemFault)
      expect((cause.cause as FileSystemFault).code).toBe("workspace_identity_changed")
    })
  )

  it.effect(
    "l.550-646: confined() sends one request per method, asks nothing, refuses the rest; l.557 and 1530: views and guarded services are branded",
    () =>
      Effect.gen(function* () {
        const s = scratch()
        s.make({ "a.txt": "a", "src/b.ts": "b" })
        NFS.symlinkSync("a.txt", s.abs("link"))
        const got = yield* Effect.gen(function* () {
          const host_ = yield* FileSystem.FileSystem
          const view = yield* KernelFileSystem.confined(host_, s.root)
          const again = yield* KernelFileSystem.confined(view, s.root)
          return {
            same: again === view,
            root: KernelFileSystem.confinedRoot(view),
            read: yield* view.readFileString("a.txt"),
            link: reasonTag(yield* Effect.flip(view.readFileString("link"))),
            outside: reasonTag(yield* Effect.flip(view.readFileString(s.secret))),
            glob: yield* view.glob("*.ts", { root: "src" }),
            temp: reasonTag(yield* Effect.flip(view.makeTempFile())),
            big: reasonTag(yield* Effect.flip(view.writeFile("x", new Uint8Array(9))))
          }
        }).pipe(Effect.provide(Layer.mergeAll(host.make({ contentLimit: 8 }).layer, NodePath.layer)))
        expect(got).toEqual({
          same: true,
          root: s.root,
          read: "a",
          link: "PermissionDenied",
          outside: "PermissionDenied",
          glob: [s.abs("src/b.ts")],
          temp: "PermissionDenied",
          big: "BadArgument"
        })
      })
  )
})

describe("the client's kernel over a host it cannot confine", () => {
  it.effect("l.919: the layer fails when the workspace root does not exist", () =>
    Effect.gen(function* () {
      const s = scratch()
      const error = yield* Effect.flip(
        Effect.provide(Effect.service(FileSystem.FileSystem), kernelLayer(real[0]!.make().layer, `${s.root}-missing`, allowAll(s.root)))
      )
      expect(reasonTag(error)).toBe("NotFound")
    })
  )

  it.effect("l.466-476, 1091-1101: without the extension every method refuses with the unconfined description, the path normalized", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "a" })
      const layer = KernelFileSystem.layer.pipe(
        Layer.provide(Layer.mergeAll(NodeFileSystem.layer, Workspace.layer(s.root), allowAll(s.root))),
        Layer.provideMerge(NodePath.layer)
      )
      const errors = yield* fsOf(layer, (fs) =>
        Effect.all([Effect.flip(fs.readFileString("a.txt")), Effect.flip(fs.writeFileString("b.txt", "b")), Effect.flip(fs.glob("*"))])
      )
      for (const error of errors) {
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toBe(KernelFileSystem.unconfinedDescription)
      }
      expect(kernelCause(errors[0])?.capability).toEqual({ action: "fs:read", resource: s.abs("a.txt") })
      expect(kernelCause(errors[1])?.capability).toEqual({ action: "fs:write", resource: s.abs("b.txt") })
    })
  )
})
