/**
 * The grant-store decision log: for the same operation on the same tree, the capabilities the
 * kernel asks about are exactly the client's questions, in the client's order (computed by the
 * reference model in support/seedModel.ts), followed by pinnedfs's documented additions.
 *
 * Trees hold links inside, to outside, into a denied area and out of it, dangling, chained and
 * looping links, a link to the workspace's parent, hard links; every case runs with the workspace
 * named directly and through a symlink. What a listing or a tree operation enumerates is taken from
 * the executor itself (that is what exists, not a decision); which questions follow from it is the
 * model's.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Layer, type PlatformError, Result } from "effect"
import type { AtomicFileSystem } from "../../src/protocol/wire.ts"
import { FileSystemBatch, GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { scratch } from "../support/tree.ts"
import { type Host, hosts } from "./support/hosts.ts"
import { allowAllBut, kernelLayer, readWrite } from "./support/kernel.ts"
import { listingQuestions, makeModel, type Question } from "./support/seedModel.ts"

interface World {
  readonly logicalRoot: string
  readonly boundaryRoot: string
  readonly outside: string
}

const build = (spelling: "direct" | "symlinked root"): World => {
  const s = scratch()
  s.make({
    "a.txt": "a",
    "dir/b.txt": "b",
    "dir/sub/c.txt": "c",
    "denied/x.txt": "x",
    "denied/inner/y.txt": "y",
    "hl1.txt": "hard"
  })
  NFS.linkSync(s.abs("hl1.txt"), s.abs("hl2.txt"))
  NFS.symlinkSync("a.txt", s.abs("in-link"))
  NFS.symlinkSync("dir", s.abs("dir-link"))
  NFS.symlinkSync(s.outside, s.abs("out-link"))
  NFS.symlinkSync(s.secret, s.abs("out-file"))
  NFS.symlinkSync("../outside/secret.txt", s.abs("rel-out"))
  NFS.symlinkSync("denied/x.txt", s.abs("to-denied"))
  NFS.symlinkSync("../a.txt", s.abs("denied/back"))
  NFS.symlinkSync("nowhere", s.abs("dangling"))
  NFS.symlinkSync("chain2", s.abs("chain1"))
  NFS.symlinkSync("chain3", s.abs("chain2"))
  NFS.symlinkSync("a.txt", s.abs("chain3"))
  NFS.symlinkSync("loop", s.abs("loop"))
  NFS.symlinkSync("..", s.abs("up"))
  if (spelling === "direct") return { logicalRoot: s.root, boundaryRoot: s.root, outside: s.outside }
  const logical = NPath.join(NPath.dirname(s.root), "workspace-link")
  NFS.symlinkSync(s.root, logical)
  return { logicalRoot: logical, boundaryRoot: s.root, outside: s.outside }
}

const paths = [
  "a.txt",
  "dir",
  "dir/b.txt",
  "missing",
  "missing/x",
  "a.txt/x",
  "in-link",
  "dir-link/b.txt",
  "out-link",
  "out-link/secret.txt",
  "out-file",
  "rel-out",
  "to-denied",
  "denied/x.txt",
  "denied/back",
  "dangling",
  "chain1",
  "loop",
  "up/root/a.txt",
  "hl1.txt"
]

const rulesOf = (root: string) => GrantStore.fromRules(allowAllBut(root, readWrite("denied/**")))

/** The kernel over `host` in `world`, its store logging every question; and the model's decisions. */
const harness = (host: Host, world: World) =>
  Effect.gen(function* () {
    const rules = yield* Effect.provide(
      rulesOf(world.logicalRoot),
      (yield* Effect.promise(() => import("@effect/platform-node/NodePath"))).layer
    )
    const log: Array<Question> = []
    const store = GrantStore.GrantStore.of({
      check: (capability) =>
        Effect.andThen(
          Effect.sync(() => void log.push({ ...capability })),
          rules.check(capability)
        )
    })
    const decide = (q: Question) => Result.isSuccess(Effect.runSync(Effect.result(rules.check(q))))
    const made = host.make()
    const layer = kernelLayer(made.layer, world.logicalRoot, Layer.succeed(GrantStore.GrantStore, store))
    const model = makeModel({ logicalRoot: world.logicalRoot, boundaryRoot: world.boundaryRoot, noFollow: host.noFollow, decide })
    return { log, decide, layer, model, hostLayer: made.layer }
  })

type Harness = Effect.Success<ReturnType<typeof harness>>

/** The executor under the kernel, for enumerations (what exists), with the root pinned as the kernel pins it. */
const executorOf = (hostLayer: Layer.Layer<FileSystem.FileSystem>, world: World) =>
  Effect.gen(function* () {
    const fs = yield* Effect.provide(Effect.service(FileSystem.FileSystem), hostLayer)
    const atomic = (fs as unknown as Record<symbol, AtomicFileSystem>)[KernelFileSystem.AtomicFileSystemTypeId]!
    const rootIdentity = yield* atomic.identifyRoot!(world.boundaryRoot)
    const root = { boundaryRoot: world.boundaryRoot, logicalRoot: world.logicalRoot, rootIdentity }
    return <A>(request: Record<string, unknown>) =>
      Effect.result(atomic.execute({ ...root, ...request } as never) as Effect.Effect<A, PlatformError.PlatformError>)
  })

type Op = (fs: FileSystem.FileSystem, p: string) => Effect.Effect<unknown, unknown>

const singles: ReadonlyArray<readonly [string, "fs:read" | "fs:write", Op]> = [
  ["readFileString", "fs:read", (fs, p) => fs.readFileString(p)],
  ["stat", "fs:read", (fs, p) => fs.stat(p)],
  ["lstat", "fs:read", (fs, p) => fs.lstat(p)],
  ["exists", "fs:read", (fs, p) => fs.exists(p)],
  ["readLink", "fs:read", (fs, p) => fs.readLink(p)],
  ["realPath", "fs:read", (fs, p) => fs.realPath(p)],
  ["writeFileString", "fs:write", (fs, p) => fs.writeFileString(p, "w")],
  ["remove", "fs:write", (fs, p) => fs.remove(p)],
  ["chmod", "fs:write", (fs, p) => fs.chmod(p, 0o644)],
  ["makeDirectory", "fs:write", (fs, p) => fs.makeDirectory(p)]
]

const run = <A>(
  layer: Layer.Layer<FileSystem.FileSystem | import("effect").Path.Path, PlatformError.PlatformError>,
  op: (fs: FileSystem.FileSystem) => Effect.Effect<A, unknown>
) =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    return yield* Effect.result(op(fs))
  }).pipe(Effect.provide(layer))

// The real executors (the test double's answers are not what the claim is about).
describe.each(hosts.filter((h) => h.name !== "test double"))("the decision log ($name)", (host) => {
  for (const spelling of ["direct", "symlinked root"] as const) {
    describe(`workspace named ${spelling}`, () => {
      for (const [name, action, op] of singles) {
        it.effect(`${name}: the client's questions, then ours`, () =>
          Effect.gen(function* () {
            // A tree is built afresh only after an operation that may have changed it succeeded
            // (a refused one changes nothing).
            let current: Harness | undefined
            for (const p of paths) {
              current ??= yield* harness(host, build(spelling))
              const { layer, log, model } = current
              log.length = 0
              const expected = model.operation([{ action, value: p }])
              const result = yield* run(layer, (fs) => op(fs, p))
              expect(log, `${name} ${p}`).toEqual([...expected.client, ...expected.ours])
              if (action === "fs:write" && Result.isSuccess(result)) current = undefined
            }
          })
        )
      }

      it.effect("rename: both paths as the client asks, then ours (the read of what moves)", () =>
        Effect.gen(function* () {
          let current: Harness | undefined
          for (const [from, to] of [...paths.map((p) => [p, "renamed"] as const), ...paths.map((p) => ["a.txt", p] as const)]) {
            current ??= yield* harness(host, build(spelling))
            const { layer, log, model } = current
            log.length = 0
            const expected = model.operation([
              { action: "fs:write", value: from },
              { action: "fs:write", value: to }
            ])
            // A file moved is also read at its own name (docs/kernel.md, "A rename reads what it moves").
            const moved = expected.granted ? [{ action: "fs:read" as const, resource: model.logicalOf(model.normalize(from)) }] : []
            const result = yield* run(layer, (fs) => fs.rename(from, to))
            const prefix = [...expected.client, ...expected.ours, ...moved]
            expect(log.slice(0, prefix.length), `rename ${from} ${to}`).toEqual(prefix)
            // Anything after is the tree below the source, asked entry by entry (a file has none,
            // except a directory source such as `dir`).
            if (from !== "dir") expect(log.slice(prefix.length), `rename ${from} ${to}`).toEqual([])
            if (Result.isSuccess(result)) current = undefined
          }
        })
      )

      it.effect("rename and remove of a tree: every entry below, in the executor's listing order", () =>
        Effect.gen(function* () {
          const world = build(spelling)
          const { hostLayer, layer, log, model } = yield* harness(host, world)
          const execute = yield* executorOf(hostLayer, world)
          const listed = yield* execute<Array<string>>({
            operation: "readDirectory",
            path: NPath.join(world.logicalRoot, "dir"),
            options: { recursive: true }
          })
          const entries = Result.getOrThrow(listed)
          const top = NPath.join(world.logicalRoot, "dir")
          const next = NPath.join(world.logicalRoot, "moved")
          const renameOp = model.operation([
            { action: "fs:write", value: "dir" },
            { action: "fs:write", value: "moved" }
          ])
          yield* run(layer, (fs) => fs.rename("dir", "moved"))
          expect(log).toEqual([
            ...renameOp.client,
            ...renameOp.ours,
            { action: "fs:read", resource: top },
            ...entries.flatMap((e) => [
              { action: "fs:write", resource: NPath.join(top, e) },
              { action: "fs:read", resource: NPath.join(top, e) },
              { action: "fs:write", resource: NPath.join(next, e) }
            ])
          ])
          log.length = 0
          const removeOp = model.operation([{ action: "fs:write", value: "moved" }])
          yield* run(layer, (fs) => fs.remove("moved", { recursive: true }))
          expect(log).toEqual([
            ...removeOp.client,
            ...removeOp.ours,
            ...entries.map((e) => ({ action: "fs:write", resource: NPath.join(next, e) }))
          ])
        })
      )

      it.effect("readDirectory: the client's question, then each listed name (and the directories holding it)", () =>
        Effect.gen(function* () {
          for (const [p, recursive] of [
            [".", true],
            [".", false],
            ["dir", true],
            ["denied", false],
            ["dir-link", false],
            ["up", false]
          ] as const) {
            const world = build(spelling)
            const { decide, hostLayer, layer, log, model } = yield* harness(host, world)
            const execute = yield* executorOf(hostLayer, world)
            const normalized = model.normalize(p)
            const expected = model.operation([{ action: "fs:read", value: p }])
            const listed = expected.granted
              ? yield* execute<Array<string>>({ operation: "readDirectory", path: normalized, options: { recursive } })
              : Result.succeed([] as Array<string>)
            const names = Result.isSuccess(listed) ? listed.success : []
            const base = model.logicalOf(normalized)
            const filter = listingQuestions(
              base,
              names.map((n) => NPath.join(base, n)),
              decide
            )
            yield* run(layer, (fs) => fs.readDirectory(p, { recursive }))
            expect(log, `readDirectory ${p}`).toEqual([...expected.client, ...expected.ours, ...filter])
          }
        })
      )

      it.effect("glob: the pattern normalized, its literal prefix asked about, then each result", () =>
        Effect.gen(function* () {
          for (const pattern of ["*.txt", "**/*.txt", "dir/**", "dir-link/*", "denied/*", "*/../denied/*", "out-link/*", "missing/*"]) {
            const world = build(spelling)
            const { decide, hostLayer, layer, log, model } = yield* harness(host, world)
            const execute = yield* executorOf(hostLayer, world)
            const full = model.normalize(pattern)
            const expected = model.operation([{ action: "fs:read", value: full, glob: true }])
            const found = expected.granted
              ? yield* execute<Array<string>>({ operation: "glob", pattern: full, root: world.logicalRoot })
              : Result.succeed([] as Array<string>)
            const results = (Result.isSuccess(found) ? found.success : []).map((r) => model.logicalOf(r)).filter(model.inside)
            const syntax = /[*?[\]{}\\]/
            const segments = NPath.relative(world.logicalRoot, full).split("/")
            const prefix = NPath.join(
              world.logicalRoot,
              ...segments.slice(
                0,
                segments.findIndex((s) => syntax.test(s))
              )
            )
            const filter = listingQuestions(prefix, results, decide)
            yield* run(layer, (fs) => fs.glob(pattern))
            expect(log, `glob ${pattern}`).toEqual([...expected.client, ...expected.ours, ...filter])
          }
        })
      )

      it.effect("a batch: every member resolved, the client's questions in request order, then ours member by member", () =>
        Effect.gen(function* () {
          const world = build(spelling)
          const { layer, log, model } = yield* harness(host, world)
          const expected = model.batch(paths.map((value) => ({ value })))
          const response = yield* Effect.gen(function* () {
            const fs = yield* FileSystem.FileSystem
            return yield* FileSystemBatch.fromFileSystem(fs)!.execute(paths.map((path) => ({ operation: "stat" as const, path })))
          }).pipe(Effect.provide(layer))
          expect(response.entries.length).toBe(paths.length)
          expect(log).toEqual([...expected.client, ...expected.ours])
        })
      )
    })
  }
})
