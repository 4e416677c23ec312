/**
 * Operations on whole trees: a recursive `remove` and a `rename` act on everything below the path
 * they name, so everything below is authorized (or the operation is refused and nothing moves). A
 * `rename` also reads what it moves: the content of a read-denied file must not become readable
 * under a new name.
 */
import * as NFS from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer } from "effect"
import { GrantStore, type Permission } from "../../src/kernel/index.ts"
import { scratch, type Scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

const everything = [
  { action: "fs:read" as const, glob: "**" },
  { action: "fs:write" as const, glob: "**" }
]

const rules = (s: Scratch, deny: ReadonlyArray<GrantStore.Rule>) => GrantStore.layerRules({ root: s.root, allow: everything, deny })

const tree = (s: Scratch) => {
  s.make({
    "src/a.txt": "a",
    "src/keep/data": "PROTECTED",
    "src/keep/deeper/more": "PROTECTED TOO",
    "src/other/b.txt": "b",
    ".env": "TOKEN=1",
    "stage/keep/data": "staged"
  })
}

/** A scratch with the tree laid out, and a snapshot of the disk to prove a refusal changed nothing. */
const laidOut = () => {
  const s = scratch()
  tree(s)
  return { s, before: snapshotTree(s.root, s.outside) }
}

/** The error `op` fails with through the kernel over `host`, everything allowed but `deny`. */
const refused = <A, E>(
  host: (typeof hosts)[number],
  s: Scratch,
  deny: ReadonlyArray<GrantStore.Rule>,
  op: (fs: FileSystem.FileSystem) => Effect.Effect<A, E>
) => Effect.flip(Effect.flatMap(FileSystem.FileSystem, op)).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, rules(s, deny))))

describe.each(hosts)("tree operations ($name)", (host) => {
  it.effect("a recursive remove is refused when anything below is write-denied, and removes nothing", () =>
    Effect.gen(function* () {
      const { s, before } = laidOut()
      const error = yield* refused(host, s, [{ action: "fs:write", glob: "src/keep/**" }], (fs) => fs.remove("src", { recursive: true }))
      expect(reasonTag(error)).toBe("PermissionDenied")
      expect(kernelCause(error)?._tag).toBe("PermissionDenied")
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("a rename of a directory is refused when anything below may not be moved out from under its rule", () =>
    Effect.gen(function* () {
      const { s, before } = laidOut()
      const error = yield* refused(host, s, [{ action: "fs:write", glob: "src/keep/**" }], (fs) => fs.rename("src", "moved"))
      expect(reasonTag(error)).toBe("PermissionDenied")
      expect(kernelCause(error)?._tag).toBe("PermissionDenied")
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("a rename is refused when it would create write-denied entries under the new name", () =>
    Effect.gen(function* () {
      const { s, before } = laidOut()
      const error = yield* refused(host, s, [{ action: "fs:write", glob: "out/keep/**" }], (fs) => fs.rename("stage", "out"))
      expect(reasonTag(error)).toBe("PermissionDenied")
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("a rename reads what it moves: a read-denied file is not renamed to a readable name", () =>
    Effect.gen(function* () {
      const s = scratch()
      tree(s)
      const before = snapshotTree(s.root, s.outside)
      const layer = kernelLayer(host.make().layer, s.root, rules(s, [{ action: "fs:read", glob: ".env" }]))
      const [error, read] = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        const error = yield* Effect.flip(fs.rename(".env", "x"))
        const read = yield* Effect.flip(fs.readFileString("x"))
        return [error, read] as const
      }).pipe(Effect.provide(layer))
      expect(reasonTag(error)).toBe("PermissionDenied")
      expect(kernelCause(error)?.capability).toEqual({ action: "fs:read", resource: s.abs(".env") })
      expect(reasonTag(read)).toBe("NotFound")
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("a rename of a directory holding a read-denied file is refused", () =>
    Effect.gen(function* () {
      const { s, before } = laidOut()
      const error = yield* refused(host, s, [{ action: "fs:read", glob: "src/keep/**" }], (fs) => fs.rename("src", "moved"))
      expect(reasonTag(error)).toBe("PermissionDenied")
      expect(snapshotTree(s.root, s.outside)).toEqual(before)
    })
  )

  it.effect("a refusal below names only the path the caller gave, not the denied entry", () =>
    Effect.gen(function* () {
      const s = scratch()
      tree(s)
      const error = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* Effect.flip(fs.remove("src", { recursive: true }))
      }).pipe(
        Effect.provide(
          kernelLayer(
            host.make().layer,
            s.root,
            rules(s, [
              { action: "fs:write", glob: "src/keep/**" },
              { action: "fs:read", glob: "src/keep/**" }
            ])
          )
        )
      )
      expect(kernelCause(error)?.capability).toEqual({ action: "fs:write", resource: s.abs("src") })
      expect(JSON.stringify(error)).not.toContain("keep")
      expect(String(error)).not.toContain("keep")
    })
  )

  it.effect("a tree wholly granted is removed and renamed, links inside acted on as entries", () =>
    Effect.gen(function* () {
      const s = scratch()
      tree(s)
      NFS.symlinkSync(s.secret, s.abs("src/other/to-outside"))
      NFS.symlinkSync("../keep/data", s.abs("src/other/to-inside"))
      const outside = snapshotTree(s.outside)
      const asked: Array<Permission.Capability> = []
      const store = GrantStore.GrantStore.of({ check: (capability) => Effect.sync(() => void asked.push(capability)) })
      yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        yield* fs.rename("src", "moved")
        yield* fs.remove("moved", { recursive: true })
      }).pipe(Effect.provide(kernelLayer(host.make().layer, s.root, Layer.succeed(GrantStore.GrantStore, store))))
      expect(NFS.existsSync(s.abs("src"))).toBe(false)
      expect(NFS.existsSync(s.abs("moved"))).toBe(false)
      expect(snapshotTree(s.outside)).toEqual(outside)
      // Every entry below was asked about, at its own name: the links themselves, never their targets.
      const writes = asked.filter((c) => c.action === "fs:write").map((c) => c.resource)
      for (const entry of ["keep/data", "keep/deeper/more", "other/to-outside", "other/to-inside", "a.txt"]) {
        expect(writes).toContain(s.abs(`src/${entry}`))
        expect(writes).toContain(s.abs(`moved/${entry}`))
      }
      expect(asked).toContainEqual({ action: "fs:read", resource: s.abs("src/keep/deeper/more") })
      expect(asked.some((c) => c.resource.startsWith(s.outside))).toBe(false)
    })
  )
})
