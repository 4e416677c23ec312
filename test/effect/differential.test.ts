/**
 * Differential suite: on link-free trees the extension must answer what `@effect/platform-node`'s
 * `NodeFileSystem` answers for the same absolute paths, and leave the tree the same way: same
 * values, same error tags. Each case runs on two identical trees, Node's on one and ours on the
 * other, then the answers (paths mapped to placeholders) and the resulting trees are compared.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Cause, Effect, Exit, FileSystem, Option, type PlatformError } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import { strategies } from "../support/strategies.ts"
import { base64, host, ok, run, type Workspace, workspace } from "./support.ts"

const spec = {
  "a/b/file.txt": "hello",
  "a/b/other.md": "other",
  "a/.hidden.txt": "hidden",
  "a/c/deep/x.txt": "x",
  "top.txt": "top",
  "z.md": "z",
  "empty/": ""
}

type P = (relative: string) => string

interface Case {
  readonly name: string
  readonly node: (fs: FileSystem.FileSystem, p: P) => Effect.Effect<unknown, PlatformError.PlatformError>
  readonly wire: (p: P) => Record<string, unknown>
  /** Listing order is unspecified (`readdir`): compare sorted. */
  readonly unordered?: boolean
  /**
   * A deliberate, documented difference in the error tag: both sides are asserted, so the test
   * notices if either changes.
   */
  readonly divergence?: { readonly node: string; readonly ours: string; readonly why: string }
}

const c = (name: string, node: Case["node"], wire: Case["wire"], unordered = false): Case => ({ name, node, wire, unordered })

/**
 * A write: Effect types its result `void`, whatever Node's call returns at runtime (`fs.mkdir` with
 * `recursive` answers the first directory it made), so only success is compared.
 */
const write = (name: string, node: Case["node"], wire: Case["wire"], divergence?: Case["divergence"]): Case => ({
  name,
  node: (f, p) => Effect.asVoid(node(f, p)),
  wire,
  ...(divergence === undefined ? {} : { divergence })
})

const rmDirectory = {
  node: "Unknown",
  ours: "BadResource",
  why: "Node answers ERR_FS_EISDIR, which Effect's mapping does not know; the addon answers EISDIR (native/ops/remove.cc)"
}

const reads: ReadonlyArray<Case> = [
  c(
    "exists file",
    (f, p) => f.exists(p("top.txt")),
    (p) => ({ operation: "exists", path: p("top.txt") })
  ),
  c(
    "exists directory",
    (f, p) => f.exists(p("a")),
    (p) => ({ operation: "exists", path: p("a") })
  ),
  c(
    "exists missing",
    (f, p) => f.exists(p("nope")),
    (p) => ({ operation: "exists", path: p("nope") })
  ),
  c(
    "exists root",
    (f, p) => f.exists(p("")),
    (p) => ({ operation: "exists", path: p("") })
  ),
  c(
    "stat file",
    (f, p) => f.stat(p("a/b/file.txt")),
    (p) => ({ operation: "stat", path: p("a/b/file.txt") })
  ),
  c(
    "stat directory",
    (f, p) => f.stat(p("a")),
    (p) => ({ operation: "stat", path: p("a") })
  ),
  c(
    "stat missing",
    (f, p) => f.stat(p("nope")),
    (p) => ({ operation: "stat", path: p("nope") })
  ),
  c(
    "stat under a file",
    (f, p) => f.stat(p("top.txt/x")),
    (p) => ({ operation: "stat", path: p("top.txt/x") })
  ),
  c(
    "readFile",
    (f, p) => f.readFile(p("a/b/file.txt")),
    (p) => ({ operation: "readFile", path: p("a/b/file.txt") })
  ),
  c(
    "readFile missing",
    (f, p) => f.readFile(p("nope")),
    (p) => ({ operation: "readFile", path: p("nope") })
  ),
  c(
    "readFile directory",
    (f, p) => f.readFile(p("a")),
    (p) => ({ operation: "readFile", path: p("a") })
  ),
  c(
    "readFile under a file",
    (f, p) => f.readFile(p("top.txt/x")),
    (p) => ({ operation: "readFile", path: p("top.txt/x") })
  ),
  c(
    "readFile with ..",
    (f, p) => f.readFile(p("a/b/../b/file.txt")),
    (p) => ({ operation: "readFile", path: p("a/b/../b/file.txt") })
  ),
  c(
    "readFileString",
    (f, p) => f.readFileString(p("top.txt")),
    (p) => ({ operation: "readFileString", path: p("top.txt") })
  ),
  c(
    "readFileString latin1",
    (f, p) => f.readFileString(p("top.txt"), "latin1"),
    (p) => ({ operation: "readFileString", path: p("top.txt"), encoding: "latin1" })
  ),
  c(
    "readFileString missing",
    (f, p) => f.readFileString(p("nope")),
    (p) => ({ operation: "readFileString", path: p("nope") })
  ),
  c(
    "readDirectory",
    (f, p) => f.readDirectory(p("a")),
    (p) => ({ operation: "readDirectory", path: p("a") }),
    true
  ),
  c(
    "readDirectory root",
    (f, p) => f.readDirectory(p("")),
    (p) => ({ operation: "readDirectory", path: p("") }),
    true
  ),
  c(
    "readDirectory empty",
    (f, p) => f.readDirectory(p("empty")),
    (p) => ({ operation: "readDirectory", path: p("empty") })
  ),
  c(
    "readDirectory recursive",
    (f, p) => f.readDirectory(p("a"), { recursive: true }),
    (p) => ({ operation: "readDirectory", path: p("a"), options: { recursive: true } }),
    true
  ),
  c(
    "readDirectory missing",
    (f, p) => f.readDirectory(p("nope")),
    (p) => ({ operation: "readDirectory", path: p("nope") })
  ),
  c(
    "readDirectory file",
    (f, p) => f.readDirectory(p("top.txt")),
    (p) => ({ operation: "readDirectory", path: p("top.txt") })
  ),
  c(
    "readLink file",
    (f, p) => f.readLink(p("top.txt")),
    (p) => ({ operation: "readLink", path: p("top.txt") })
  ),
  c(
    "readLink missing",
    (f, p) => f.readLink(p("nope")),
    (p) => ({ operation: "readLink", path: p("nope") })
  ),
  c(
    "realPath file",
    (f, p) => f.realPath(p("a/b/file.txt")),
    (p) => ({ operation: "realPath", path: p("a/b/file.txt") })
  ),
  c(
    "realPath with ..",
    (f, p) => f.realPath(p("a/b/..")),
    (p) => ({ operation: "realPath", path: p("a/b/..") })
  ),
  c(
    "realPath root",
    (f, p) => f.realPath(p("")),
    (p) => ({ operation: "realPath", path: p("") })
  ),
  c(
    "realPath missing",
    (f, p) => f.realPath(p("nope")),
    (p) => ({ operation: "realPath", path: p("nope") })
  )
]

const glob = (pattern: string, exclude?: (p: P) => Array<string>, root = ""): Case =>
  c(
    `glob ${pattern}${exclude ? " with excludes" : ""}${root ? ` from ${root}` : ""}`,
    (f, p) => f.glob(p(pattern), { root: p(root), ...(exclude ? { exclude: exclude(p) } : {}) }),
    (p) => ({
      operation: "glob",
      pattern: p(pattern),
      root: p(root),
      ...(exclude ? { options: { exclude: exclude(p) } } : {})
    })
  )

/**
 * A glob as a caller writes it through a kernel: pattern and excludes relative, read against `root`.
 * The kernel sends the pattern made absolute and the excludes as written; the answer must be
 * Effect's answer to the caller's own call, made absolute the same way.
 */
const relativeGlob = (pattern: string, exclude: Array<string>, root = ""): Case =>
  c(
    `glob ${pattern} excluding ${exclude.join(", ")} (relative${root ? `, from ${root}` : ""})`,
    (f, p) => Effect.map(f.glob(pattern, { root: p(root), exclude }), (paths) => paths.map((relative) => path.join(p(root), relative))),
    (p) => ({ operation: "glob", pattern: path.join(p(root), pattern), root: p(root), options: { exclude } })
  )

const globs: ReadonlyArray<Case> = [
  glob("*"),
  glob("**"),
  glob("**/*.txt"),
  glob("a/**"),
  glob("a/*/file.txt"),
  glob("a/b/*.{txt,md}"),
  glob("a/b/[fo]*"),
  glob("a/?/"),
  glob("a/.*"),
  glob("**/nope"),
  glob("missing/*"),
  glob("top.txt"),
  glob("a/b/../b/*.md"),
  glob("**/*.txt", (p) => [p("a/c/**")]),
  relativeGlob("**/*.txt", ["a/c/**"]),
  relativeGlob("**/*", ["a/c"]),
  relativeGlob("**/*", ["**/*.md", "a/.hidden.txt"]),
  relativeGlob("**/*", ["*/"]),
  relativeGlob("**/*.txt", ["", ".", "./"]),
  relativeGlob("*", ["file.txt"], "a/b"),
  relativeGlob("**/*", ["deep/**"], "a/c"),
  relativeGlob("**/*", ["./a/b/**"]),
  glob("**", (p) => [p("a")]),
  glob("**", (p) => [p("")]),
  glob("**/"),
  glob("a/b/**/"),
  glob("a/**/**"),
  glob("top.txt/**"),
  glob("nope/**"),
  glob("a/**", undefined, "a"),
  glob("a/b/*", undefined, "a"),
  glob("**/*.md", undefined, "empty"),
  glob("a/*/", (p) => [p("a/c/")], "a")
]

const writes: ReadonlyArray<Case> = [
  write(
    "makeDirectory",
    (f, p) => f.makeDirectory(p("new")),
    (p) => ({ operation: "makeDirectory", path: p("new") })
  ),
  write(
    "makeDirectory existing",
    (f, p) => f.makeDirectory(p("a")),
    (p) => ({ operation: "makeDirectory", path: p("a") })
  ),
  write(
    "makeDirectory recursive",
    (f, p) => f.makeDirectory(p("n/e/w"), { recursive: true }),
    (p) => ({ operation: "makeDirectory", path: p("n/e/w"), options: { recursive: true } })
  ),
  write(
    "makeDirectory recursive existing",
    (f, p) => f.makeDirectory(p("a/b"), { recursive: true }),
    (p) => ({ operation: "makeDirectory", path: p("a/b"), options: { recursive: true } })
  ),
  write(
    "makeDirectory missing parent",
    (f, p) => f.makeDirectory(p("x/y")),
    (p) => ({ operation: "makeDirectory", path: p("x/y") })
  ),
  write(
    "makeDirectory under a file",
    (f, p) => f.makeDirectory(p("top.txt/y")),
    (p) => ({ operation: "makeDirectory", path: p("top.txt/y") })
  ),
  write(
    "makeDirectory mode",
    (f, p) => f.makeDirectory(p("m"), { mode: 0o711 }),
    (p) => ({ operation: "makeDirectory", path: p("m"), options: { mode: 0o711 } })
  ),
  write(
    "remove file",
    (f, p) => f.remove(p("top.txt")),
    (p) => ({ operation: "remove", path: p("top.txt") })
  ),
  write(
    "remove missing",
    (f, p) => f.remove(p("nope")),
    (p) => ({ operation: "remove", path: p("nope") })
  ),
  write(
    "remove missing, forced",
    (f, p) => f.remove(p("nope"), { force: true }),
    (p) => ({ operation: "remove", path: p("nope"), options: { force: true } })
  ),
  write(
    "remove empty directory",
    (f, p) => f.remove(p("empty")),
    (p) => ({ operation: "remove", path: p("empty") }),
    rmDirectory
  ),
  write(
    "remove directory",
    (f, p) => f.remove(p("a")),
    (p) => ({ operation: "remove", path: p("a") }),
    rmDirectory
  ),
  write(
    "remove directory recursive",
    (f, p) => f.remove(p("a"), { recursive: true }),
    (p) => ({ operation: "remove", path: p("a"), options: { recursive: true } })
  ),
  write(
    "rename file",
    (f, p) => f.rename(p("top.txt"), p("a/moved.txt")),
    (p) => ({ operation: "rename", from: p("top.txt"), to: p("a/moved.txt") })
  ),
  write(
    "rename over a file",
    (f, p) => f.rename(p("top.txt"), p("z.md")),
    (p) => ({ operation: "rename", from: p("top.txt"), to: p("z.md") })
  ),
  write(
    "rename directory",
    (f, p) => f.rename(p("a/b"), p("b2")),
    (p) => ({ operation: "rename", from: p("a/b"), to: p("b2") })
  ),
  write(
    "rename missing",
    (f, p) => f.rename(p("nope"), p("x")),
    (p) => ({ operation: "rename", from: p("nope"), to: p("x") })
  ),
  write(
    "rename into missing",
    (f, p) => f.rename(p("top.txt"), p("no/x")),
    (p) => ({ operation: "rename", from: p("top.txt"), to: p("no/x") })
  ),
  write(
    "rename directory over a file",
    (f, p) => f.rename(p("empty"), p("top.txt")),
    (p) => ({ operation: "rename", from: p("empty"), to: p("top.txt") })
  ),
  write(
    "rename file over a directory",
    (f, p) => f.rename(p("top.txt"), p("a")),
    (p) => ({ operation: "rename", from: p("top.txt"), to: p("a") })
  ),
  write(
    "chmod file",
    (f, p) => f.chmod(p("top.txt"), 0o600),
    (p) => ({ operation: "chmod", path: p("top.txt"), options: { mode: 0o600 } })
  ),
  write(
    "chmod directory",
    (f, p) => f.chmod(p("a"), 0o700),
    (p) => ({ operation: "chmod", path: p("a"), options: { mode: 0o700 } })
  ),
  write(
    "chmod missing",
    (f, p) => f.chmod(p("nope"), 0o600),
    (p) => ({ operation: "chmod", path: p("nope"), options: { mode: 0o600 } })
  ),
  write(
    "chown file to its owner",
    (f, p) => f.chown(p("top.txt"), process.getuid!(), process.getgid!()),
    (p) => ({ operation: "chown", path: p("top.txt"), options: { uid: process.getuid!(), gid: process.getgid!() } })
  ),
  write(
    "chown missing",
    (f, p) => f.chown(p("nope"), 0, 0),
    (p) => ({ operation: "chown", path: p("nope"), options: { uid: 0, gid: 0 } })
  ),
  write(
    "writeFile new",
    (f, p) => f.writeFile(p("new.bin"), new Uint8Array([1, 2, 3])),
    (p) => ({ operation: "writeFile", path: p("new.bin"), data: base64(new Uint8Array([1, 2, 3])) })
  ),
  write(
    "writeFile overwrite shorter",
    (f, p) => f.writeFile(p("a/b/file.txt"), new Uint8Array([65])),
    (p) => ({ operation: "writeFile", path: p("a/b/file.txt"), data: base64("A") })
  ),
  write(
    "writeFile wx existing",
    (f, p) => f.writeFile(p("top.txt"), new Uint8Array([65]), { flag: "wx" }),
    (p) => ({ operation: "writeFile", path: p("top.txt"), data: base64("A"), options: { flag: "wx" } })
  ),
  write(
    "writeFile append",
    (f, p) => f.writeFile(p("top.txt"), new Uint8Array([65]), { flag: "a" }),
    (p) => ({ operation: "writeFile", path: p("top.txt"), data: base64("A"), options: { flag: "a" } })
  ),
  write(
    "writeFile into a missing directory",
    (f, p) => f.writeFile(p("no/x"), new Uint8Array([65])),
    (p) => ({ operation: "writeFile", path: p("no/x"), data: base64("A") })
  ),
  write(
    "writeFile onto a directory",
    (f, p) => f.writeFile(p("a"), new Uint8Array([65])),
    (p) => ({ operation: "writeFile", path: p("a"), data: base64("A") })
  ),
  write(
    "writeFile mode",
    (f, p) => f.writeFile(p("private"), new Uint8Array([65]), { mode: 0o600 }),
    (p) => ({ operation: "writeFile", path: p("private"), data: base64("A"), options: { mode: 0o600 } })
  ),
  write(
    "writeFileString",
    (f, p) => f.writeFileString(p("s.txt"), "héllo \ud800"),
    (p) => ({ operation: "writeFileString", path: p("s.txt"), data: "héllo \ud800" })
  ),
  write(
    "writeFileString a+",
    (f, p) => f.writeFileString(p("top.txt"), "!", { flag: "a+" }),
    (p) => ({ operation: "writeFileString", path: p("top.txt"), data: "!", options: { flag: "a+" } })
  )
]

/** Replaces each workspace's root spellings with placeholders, deep. */
const normalize = (u: unknown, w: Workspace): unknown => {
  if (typeof u === "string") {
    return u.split(w.boundaryRoot).join("<boundary>").split(w.logicalRoot).join("<logical>")
  }
  if (u instanceof Uint8Array) return [...u]
  if (Array.isArray(u)) return u.map((x) => normalize(x, w))
  if (Option.isOption(u)) return Option.map(u, (x) => normalize(x, w))
  if (typeof u === "object" && u !== null) {
    if ("type" in u && "dev" in u && "ino" in u) return fileInfoShape(u as FileSystem.File.Info)
    return Object.fromEntries(Object.entries(u).map(([k, v]) => [k, normalize(v, w)]))
  }
  return u
}

/** The fields two different files with the same content and history share. */
const fileInfoShape = (i: FileSystem.File.Info) => ({
  type: i.type,
  mode: i.mode,
  nlink: i.nlink,
  uid: i.uid,
  gid: i.gid,
  rdev: i.rdev,
  size: i.size,
  blksize: i.blksize,
  blocks: i.blocks,
  mtime: Option.isSome(i.mtime),
  atime: Option.isSome(i.atime)
})

const snapshot = (root: string): Array<string> =>
  fs
    .readdirSync(root, { recursive: true, encoding: "utf8" })
    .sort()
    .map((name) => {
      const at = path.join(root, name)
      const st = fs.lstatSync(at)
      const content = st.isFile() ? fs.readFileSync(at, "base64") : st.isSymbolicLink() ? fs.readlinkSync(at) : ""
      return `${name} ${st.mode.toString(8)} ${st.size} ${content}`
    })

const nodeRun = <A>(effect: (f: FileSystem.FileSystem) => Effect.Effect<A, PlatformError.PlatformError>) =>
  run(
    Effect.gen(function* () {
      return yield* effect(yield* FileSystem.FileSystem)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

describe.each(strategies)("differential against NodeFileSystem (%s)", (strategy) => {
  const made: Array<{ close: () => void }> = []
  afterEach(() => {
    for (const e of made.splice(0)) e.close()
  })
  const extension = () => {
    const e = NodeAtomicFileSystem.make({ strategy })
    made.push(e)
    return host(e)
  }

  it.each([...reads, ...globs, ...writes])("$name", async (k) => {
    const a = workspace(spec)
    const b = workspace(spec)
    const theirs = await nodeRun((f) => k.node(f, a.l))
    const ours = await run(extension().execute({ ...b.roots, ...k.wire(b.l) }))
    const shown = (exit: Exit.Exit<unknown, PlatformError.PlatformError>, w: Workspace) =>
      Exit.isSuccess(exit) ? { ok: normalize(exit.value, w) } : { failed: failureTag(exit) }
    const expected = shown(theirs, a)
    const actual = shown(ours, b)
    if (k.divergence !== undefined) {
      expect(expected, k.divergence.why).toEqual({ failed: k.divergence.node })
      expect(actual, k.divergence.why).toEqual({ failed: k.divergence.ours })
      expect(snapshot(b.boundaryRoot)).toEqual(snapshot(a.boundaryRoot))
      return
    }
    if (k.unordered && "ok" in expected && "ok" in actual) {
      expect([...(actual.ok as Array<string>)].sort()).toEqual([...(expected.ok as Array<string>)].sort())
    } else {
      expect(actual).toEqual(expected)
    }
    expect(snapshot(b.boundaryRoot)).toEqual(snapshot(a.boundaryRoot))
  })

  it("stat agrees with NodeFileSystem.stat field by field on the same file", async () => {
    const w = workspace(spec)
    // A time whose nanoseconds round up in a double: the millisecond must still be the truncated one.
    execFileSync("touch", ["-m", "-d", "2024-01-01 00:00:00.999999999", w.s.abs("top.txt")])
    execFileSync("touch", ["-a", "-d", "2023-06-01 12:00:00.123456789", w.s.abs("top.txt")])
    const h = extension()
    for (const relative of ["top.txt", "a", "a/b/file.txt", "empty", ""]) {
      const theirs = await nodeRun((f) => f.stat(w.l(relative)))
      const ours = await ok(h, w.req("stat", { path: w.l(relative) }))
      if (!Exit.isSuccess(theirs)) throw new Error("NodeFileSystem.stat failed")
      const expected = theirs.value
      for (const field of [
        "type",
        "dev",
        "ino",
        "mode",
        "nlink",
        "uid",
        "gid",
        "rdev",
        "size",
        "blksize",
        "blocks",
        "mtime",
        "atime"
      ] as const) {
        expect(ours[field], `${relative || "root"}: ${field}`).toEqual(expected[field])
      }
      // Both read the birth time through statx where the file system records one (Node shows the
      // epoch where it does not, the addon none).
      const recorded = Option.isSome(expected.birthtime) && expected.birthtime.value.getTime() !== 0
      if (recorded || Option.isSome(ours.birthtime)) expect(ours.birthtime).toEqual(expected.birthtime)
    }
  })
})

const failureTag = (exit: Exit.Exit<unknown, PlatformError.PlatformError>): string => {
  if (Exit.isSuccess(exit)) return "success"
  const error = Cause.findErrorOption(exit.cause)
  return Option.isSome(error) ? error.value.reason._tag : `defect: ${Cause.pretty(exit.cause)}`
}
