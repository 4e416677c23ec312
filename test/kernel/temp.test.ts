/**
 * Temporary files through the kernel: a `prefix` or `suffix` is a fragment of one new name, never a
 * path, and what is really created (and, for the scoped forms, removed) is what gets authorized.
 *
 * The attacks below were found against the kernel: an agent holding nothing but a write grant on
 * `<system-temp>` (or on one folder) used `..` and `/` in the fragments to truncate, create and
 * recursively delete things outside what it was granted.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Glob, type PlatformError } from "effect"
import { GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { scratch, type Scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { scratchSystemTemp } from "./support/systemTemp.ts"
import { allowAllBut, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

const systemTemp = scratchSystemTemp()

/**
 * A scratch tree whose "system temporary directory" is `<base>/systmp`, so that what an escape
 * from it reaches is the scratch tree's own `outside/`, never the machine's /tmp or /.
 */
const world = () => {
  const s = scratch()
  const base = NPath.dirname(s.root)
  const systmp = systemTemp(base)
  NFS.writeFileSync(NPath.join(s.outside, "victim.txt"), "PRECIOUS")
  NFS.mkdirSync(NPath.join(s.outside, "victim-dir"))
  NFS.writeFileSync(NPath.join(s.outside, "victim-dir", "keep.txt"), "KEEP")
  return { s, base, systmp }
}

/** Only `<system-temp>` may be written (the grant a temp-file user is given). */
const systemTempOnly = (s: Scratch) =>
  GrantStore.layerRules({
    allow: [
      {
        action: "fs:write",
        glob: Glob.escape(NPath.join(NPath.dirname(s.root), KernelFileSystem.systemTemporaryDirectoryName))
      }
    ]
  })

/** Write everywhere in the workspace except inside `tmp/` and `secret/` (the folders themselves are writable). */
const tmpContentsDenied = (s: Scratch) =>
  GrantStore.layerRules(
    allowAllBut(s.root, [
      { action: "fs:write", glob: "tmp/*" },
      { action: "fs:write", glob: "tmp/*/**" },
      { action: "fs:write", glob: "secret/**" }
    ])
  )

const attempt = <A>(
  layer: ReturnType<typeof kernelLayer>,
  f: (fs: FileSystem.FileSystem) => Effect.Effect<A, PlatformError.PlatformError, import("effect").Scope.Scope>
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    return yield* Effect.result(Effect.scoped(f(fs)))
  }).pipe(Effect.provide(layer))

describe.each(hosts)("temporary files ($name)", (host) => {
  describe("a prefix or suffix is a name fragment, never a path", () => {
    it.effect("makeTempFile's suffix cannot reach (and truncate) a file outside the temp directory", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        const before = snapshotTree(base)
        const suffix = `/../../${NPath.relative(NPath.join(base, "systmp"), NPath.join(s.outside, "victim.txt"))}`
        const result = yield* attempt(kernelLayer(host.make().layer, s.root, systemTempOnly(s)), (fs) => fs.makeTempFile({ suffix }))
        expect(NFS.readFileSync(NPath.join(s.outside, "victim.txt"), "utf8")).toBe("PRECIOUS")
        expect(result._tag).toBe("Failure")
        expect(result._tag === "Failure" && reasonTag(result.failure)).toBe("BadArgument")
        expect(snapshotTree(base)).toEqual(before)
      })
    )

    it.effect("makeTempFileScoped's cleanup cannot remove a directory outside what it made", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        const before = snapshotTree(base)
        const suffix = `/../../${NPath.relative(NPath.join(base, "systmp"), NPath.join(s.outside, "victim-dir", "x"))}`
        const result = yield* attempt(kernelLayer(host.make().layer, s.root, systemTempOnly(s)), (fs) => fs.makeTempFileScoped({ suffix }))
        expect(NFS.readFileSync(NPath.join(s.outside, "victim-dir", "keep.txt"), "utf8")).toBe("KEEP")
        expect(result._tag === "Failure" && reasonTag(result.failure)).toBe("BadArgument")
        expect(snapshotTree(base)).toEqual(before)
      })
    )

    it.effect("makeTempDirectory's prefix cannot place the directory outside the temp directory", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        const before = snapshotTree(base)
        const result = yield* attempt(kernelLayer(host.make().layer, s.root, systemTempOnly(s)), (fs) =>
          fs.makeTempDirectory({ prefix: "../outside/planted-" })
        )
        expect(NFS.readdirSync(s.outside).sort()).toEqual(["secret.txt", "victim-dir", "victim.txt"])
        expect(result._tag === "Failure" && reasonTag(result.failure)).toBe("BadArgument")
        expect(snapshotTree(base)).toEqual(before)
      })
    )

    it.effect("every form refuses `/`, `\\`, `..` and NUL in either fragment as BadArgument, creating nothing", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        s.make({ "tmp/": "" })
        const before = snapshotTree(base)
        const layer = kernelLayer(host.make().layer, s.root, tmpContentsDenied(s))
        const bad = ["a/b", "a\\b", "..", "x..y", "\0"]
        const tags: Array<string | undefined> = []
        for (const fragment of bad) {
          for (const directory of [undefined, "tmp"]) {
            const options = { directory, prefix: fragment }
            const suffixed = { directory, suffix: fragment }
            for (const run of [
              (fs: FileSystem.FileSystem) => fs.makeTempDirectory(options),
              (fs: FileSystem.FileSystem) => fs.makeTempDirectoryScoped(options),
              (fs: FileSystem.FileSystem) => fs.makeTempFile(options),
              (fs: FileSystem.FileSystem) => fs.makeTempFileScoped(options),
              (fs: FileSystem.FileSystem) => fs.makeTempFile(suffixed),
              (fs: FileSystem.FileSystem) => fs.makeTempFileScoped(suffixed)
            ]) {
              const result = yield* attempt(layer, run)
              tags.push(result._tag === "Failure" ? reasonTag(result.failure) : "succeeded")
            }
          }
        }
        expect(new Set(tags)).toEqual(new Set(["BadArgument"]))
        expect(snapshotTree(base)).toEqual(before)
      })
    )
  })

  describe("what is really created is authorized", () => {
    it.effect("makeTempFile in a folder whose contents are write-denied creates nothing there", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        s.make({ "tmp/": "" })
        const before = snapshotTree(base)
        const layer = kernelLayer(host.make().layer, s.root, tmpContentsDenied(s))
        for (const run of [
          (fs: FileSystem.FileSystem) => fs.makeTempFile({ directory: "tmp" }),
          (fs: FileSystem.FileSystem) => fs.makeTempFileScoped({ directory: "tmp" }),
          (fs: FileSystem.FileSystem) => fs.makeTempDirectory({ directory: "tmp" }),
          (fs: FileSystem.FileSystem) => fs.makeTempDirectoryScoped({ directory: "tmp" })
        ]) {
          const result = yield* attempt(layer, run)
          expect(result._tag === "Failure" && reasonTag(result.failure)).toBe("PermissionDenied")
        }
        expect(NFS.readdirSync(s.abs("tmp"))).toEqual([])
        expect(snapshotTree(base)).toEqual(before)
      })
    )

    it.effect("a scoped temp file cannot write into, then remove, a write-denied folder", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        s.make({ "tmp/": "", "secret/keep.txt": "KEEP" })
        const before = snapshotTree(base)
        const layer = kernelLayer(host.make().layer, s.root, tmpContentsDenied(s))
        const result = yield* attempt(layer, (fs) => fs.makeTempFileScoped({ directory: "tmp", suffix: "/../../../secret/new" }))
        expect(result._tag).toBe("Failure")
        expect(NFS.readFileSync(s.abs("secret/keep.txt"), "utf8")).toBe("KEEP")
        expect(snapshotTree(base)).toEqual(before)
      })
    )

    it.effect("a scoped temp made where writing is allowed is created, then removed, and nothing else is", () =>
      Effect.gen(function* () {
        const { base, s } = world()
        s.make({ "work/keep.txt": "KEEP" })
        const before = snapshotTree(base)
        const layer = kernelLayer(host.make().layer, s.root, tmpContentsDenied(s))
        const made = yield* Effect.gen(function* () {
          const fs = yield* FileSystem.FileSystem
          return yield* Effect.scoped(
            Effect.gen(function* () {
              const file = yield* fs.makeTempFileScoped({ directory: "work", prefix: "p-", suffix: ".txt" })
              const dir = yield* fs.makeTempDirectoryScoped({ directory: "work", prefix: "d-" })
              expect(NFS.statSync(file).isFile()).toBe(true)
              expect(NFS.statSync(dir).isDirectory()).toBe(true)
              // No temp directory wider than 0700.
              expect(NFS.statSync(NPath.dirname(file)).mode & 0o777).toBe(0o700)
              expect(NFS.statSync(dir).mode & 0o777).toBe(0o700)
              return [file, dir]
            })
          )
        }).pipe(Effect.provide(layer))
        expect(NPath.relative(s.root, made[0]!)).toMatch(/^work\/p-[^/]+\/[^/]+\.txt$/)
        expect(NPath.relative(s.root, made[1]!)).toMatch(/^work\/d-[^/]+$/)
        // The same entries as before (only `work`'s own times moved).
        expect(Object.keys(snapshotTree(base)).sort()).toEqual(Object.keys(before).sort())
        expect(NFS.readFileSync(s.abs("work/keep.txt"), "utf8")).toBe("KEEP")
      })
    )
  })
})
