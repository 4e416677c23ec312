/**
 * Every method of Effect 4.1's `FileSystem` through the kernel, over every host: the answer on a
 * quiet tree (the same from every host), and the denial of the same call, which must leave the disk
 * exactly as it was.
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect, FileSystem, Option, type Path, type Scope, Sink, Stream } from "effect"
import { GrantStore, KernelFileSystem } from "../../src/kernel/index.ts"
import { giveTo } from "../support/ids.ts"
import { scratch, type Scratch } from "../support/tree.ts"
import { hosts } from "./support/hosts.ts"
import { allowAll, kernelCause, kernelLayer, reasonTag, snapshotTree } from "./support/kernel.ts"

type Program = (fs: FileSystem.FileSystem, s: Scratch) => Effect.Effect<unknown, unknown, Scope.Scope | Path.Path>

interface Case {
  readonly method: string
  readonly run: Program
  /** The answer, in a host-independent form; `undefined` when the call is refused on every host. */
  readonly answer?: (result: unknown, s: Scratch) => unknown
  readonly expected?: unknown
  /** Refused whatever the grants say: the method cannot be confined. */
  readonly unconfinable?: true
  /** The hosts on which an otherwise unconfinable method answers: pinnedfs's extension opens beneath its root. */
  readonly confinedOn?: (host: string) => boolean
}

const text = (bytes: Uint8Array) => Buffer.from(bytes).toString("utf8")
const rel = (s: Scratch, p: unknown) => NPath.relative(s.root, String(p))
const infoShape = (info: FileSystem.File.Info) => ({ type: info.type, size: Number(info.size) })

const tree = {
  "a.txt": "alpha",
  "dir/b.txt": "bravo",
  "dir/sub/c.txt": "charlie",
  "empty/": ""
}

const cases: ReadonlyArray<Case> = [
  // Mode bits say nothing of ACLs, capabilities or a read-only mount, so an answer guessed from
  // them would be a guess: refused, as the client's kernel refuses it.
  { method: "access", run: (fs) => fs.access("a.txt", { readable: true }), unconfinable: true },
  {
    method: "copy",
    expected: "alpha",
    run: (fs) => fs.copy("a.txt", "copy.txt"),
    answer: (_, s) => NFS.readFileSync(s.abs("copy.txt"), "utf8")
  },
  {
    method: "copyFile",
    expected: "alpha",
    run: (fs) => fs.copyFile("a.txt", "dir/copy.txt"),
    answer: (_, s) => NFS.readFileSync(s.abs("dir/copy.txt"), "utf8")
  },
  {
    method: "chmod",
    expected: 0o600,
    run: (fs) => fs.chmod("a.txt", 0o600),
    answer: (_, s) => NFS.lstatSync(s.abs("a.txt")).mode & 0o7777
  },
  {
    // Given away to nobody (as root, which CI is), so the owner lstat shows afterwards proves the
    // call reached the file; unprivileged, a user can only give a file to itself.
    method: "chown",
    expected: [giveTo.uid, giveTo.gid],
    run: (fs) => fs.chown("a.txt", giveTo.uid, giveTo.gid),
    answer: (_, s) => [NFS.lstatSync(s.abs("a.txt")).uid, NFS.lstatSync(s.abs("a.txt")).gid]
  },
  { method: "exists", expected: [true, false], run: (fs) => Effect.all([fs.exists("a.txt"), fs.exists("nope")]), answer: (r) => r },
  // Answers absolute paths, as the client's kernel passes the executor's answer on.
  {
    method: "glob",
    expected: ["a.txt", "dir/b.txt", "dir/sub/c.txt"],
    run: (fs) => fs.glob("**/*.txt"),
    answer: (r, s) => (r as Array<string>).map((p) => rel(s, p)).sort()
  },
  { method: "link", run: (fs) => fs.link("a.txt", "hard.txt"), unconfinable: true },
  { method: "lstat", expected: "Directory", run: (fs) => fs.lstat("dir"), answer: (r) => infoShape(r as FileSystem.File.Info).type },
  {
    method: "makeDirectory",
    expected: true,
    run: (fs) => fs.makeDirectory("new/deep", { recursive: true }),
    answer: (_, s) => NFS.statSync(s.abs("new/deep")).isDirectory()
  },
  {
    method: "makeTempDirectory",
    expected: true,
    run: (fs) => fs.makeTempDirectory({ directory: "empty", prefix: "t-" }),
    answer: (r, s) => rel(s, r).startsWith("empty/t-") && NFS.statSync(String(r)).isDirectory()
  },
  {
    method: "makeTempDirectoryScoped",
    expected: false,
    run: (fs) => fs.makeTempDirectoryScoped({ directory: "empty" }),
    answer: (r) => NFS.existsSync(String(r)) // after the scope closed
  },
  {
    method: "makeTempFile",
    expected: true,
    run: (fs) => fs.makeTempFile({ directory: "empty", suffix: ".tmp" }),
    answer: (r, s) => rel(s, r).startsWith("empty/") && String(r).endsWith(".tmp") && NFS.readFileSync(String(r), "utf8") === ""
  },
  {
    method: "makeTempFileScoped",
    expected: false,
    run: (fs) => fs.makeTempFileScoped({ directory: "empty" }),
    answer: (r) => NFS.existsSync(String(r))
  },
  // An open of the host path followed by a check acts before it knows where the path led: refused,
  // as the client's kernel refuses it, except over pinnedfs's extension, which opens beneath its root.
  {
    method: "open",
    expected: Option.some("bravo"),
    run: (fs) =>
      Effect.gen(function* () {
        const file = yield* fs.open("dir/b.txt")
        const bytes = yield* file.readAlloc(64)
        return Option.map(bytes, text)
      }),
    answer: (r) => r,
    unconfinable: true,
    confinedOn: (host) => host.startsWith("NodeAtomicFileSystem")
  },
  {
    method: "readDirectory",
    expected: ["b.txt", "sub"],
    run: (fs) => fs.readDirectory("dir"),
    answer: (r) => [...(r as Array<string>)].sort()
  },
  {
    method: "readDirectoryEntries",
    expected: [
      { name: "b.txt", type: "File" },
      { name: "sub", type: "Directory" }
    ],
    run: (fs) => fs.readDirectoryEntries("dir"),
    answer: (r) => [...(r as ReadonlyArray<FileSystem.DirectoryEntry>)].sort((a, b) => a.name.localeCompare(b.name))
  },
  { method: "readFile", expected: "charlie", run: (fs) => fs.readFile("dir/sub/c.txt"), answer: (r) => text(r as Uint8Array) },
  { method: "readFileString", expected: "alpha", run: (fs) => fs.readFileString("a.txt"), answer: (r) => r },
  { method: "readLink", expected: "a.txt", run: (fs) => fs.readLink("link"), answer: (r) => r },
  {
    method: "realPath",
    expected: "dir/sub",
    run: (fs) => fs.realPath("dir/sub"),
    answer: (r, s) => NPath.relative(NFS.realpathSync(s.root), String(r))
  },
  { method: "remove", expected: false, run: (fs) => fs.remove("dir", { recursive: true }), answer: (_, s) => NFS.existsSync(s.abs("dir")) },
  {
    method: "rename",
    expected: "alpha",
    run: (fs) => fs.rename("a.txt", "dir/moved.txt"),
    answer: (_, s) => NFS.readFileSync(s.abs("dir/moved.txt"), "utf8")
  },
  {
    method: "sink",
    run: (fs) => Stream.make(new TextEncoder().encode("sunk")).pipe(Stream.run(fs.sink("sunk.txt"))),
    unconfinable: true
  },
  {
    method: "stat",
    expected: { type: "File", size: 5 },
    run: (fs) => fs.stat("a.txt"),
    answer: (r) => infoShape(r as FileSystem.File.Info)
  },
  {
    method: "stream",
    run: (fs) =>
      fs.stream("dir/b.txt", { chunkSize: 2 }).pipe(
        Stream.runCollect,
        Effect.map((chunks) => text(Buffer.concat([...chunks])))
      ),
    unconfinable: true
  },
  { method: "symlink", run: (fs) => fs.symlink("a.txt", "made-link"), unconfinable: true },
  { method: "truncate", run: (fs) => fs.truncate("a.txt", 2), unconfinable: true },
  { method: "utimes", run: (fs) => fs.utimes("a.txt", 1_000_000, 2_000_000), unconfinable: true },
  { method: "watch", run: (fs) => Stream.runHead(fs.watch("dir")), unconfinable: true },
  {
    method: "writeFile",
    expected: "hi",
    run: (fs) => fs.writeFile("dir/w.bin", new Uint8Array([104, 105])),
    answer: (_, s) => NFS.readFileSync(s.abs("dir/w.bin"), "utf8")
  },
  {
    method: "writeFileString",
    expected: "over",
    run: (fs) => fs.writeFileString("a.txt", "over"),
    answer: (_, s) => NFS.readFileSync(s.abs("a.txt"), "utf8")
  }
]

// Every method of the interface is covered (a new method in Effect makes this fail).
it("covers every method of Effect's FileSystem", () => {
  const methods = Object.keys(FileSystem.makeNoop({})).filter((k) => typeof (FileSystem.makeNoop({}) as never)[k] === "function")
  expect(cases.map((c) => c.method).sort()).toEqual(methods.sort())
})

const setup = () => {
  const s = scratch()
  s.make(tree)
  NFS.symlinkSync("a.txt", s.abs("link"))
  return s
}

const answers = new Map<string, Map<string, unknown>>()

const denyAll = (root: string) =>
  GrantStore.layerRules({
    root,
    deny: [
      { action: "fs:read", glob: "**" },
      { action: "fs:write", glob: "**" }
    ]
  })

describe.each(hosts)("every method through the kernel ($name)", (host) => {
  for (const c of cases) {
    const refused = c.unconfinable === true && c.confinedOn?.(host.name) !== true
    it.effect(`${c.method}: ${refused ? "refused as unconfinable" : "answers"}`, () =>
      Effect.gen(function* () {
        const s = setup()
        const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
        const before = snapshotTree(s.root, s.outside)
        const result = yield* Effect.result(
          Effect.gen(function* () {
            const fs = yield* FileSystem.FileSystem
            return yield* c.run(fs, s)
          }).pipe(Effect.scoped, Effect.provide(layer))
        )
        if (refused) {
          expect(result._tag).toBe("Failure")
          const error = result._tag === "Failure" ? result.failure : undefined
          expect(reasonTag(error)).toBe("PermissionDenied")
          const cause = kernelCause(error)
          expect(cause?._tag === "PermissionDenied" && cause.reason).toBe(KernelFileSystem.unconfinedDescription)
          expect(snapshotTree(s.root, s.outside)).toEqual(before)
          return
        }
        if (result._tag === "Failure") throw result.failure
        const answer = c.answer!(result.success, s)
        expect(answer).toEqual(c.expected)
        const byHost = answers.get(c.method) ?? new Map<string, unknown>()
        byHost.set(host.name, answer)
        answers.set(c.method, byHost)
      })
    )

    it.effect(`${c.method}: denied, and the disk is untouched`, () =>
      Effect.gen(function* () {
        const s = setup()
        const layer = kernelLayer(host.make().layer, s.root, denyAll(s.root))
        const before = snapshotTree(s.root, s.outside)
        const error = yield* Effect.flip(
          Effect.gen(function* () {
            const fs = yield* FileSystem.FileSystem
            return yield* c.run(fs, s)
          }).pipe(Effect.scoped, Effect.provide(layer))
        )
        expect(reasonTag(error)).toBe("PermissionDenied")
        expect(kernelCause(error)?._tag).toBe("PermissionDenied")
        expect(snapshotTree(s.root, s.outside)).toEqual(before)
      })
    )
  }
})

afterAll(() => {
  // On a quiet tree every host gives the same answer.
  for (const [method, byHost] of answers) {
    const values = [...byHost.values()]
    for (const value of values) expect(value, method).toEqual(values[0])
  }
})

describe("answers on a quiet tree", () => {
  it.effect("are the expected ones (over the first host)", () =>
    Effect.gen(function* () {
      const host = hosts[0]!
      const s = setup()
      const layer = kernelLayer(host.make().layer, s.root, allowAll(s.root))
      const got = yield* Effect.gen(function* () {
        const fs = yield* FileSystem.FileSystem
        return {
          glob: [...(yield* fs.glob("**/*.txt"))].sort(),
          entries: [...(yield* fs.readDirectoryEntries("."))].sort((a, b) => a.name.localeCompare(b.name)),
          link: yield* fs.readLink("link"),
          lstat: (yield* fs.lstat("link")).type,
          stat: (yield* fs.stat("link")).type,
          viaLink: reasonTag(yield* Effect.flip(fs.readFileString("link")))
        }
      }).pipe(Effect.scoped, Effect.provide(layer))
      // The executor acts on the path the caller gave, which is what the client's kernel sends (not the
      // target it authorized): a no-follow executor stats the link itself and refuses to read through it.
      expect(got).toEqual({
        glob: ["a.txt", "dir/b.txt", "dir/sub/c.txt"].map((p) => s.abs(p)),
        entries: [
          { name: "a.txt", type: "File" },
          { name: "dir", type: "Directory" },
          { name: "empty", type: "Directory" },
          { name: "link", type: "SymbolicLink" }
        ],
        link: "a.txt",
        lstat: "SymbolicLink",
        stat: "SymbolicLink",
        viaLink: "PermissionDenied"
      })
    })
  )
})

// Keep Sink referenced for the sink case's type inference.
void Sink
