/**
 * `open` over pinnedfs's own executor, the documented extension: the client's kernel refuses it
 * there; pinnedfs's extension opens beneath its pinned root and the kernel binds the handle to the
 * file it opened. Each attack has its positive control (the same move through `node:fs` reaches
 * outside), and every case runs under both resolve strategies.
 */
import * as NFS from "node:fs"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, FileSystem, Layer, Option, type PlatformError, Scope } from "effect"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { GrantStore, type Permission } from "../../src/kernel/index.ts"
import { PermissionDenied } from "../../src/kernel/Permission.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

const text = (bytes: Option.Option<Uint8Array>) => Option.map(bytes, (b) => Buffer.from(b).toString())
const bytes = (s: string) => new TextEncoder().encode(s)

/** Reads everywhere, writes nowhere. */
const readOnly = (root: string) =>
  GrantStore.layerRules({ root, allow: [{ action: "fs:read", glob: "**" }], deny: [{ action: "fs:write", glob: "**" }] })

/** A grant store whose every answer can be withdrawn mid-test. */
const revocable = () => {
  const state = { granted: true }
  const store: GrantStore.GrantStore["Service"] = {
    check: (capability: Permission.Capability) =>
      state.granted ? Effect.void : Effect.fail(new PermissionDenied({ capability, reason: "revoked by the test" }))
  }
  return { state, layer: Layer.succeed(GrantStore.GrantStore, store) }
}

/** The handle's own refusal once closed (EBADF, which Effect's mapping reads as `Unknown`). */
const closedHandle = (e: unknown) => reasonTag(e) === "Unknown" && /file handle is closed/.test(String((e as Error).message))

const denied = (e: unknown) => kernelCause(e)?._tag === "PermissionDenied"

describe.each(strategies)("kernel open over NodeAtomicFileSystem (%s)", (strategy) => {
  const host = () => NodeAtomicFileSystem.layerWith({ strategy })

  const within = <A, E>(
    root: string,
    grants: Layer.Layer<GrantStore.GrantStore, never, never> | ReturnType<typeof allowAll>,
    program: (fs: FileSystem.FileSystem) => Effect.Effect<A, E, Scope.Scope>
  ): Effect.Effect<A, E | PlatformError.PlatformError> =>
    Effect.scoped(
      Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return yield* program(fs)
      })
    ).pipe(Effect.provide(kernelLayer(host(), root, grants)))

  it.effect("reads and writes through the handle as node:fs does on a twin file", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "alpha beta", "twin.txt": "alpha beta" })
      const got = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.gen(function* () {
          const file = yield* fs.open("a.txt", { flag: "r+" })
          const head = yield* file.readAlloc(5)
          yield* file.seek(6n, "start")
          yield* file.writeAll(bytes("BETA"))
          const info = yield* file.stat
          const created = yield* fs.open("new.txt", { flag: "wx", mode: 0o600 })
          yield* created.writeAll(bytes("made"))
          return { head: text(head), size: Number(info.size) }
        })
      )
      const twin = NFS.openSync(s.abs("twin.txt"), "r+")
      NFS.writeSync(twin, "BETA", 6)
      NFS.closeSync(twin)
      expect(got).toEqual({ head: Option.some("alpha"), size: 10 })
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe(NFS.readFileSync(s.abs("twin.txt"), "utf8"))
      expect(NFS.readFileSync(s.abs("new.txt"), "utf8")).toBe("made")
      expect(NFS.statSync(s.abs("new.txt")).mode & 0o777).toBe(0o600)
    })
  )

  it.effect("a read grant yields only a read-only handle: writable flags are refused, and so is a write through r", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const before = snapshotTree(s.root)
      const errors = yield* within(s.root, readOnly(s.root), (fs) =>
        Effect.gen(function* () {
          const refused = []
          for (const flag of ["r+", "w", "wx", "a", "ax"] as const)
            refused.push(yield* Effect.flip(Effect.scoped(fs.open("a.txt", { flag }))))
          const file = yield* fs.open("a.txt")
          refused.push(yield* Effect.flip(file.writeAll(bytes("XX"))))
          refused.push(yield* Effect.flip(file.truncate(0)))
          return { refused, read: text(yield* file.readAlloc(4)) }
        })
      )
      for (const e of errors.refused) expect(denied(e)).toBe(true)
      expect(errors.read).toEqual(Option.some("keep"))
      expect(snapshotTree(s.root)).toEqual(before)
    })
  )

  it.effect("an r handle cannot write even where writing is granted: its descriptor is read-only", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const e = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.flatMap(fs.open("a.txt"), (file) => Effect.flip(file.writeAll(bytes("XX"))))
      )
      expect(reasonTag(e)).not.toBeUndefined()
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe("keep")
    })
  )

  it.effect("refuses a symlink, final or on the way, that node:fs follows outside", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "d/": "" })
      NFS.symlinkSync(s.secret, s.abs("final.txt"))
      NFS.symlinkSync(s.outside, s.abs("d/up"))
      // Positive controls: a path-based open reaches the secret both ways.
      expect(NFS.readFileSync(s.abs("final.txt"), "utf8")).toBe("TOP SECRET")
      expect(NFS.readFileSync(s.abs("d/up/secret.txt"), "utf8")).toBe("TOP SECRET")
      const before = snapshotTree(s.outside)
      const errors = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.all([
          Effect.flip(Effect.scoped(fs.open("final.txt"))),
          Effect.flip(Effect.scoped(fs.open("d/up/secret.txt"))),
          Effect.flip(Effect.scoped(fs.open("final.txt", { flag: "w" }))),
          Effect.flip(Effect.scoped(fs.open("d/up/new.txt", { flag: "wx" })))
        ])
      )
      for (const e of errors) expect(reasonTag(e)).toMatch(/PermissionDenied|NotFound|BadResource/)
      expect(snapshotTree(s.outside)).toEqual(before)
    })
  )

  it.effect("refuses a hard link to a file outside, which node:fs opens", () =>
    Effect.gen(function* () {
      const s = scratch()
      NFS.linkSync(s.secret, s.abs("hard.txt"))
      expect(NFS.readFileSync(s.abs("hard.txt"), "utf8")).toBe("TOP SECRET")
      const errors = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.all([Effect.flip(Effect.scoped(fs.open("hard.txt"))), Effect.flip(Effect.scoped(fs.open("hard.txt", { flag: "r+" })))])
      )
      for (const e of errors) expect(reasonTag(e)).toBe("PermissionDenied")
      expect(NFS.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    })
  )

  it.effect("a handle whose directory was moved outside the root is refused at its next call, and the file outside is untouched", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "d/f.txt": "inside" })
      const after = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.gen(function* () {
          const file = yield* fs.open("d/f.txt", { flag: "r+" })
          expect(text(yield* file.readAlloc(6))).toEqual(Option.some("inside"))
          NFS.renameSync(s.abs("d"), `${s.outside}/d`)
          // Control: the descriptor itself still reaches the moved file; only the kernel's bind stops it.
          return [yield* Effect.flip(file.readAlloc(6, { position: 0n })), yield* Effect.flip(file.writeAll(bytes("OUT")))]
        })
      )
      for (const e of after) expect(denied(e)).toBe(true)
      expect(NFS.readFileSync(`${s.outside}/d/f.txt`, "utf8")).toBe("inside")
    })
  )

  it.effect("binds the handle to the file it opened: a file swapped in at its path is not acted on", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "first" })
      const e = yield* within(s.root, allowAll(s.root), (fs) =>
        Effect.gen(function* () {
          const file = yield* fs.open("a.txt", { flag: "r+" })
          NFS.renameSync(s.abs("a.txt"), s.abs("a.old"))
          NFS.writeFileSync(s.abs("a.txt"), "second")
          return yield* Effect.flip(file.writeAll(bytes("XX")))
        })
      )
      expect(kernelCause(e)?._tag === "PermissionDenied" && (kernelCause(e) as PermissionDenied).reason).toMatch(
        /descriptor no longer names/
      )
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe("second")
      expect(NFS.readFileSync(s.abs("a.old"), "utf8")).toBe("first")
    })
  )

  it.effect("a revoked grant refuses the next call on a handle opened under it", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const grants = revocable()
      const e = yield* within(s.root, grants.layer, (fs) =>
        Effect.gen(function* () {
          const file = yield* fs.open("a.txt", { flag: "r+" })
          expect(text(yield* file.readAlloc(4))).toEqual(Option.some("keep"))
          grants.state.granted = false
          return [yield* Effect.flip(file.readAlloc(4, { position: 0n })), yield* Effect.flip(file.writeAll(bytes("XX")))]
        })
      )
      for (const x of e) expect(denied(x)).toBe(true)
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe("keep")
    })
  )

  it.effect("a handle kept past its scope (the kernel layer closed with it) is closed: EBADF, nothing written", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const file = yield* within(s.root, allowAll(s.root), (fs) => fs.open("a.txt", { flag: "r+" }))
      const e = yield* Effect.flip(file.writeAll(bytes("XX")))
      expect(closedHandle(e)).toBe(true)
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe("keep")
    })
  )

  it.effect("closing the extension closes the handles it opened", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const atomic = NodeAtomicFileSystem.make({ strategy })
      const rootIdentity = yield* atomic.identifyRoot(s.root)
      const scope = yield* Scope.make()
      const file = yield* atomic
        .open({ operation: "open", path: s.abs("a.txt"), boundaryRoot: s.root, logicalRoot: s.root, rootIdentity, options: { flag: "r+" } })
        .pipe(Scope.provide(scope))
      expect(text(yield* file.readAlloc(4))).toEqual(Option.some("keep"))
      atomic.close()
      const e = yield* Effect.flip(file.writeAll(bytes("XX")))
      yield* Scope.close(scope, Exit.void)
      expect(closedHandle(e)).toBe(true)
      expect(NFS.readFileSync(s.abs("a.txt"), "utf8")).toBe("keep")
    })
  )

  it.effect("bad input is a BadArgument: a + flag, a relative or outside path, a bad mode", () =>
    Effect.gen(function* () {
      const s = scratch()
      s.make({ "a.txt": "keep" })
      const atomic = NodeAtomicFileSystem.make({ strategy })
      const rootIdentity = yield* atomic.identifyRoot(s.root)
      const roots = { boundaryRoot: s.root, logicalRoot: s.root, rootIdentity }
      const open = (path: string, options?: { flag?: FileSystem.OpenFlag; mode?: number }) =>
        Effect.flip(Effect.scoped(atomic.open({ operation: "open", path, ...roots, options })))
      expect(reasonTag(yield* open(s.abs("a.txt"), { flag: "w+" }))).toBe("BadArgument")
      expect(reasonTag(yield* open("a.txt"))).toBe("BadArgument")
      expect(reasonTag(yield* open(s.secret))).toBe("PermissionDenied")
      expect(reasonTag(yield* open(s.abs("n.txt"), { flag: "wx", mode: 0o70000 }))).toBe("BadArgument")
      expect(reasonTag(yield* open(`${s.root}/../outside/secret.txt`))).toBe("PermissionDenied")
      atomic.close()
      expect(NFS.existsSync(s.abs("n.txt"))).toBe(false)
    })
  )
})
