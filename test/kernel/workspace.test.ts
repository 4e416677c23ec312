/**
 * The workspace as the program names it: reached through a symlink, over a host that cannot
 * confine, and the grant-free confined view.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, FileSystem, Layer } from "effect"
import { GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

describe.each(hosts)("a workspace reached through a symlink ($name)", (host) => {
  it.effect("works, and its resources keep the logical spelling", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "dir/a.txt": "alpha" })
      const logical = NPath.join(NPath.dirname(s.root), "workspace-link")
      NFS.symlinkSync(s.root, logical)
      // Grants name only the logical spelling: the canonical one is not granted at all.
      const grants = GrantStore.layerRules({
        root: logical,
        allow: [
          { action: "fs:read", glob: "**" },
          { action: "fs:write", glob: "**" }
        ]
      })
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.writeFileString("dir/b.txt", "bravo")
        yield* fs.rename("dir/b.txt", "dir/c.txt")
        return {
          read: yield* fs.readFileString("dir/a.txt"),
          viaLogical: yield* fs.readFileString(NPath.join(logical, "dir/c.txt")),
          viaBoundary: yield* fs.readFileString(NPath.join(s.root, "dir/c.txt")),
          glob: [...(yield* fs.glob("**/*.txt"))].sort(),
          list: [...(yield* fs.readDirectory("dir"))].sort()
        }
      }).pipe(Effect.provide(kernelLayer(host.make().layer, logical, grants)))
      // glob answers absolute paths (as the client's kernel passes on the executor's answer), in
      // the logical spelling of the pattern.
      expect(got).toEqual({
        read: "alpha",
        viaLogical: "bravo",
        viaBoundary: "bravo",
        glob: [NPath.join(logical, "dir/a.txt"), NPath.join(logical, "dir/c.txt")],
        list: ["a.txt", "c.txt"]
      })
    })
  )

  it.effect("asks the grant store in the logical spelling, whichever spelling the caller used", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const logical = NPath.join(NPath.dirname(s.root), "workspace-link")
      NFS.symlinkSync(s.root, logical)
      const grants = yield* GrantStore.deferred
      const layer = kernelLayer(host.make().layer, logical, Layer.succeed(GrantStore.GrantStore, grants.store))
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        for (const spelling of ["a.txt", NPath.join(logical, "a.txt"), NPath.join(s.root, "a.txt")]) {
          const fiber = yield* Effect.forkChild(fs.readFileString(spelling))
          const pending = yield* grants.next
          expect(pending.capability.resource).toBe(NPath.join(logical, "a.txt"))
          yield* pending.allow
          expect(yield* Fiber.join(fiber)).toBe("alpha")
        }
      }).pipe(Effect.provide(layer))
    })
  )
})

describe("over a plain path-based host", () => {
  it.effect("every method fails closed, saying the host provides no isolation", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      const before = snapshotTree(s.root, s.outside)
      const grants = allowAll(s.root)
      const errors = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return [
          yield* Effect.flip(fs.readFileString("a.txt")),
          yield* Effect.flip(fs.writeFileString("a.txt", "x")),
          yield* Effect.flip(fs.exists("a.txt")),
          yield* Effect.flip(fs.glob("*")),
          yield* Effect.flip(fs.remove("a.txt")),
          yield* Effect.flip(Effect.scoped(fs.open("a.txt")))
        ]
      }).pipe(Effect.provide(kernelLayer(NodeFileSystem.layer, s.root, grants)))
      for (const error of errors) {
        expect(reasonTag(error)).toBe("PermissionDenied")
        const cause = kernelCause(error)
        expect(cause?._tag === "PermissionDenied" && cause.reason).toBe(KernelFileSystem.unconfinedDescription)
      }
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("confined() is refused", () =>
    Effect.gen(function* () {
      const s = scratch()
      const error = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* Effect.flip(KernelFileSystem.confined(fs, s.root))
      }).pipe(Effect.provide(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer)))
      expect(reasonTag(error)).toBe("PermissionDenied")
    })
  )
})

describe.each(hosts)("confined() ($name)", (host) => {
  it.effect("works without asking any grant store and never leaves its root", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha" })
      NFS.symlinkSync(s.outside, s.abs("out"))
      const before = snapshotTree(s.outside)
      const [read, outsideWrite, viaLink] = yield* Effect.gen(function* () {
        const host = yield* FileSystem.FileSystem
        const fs = yield* KernelFileSystem.confined(host, s.root)
        yield* fs.writeFileString("journal/entry.txt", "x").pipe(Effect.ignore)
        yield* fs.makeDirectory("journal")
        yield* fs.writeFileString("journal/entry.txt", "logged")
        return [
          yield* fs.readFileString("a.txt"),
          yield* Effect.flip(fs.writeFileString(NPath.join(s.outside, "x.txt"), "escape")),
          yield* Effect.flip(fs.writeFileString("out/x.txt", "escape"))
        ] as const
      }).pipe(Effect.provide(Layer.mergeAll(host.make().layer, NodePath.layer)))
      expect(read).toBe("alpha")
      expect(NFS.readFileSync(s.abs("journal/entry.txt"), "utf8")).toBe("logged")
      expect(reasonTag(outsideWrite)).toBe("PermissionDenied")
      expect(reasonTag(viaLink)).toBe("PermissionDenied")
      expect(snapshotTree(s.outside)).toEqual(before)
    })
  )
})

describe.each(hosts)("glob roots in either spelling ($name)", (host) => {
  it.effect("answers in the spelling of the root the caller gave, and drops `dot` as the client does", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "src/a.ts": "a", "src/.hidden.ts": "h" })
      const logical = NPath.join(NPath.dirname(s.root), "workspace-link")
      NFS.symlinkSync(s.root, logical)
      const grants = GrantStore.layerRules({ root: logical, allow: [{ action: "fs:read", glob: "**" }] })
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return {
          boundary: yield* fs.glob("*.ts", { root: NPath.join(s.root, "src") }),
          logical: yield* fs.glob("*.ts", { root: NPath.join(logical, "src") }),
          dotted: [...(yield* fs.glob(".*.ts", { root: "src" }))],
          dot: yield* fs.glob("*.ts", { root: "src", dot: true })
        }
      }).pipe(Effect.provide(kernelLayer(host.make().layer, logical, grants)))
      // `dot` has no field in the executor's request, so the kernel cannot pass it on: dropped, as the
      // client's kernel drops it, and dotfiles are matched as without it.
      expect(got).toEqual({
        boundary: [NPath.join(s.root, "src/a.ts")],
        logical: [NPath.join(logical, "src/a.ts")],
        dotted: [NPath.join(logical, "src/.hidden.ts")],
        dot: [NPath.join(logical, "src/a.ts")]
      })
    })
  )
})
