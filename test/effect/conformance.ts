/**
 * The conformance suite of an atomic host extension: every operation's happy path and every
 * refusal the contract demands, driven through `execute` with real wire requests (absolute paths,
 * the root triple, both root spellings).
 *
 * Run it over any extension:
 *
 * ```ts
 * runConformance("native (walk)", (options) => NodeAtomicFileSystem.make({ ...options, strategy: "walk" }))
 * runConformance("path fallback", (options) => PathAtomicFileSystem.make(options), { withoutDirectoryPrograms: "why" })
 * ```
 *
 * `makeExtension` is called once or more per test with the limits that test needs (most tests pass
 * `{}`); an extension with a `close()` method is closed after the test. The suite makes its own
 * scratch trees (see `support.ts`): a workspace pinned at its canonical path, a logical alias that
 * is a symlink to it, and an `outside` directory with a secret no operation may read or change.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Cause, Effect, FileSystem, Option, type PlatformError, Result } from "effect"
import fc from "fast-check"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { AtomicFileSystem } from "../../src/protocol/wire.ts"
import { NOBODY } from "../support/ids.ts"
import { skipUnless } from "../support/skip.ts"
import { mkfifo } from "../support/tree.ts"
import {
  base64,
  host,
  type Host,
  identityOf,
  ok,
  refused,
  rootIdentityOf,
  run,
  tagOf,
  valueOf,
  type Workspace,
  workspace
} from "./support.ts"

/**
 * Limits a test may ask the extension for.
 */
export interface ConformanceOptions {
  readonly batchLimits?: { readonly size?: number; readonly response?: number }
  readonly contentLimit?: number
}

/**
 * What the extension under test claims beyond the client's wire contract.
 */
export interface ConformanceFeatures {
  /**
   * Why it does not run the `mkdirs` / `rmdirs` directory programs, when it does not: each of
   * their cases is then skipped with this reason printed.
   */
  readonly withoutDirectoryPrograms?: string
  /** It takes `glob` members in a batch (default `true`). */
  readonly globInBatch?: boolean
}

/** A small source tree, for resolve and glob (the fallback's own glob case reads it too). */
export const sourceTree = {
  "src/main.ts": "",
  "src/util.ts": "",
  "src/.hidden.ts": "",
  "src/deep/x.ts": "",
  "node_modules/dep/index.ts": "",
  "README.md": ""
}

/** The tree every test starts from (plus links made in `setup`). */
const tree = {
  "a/b/file.txt": "hello",
  "a/b/other.md": "other",
  "top.txt": "top",
  "empty/": ""
}

/**
 * Registers the suite under `describe(name)`.
 */
export const runConformance = (
  name: string,
  makeExtension: (options: ConformanceOptions) => AtomicFileSystem,
  features: ConformanceFeatures = {}
): void => {
  const made: Array<AtomicFileSystem> = []
  afterEach(() => {
    for (const extension of made.splice(0)) (extension as { close?: () => void }).close?.()
  })
  const extension = (options: ConformanceOptions = {}): Host => {
    const e = makeExtension(options)
    made.push(e)
    return host(e)
  }

  const setup = (options: ConformanceOptions = {}): { w: Workspace; h: Host } => {
    const w = workspace(tree)
    fs.symlinkSync(w.s.outside, w.s.abs("linkdir")) // a link first on the way, leading out
    fs.symlinkSync("b", w.s.abs("a/inner")) // a link in the middle, staying inside: still refused
    fs.symlinkSync(w.s.secret, w.s.abs("a/linkfile")) // a link last, leading out
    fs.linkSync(w.s.secret, w.s.abs("hard.txt")) // a hard link to the secret
    return { w, h: extension(options) }
  }

  /** Runs a directory-program case, or skips it saying why the extension has none. */
  const programs = (ctx: Parameters<typeof skipUnless>[0]) =>
    skipUnless(ctx, features.withoutDirectoryPrograms === undefined, features.withoutDirectoryPrograms ?? "")

  /** The three link placements, as root-relative paths. */
  const throughLinks = ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile"]
  const rootName = (w: Workspace) => path.basename(w.boundaryRoot)

  const secretIntact = (w: Workspace) => {
    expect(fs.readFileSync(w.s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.statSync(w.s.secret).mode & 0o777).toBe(0o644)
  }

  describe(name, () => {
    describe("identifyRoot", () => {
      it("answers the exact dev:ino and birth time of the directory, through a link to it", async () => {
        const { w, h } = setup()
        expect(h.identifyRoot).toBeDefined()
        const exit = await run(h.identifyRoot!(w.boundaryRoot))
        expect(exit).toMatchObject({ _tag: "Success", value: w.rootIdentity })
        expect(await run(h.identifyRoot!(w.logicalRoot))).toMatchObject({ _tag: "Success", value: w.rootIdentity })
        // The test trees' file system records birth times, so the identity carries one.
        const st = fs.statSync(w.boundaryRoot, { bigint: true })
        expect(w.rootIdentity).toBe(
          `${st.dev}:${st.ino}:b${st.birthtimeNs / 10n ** 9n}.${String(st.birthtimeNs % 10n ** 9n).padStart(9, "0")}`
        )
      })

      it("fails typed for a missing path", async () => {
        const { w, h } = setup()
        const exit = await run(h.identifyRoot!(w.b("missing")))
        expect(exit._tag).toBe("Failure")
      })
    })

    describe("exists", () => {
      it("answers for both spellings, a trailing link counts", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("exists", { path: w.b("a/b/file.txt") }))).toBe(true)
        expect(await ok(h, w.req("exists", { path: w.l("a/b/file.txt") }))).toBe(true)
        expect(await ok(h, w.req("exists", { path: w.l("a/b/nope") }))).toBe(false)
        expect(await ok(h, w.req("exists", { path: w.l("a/linkfile") }))).toBe(true)
        expect(await ok(h, w.req("exists", { path: w.logicalRoot }))).toBe(true)
        for (const p of ["a/b", "a/b/"]) expect(await ok(h, w.req("exists", { path: w.l(p) }))).toBe(true)
        expect(await ok(h, w.req("exists", { path: w.l("a/nope/deeper") }))).toBe(false)
        // As Effect's exists: only "not there" is false, a file used as a directory is an error.
        for (const p of ["top.txt/x", "top.txt/"]) await refused(h, w.req("exists", { path: w.l(p) }), "BadResource")
      })

      it("refuses a link on the way", async () => {
        const { w, h } = setup()
        await refused(h, w.req("exists", { path: w.l("linkdir/secret.txt") }), "PermissionDenied")
        await refused(h, w.req("exists", { path: w.l("a/inner/file.txt") }), "PermissionDenied")
      })
    })

    describe("stat", () => {
      it("answers a File.Info with lstat semantics", async () => {
        const { w, h } = setup()
        const info = await ok(h, w.req("stat", { path: w.l("a/b/file.txt") }))
        const expected = fs.lstatSync(w.s.abs("a/b/file.txt"), { bigint: true })
        expect(info.type).toBe("File")
        expect(info.size).toBe(5n)
        expect(info.dev).toBe(BigInt.asUintN(64, expected.dev))
        expect(info.ino).toEqual(Option.some(expected.ino))
        expect(info.mode).toBe(Number(expected.mode))
        expect(info.nlink).toEqual(Option.some(1n))
        expect(Option.getOrThrow(info.mtime)).toBeInstanceOf(Date)
        expect((await ok(h, w.req("stat", { path: w.b("a") }))).type).toBe("Directory")
        expect((await ok(h, w.req("stat", { path: w.boundaryRoot }))).type).toBe("Directory")
        expect((await ok(h, w.req("stat", { path: w.l("a/linkfile") }))).type).toBe("SymbolicLink")
        // Field for field what Effect's own Node file system answers for lstat.
        const effectLstat = (p: string) =>
          Effect.runPromise(
            Effect.gen(function* () {
              const efs = yield* FileSystem.FileSystem
              return yield* efs.lstat(p)
            }).pipe(Effect.provide(NodeFileSystem.layer))
          )
        for (const p of ["a/b/file.txt", "a", "a/linkfile", ""]) {
          expect(await ok(h, w.req("stat", { path: w.l(p) }))).toEqual(await effectLstat(w.b(p)))
        }
      })

      it("refuses links on the way, a hard link, an escape", async () => {
        const { w, h } = setup()
        await refused(h, w.req("stat", { path: w.l("linkdir/secret.txt") }), "PermissionDenied")
        await refused(h, w.req("stat", { path: w.l("a/inner/file.txt") }), "PermissionDenied")
        await refused(h, w.req("stat", { path: w.l("hard.txt") }), "PermissionDenied")
        await refused(h, w.req("stat", { path: w.l("../outside/secret.txt") }), "PermissionDenied")
        await refused(h, w.req("stat", { path: w.l("missing") }), "NotFound")
      })
    })

    describe("readFile and readFileString", () => {
      it("reads through either spelling, and .. that stays inside", async () => {
        const { w, h } = setup()
        const bytes = await ok(h, w.req("readFile", { path: w.l("a/b/file.txt") }))
        expect(bytes).toBeInstanceOf(Uint8Array)
        expect(Buffer.from(bytes).toString()).toBe("hello")
        expect(await ok(h, w.req("readFileString", { path: w.b("top.txt") }))).toBe("top")
        expect(await ok(h, w.req("readFileString", { path: w.l("a/b/../b/file.txt") }))).toBe("hello")
        expect(Buffer.from(await ok(h, w.req("readFile", { path: w.l("a/b/../b/file.txt") }))).toString()).toBe("hello")
      })

      it("decodes with the requested encoding, as TextDecoder does", async () => {
        const { w, h } = setup()
        fs.writeFileSync(w.s.abs("utf16.txt"), Buffer.from("héllo", "utf16le"))
        fs.writeFileSync(w.s.abs("bad.txt"), Buffer.from([0x68, 0xff, 0x69]))
        expect(await ok(h, w.req("readFileString", { path: w.l("utf16.txt"), encoding: "utf-16le" }))).toBe("héllo")
        expect(await ok(h, w.req("readFileString", { path: w.l("bad.txt") }))).toBe("h\uFFFDi")
        fs.writeFileSync(w.s.abs("latin.txt"), Buffer.from([0x63, 0x61, 0x66, 0xe9])) // "café" in latin1
        expect(await ok(h, w.req("readFileString", { path: w.l("latin.txt"), encoding: "latin1" }))).toBe("café")
        expect(await ok(h, w.req("readFileString", { path: w.l("latin.txt") }))).toBe("caf\uFFFD")
        const unknown = await refused(h, w.req("readFileString", { path: w.l("top.txt"), encoding: "klingon" }), "BadArgument")
        expect(unknown.reason.description).toMatch(/encoding/)
      })

      it("refuses a symlink first, in the middle and last", async () => {
        const { w, h } = setup()
        for (const p of throughLinks) {
          for (const operation of ["readFile", "readFileString"]) {
            const e = await refused(h, w.req(operation, { path: w.l(p) }), "PermissionDenied")
            expect(e.reason).toMatchObject({ pathOrDescriptor: w.l(p), method: operation })
          }
        }
      })

      it("refuses a hard-linked file", async () => {
        const { w, h } = setup()
        await refused(h, w.req("readFile", { path: w.b("hard.txt") }), "PermissionDenied")
      })

      it("refuses .. above the root, even to come back", async () => {
        const { w, h } = setup()
        for (const p of ["../outside/secret.txt", `../${rootName(w)}/top.txt`, "a/../../outside/secret.txt"]) {
          await refused(h, w.req("readFile", { path: w.b(p) }), "PermissionDenied")
        }
      })

      it("refuses a path outside both roots", async () => {
        const { w, h } = setup()
        const e = await refused(h, w.req("readFile", { path: w.s.secret }), "PermissionDenied")
        expect(e.reason).toMatchObject({ pathOrDescriptor: w.s.secret })
        // A sibling whose name only starts like the root is outside too.
        fs.mkdirSync(`${w.boundaryRoot}2`)
        fs.writeFileSync(`${w.boundaryRoot}2/x`, "x")
        await refused(h, w.req("readFile", { path: `${w.boundaryRoot}2/x` }), "PermissionDenied")
      })

      it("names the operation, the path as requested and the syscall in its errors", async () => {
        const { w, h } = setup()
        const missing = await refused(h, w.req("readFile", { path: w.l("a/missing") }), "NotFound")
        expect(missing.reason).toMatchObject({ module: "FileSystem", method: "readFile", pathOrDescriptor: w.l("a/missing") })
        expect(missing.reason._tag === "BadArgument" ? undefined : missing.reason.syscall).toBeTruthy()
        const link = await refused(h, w.req("stat", { path: w.b("linkdir/secret.txt") }), "PermissionDenied")
        expect(link.reason).toMatchObject({ method: "stat", pathOrDescriptor: w.b("linkdir/secret.txt") })
        expect(link.reason.description).toMatch(/link/i)
        const hard = await refused(h, w.req("readFile", { path: w.l("hard.txt") }), "PermissionDenied")
        expect(hard.reason.description).toMatch(/hard|link/i)
        const bad = await refused(h, w.req("readFile", { path: "relative.txt" }), "BadArgument")
        expect(bad.reason).toMatchObject({ module: "FileSystem", method: "readFile" })
      })

      it("maps plain errno failures", async () => {
        const { w, h } = setup()
        await refused(h, w.req("readFile", { path: w.l("missing") }), "NotFound")
        await refused(h, w.req("readFile", { path: w.l("a") }), "BadResource")
        await refused(h, w.req("readFile", { path: w.l("top.txt/x") }), "BadResource")
        await refused(h, w.req("readFile", { path: w.l("nope/x") }), "NotFound")
      })
    })

    describe("readDirectory", () => {
      it("lists names, recursively on request", async () => {
        const { w, h } = setup()
        expect((await ok(h, w.req("readDirectory", { path: w.l("a/b") }))).sort()).toEqual(["file.txt", "other.md"])
        expect(await ok(h, w.req("readDirectory", { path: w.b("empty") }))).toEqual([])
        const all = (await ok(h, w.req("readDirectory", { path: w.l("a"), options: { recursive: true } }))).sort()
        expect(all).toEqual(["b", "b/file.txt", "b/other.md", "inner", "linkfile"])
        expect((await ok(h, w.req("readDirectory", { path: w.l("") }))).sort()).toEqual(["a", "empty", "hard.txt", "linkdir", "top.txt"])
      })

      it("refuses to list through or at a link", async () => {
        const { w, h } = setup()
        const link = await refused(h, w.req("readDirectory", { path: w.l("linkdir") }), "PermissionDenied")
        expect(link.reason.description).toMatch(/symbolic link/)
        await refused(h, w.req("readDirectory", { path: w.l("a/inner") }), "PermissionDenied")
        await refused(h, w.req("readDirectory", { path: w.l("../outside") }), "PermissionDenied")
        await refused(h, w.req("readDirectory", { path: w.l("top.txt") }), "BadResource")
      })

      it("refuses a recursive listing deeper than 256 levels with the one depth refusal", async () => {
        const { w, h } = setup()
        const chain = (top: string, levels: number) =>
          fs.mkdirSync(w.s.abs(`${top}/${Array(levels).fill("d").join("/")}`), { recursive: true })
        chain("ok", 256)
        expect(await ok(h, w.req("readDirectory", { path: w.l("ok"), options: { recursive: true } }))).toHaveLength(256)
        chain("deep", 257)
        const error = await refused(h, w.req("readDirectory", { path: w.l("deep"), options: { recursive: true } }), "BadArgument")
        expect(error.reason.description).toBe("directory tree is deeper than the recursive listing limit of 256 levels")
        expect(await ok(h, w.req("readDirectory", { path: w.l("deep") }))).toEqual(["d"])
      })
    })

    describe("readLink", () => {
      it("reads the link's text without following it", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("readLink", { path: w.l("a/linkfile") }))).toBe(w.s.secret)
        expect(await ok(h, w.req("readLink", { path: w.b("a/inner") }))).toBe("b")
      })

      it("refuses a link on the way, and fails for a non-link", async () => {
        const { w, h } = setup()
        await refused(h, w.req("readLink", { path: w.l("linkdir/secret.txt") }), "PermissionDenied")
        // Neither a file nor the root is a link: Effect's Node file system answers Unknown for EINVAL.
        await refused(h, w.req("readLink", { path: w.l("top.txt") }), "Unknown")
        await refused(h, w.req("readLink", { path: w.logicalRoot }), "Unknown")
        await refused(h, w.req("readLink", { path: w.l("missing") }), "NotFound")
      })
    })

    describe("realPath", () => {
      it("answers the canonical path in the boundary spelling", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("realPath", { path: w.l("a/b/file.txt") }))).toBe(w.b("a/b/file.txt"))
        expect(await ok(h, w.req("realPath", { path: w.l("a/b/../b") }))).toBe(w.b("a/b"))
        expect(await ok(h, w.req("realPath", { path: w.logicalRoot }))).toBe(w.boundaryRoot)
        expect(await ok(h, w.req("realPath", { path: w.l("a/./b/../b/file.txt") }))).toBe(w.b("a/b/file.txt"))
      })

      it("refuses links and escapes", async () => {
        const { w, h } = setup()
        await refused(h, w.req("realPath", { path: w.l("a/inner/file.txt") }), "PermissionDenied")
        const last = await refused(h, w.req("realPath", { path: w.l("a/linkfile") }), "PermissionDenied")
        expect(last.reason.description).toMatch(/symbolic link/)
        await refused(h, w.req("realPath", { path: w.l("../outside") }), "PermissionDenied")
        await refused(h, w.req("realPath", { path: w.l("missing") }), "NotFound")
      })
    })

    describe("resolve", () => {
      it("answers the whole path when no link is met, missing components as requested", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("resolve", { path: w.l("a/b/file.txt") }))).toEqual({
          path: w.b("a/b/file.txt"),
          target: null
        })
        expect(await ok(h, w.req("resolve", { path: w.l("a/b/new/deeper.txt") }))).toEqual({
          path: w.b("a/b/new/deeper.txt"),
          target: null
        })
      })

      it("stops at the first link, answering its canonical path and text", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("resolve", { path: w.l("a/inner/file.txt") }))).toEqual({
          path: w.b("a/inner"),
          target: "b"
        })
        expect(await ok(h, w.req("resolve", { path: w.l("linkdir/secret.txt") }))).toEqual({
          path: w.b("linkdir"),
          target: w.s.outside
        })
        expect(await ok(h, w.req("resolve", { path: w.b("a/linkfile") }))).toEqual({
          path: w.b("a/linkfile"),
          target: w.s.secret
        })
      })

      it("refuses .. above the root", async () => {
        const { w, h } = setup()
        await refused(h, w.req("resolve", { path: w.l("../outside/secret.txt") }), "PermissionDenied")
      })
    })

    describe("glob", () => {
      it("answers absolute paths in the pattern's spelling, as Effect does for an absolute pattern", async () => {
        const { w, h } = setup()
        const got = await ok(h, w.req("glob", { pattern: w.l("a/b/*.txt"), root: w.logicalRoot }))
        expect(got).toEqual([w.l("a/b/file.txt")])
        const boundary = await ok(h, w.req("glob", { pattern: w.b("**/*.md"), root: w.boundaryRoot }))
        expect(boundary).toEqual([w.b("a/b/other.md")])
      })

      it("applies absolute excludes", async () => {
        const { w, h } = setup()
        const got = await ok(
          h,
          w.req("glob", {
            pattern: w.l("**/*.txt"),
            root: w.logicalRoot,
            options: { exclude: [w.l("a/**")] }
          })
        )
        expect(got).toEqual([w.l("hard.txt"), w.l("top.txt")])
      })

      it("lists links as entries and never reaches through one", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("glob", { pattern: w.l("**"), root: w.logicalRoot }))).toEqual([
          w.logicalRoot,
          ...["a", "a/b", "a/b/file.txt", "a/b/other.md", "a/inner", "a/linkfile", "empty", "hard.txt", "linkdir", "top.txt"].map(w.l)
        ])
        expect(await ok(h, w.req("glob", { pattern: w.l("linkdir/*"), root: w.logicalRoot }))).toEqual([])
        expect(await ok(h, w.req("glob", { pattern: w.l("a/inner/*"), root: w.logicalRoot }))).toEqual([])
        expect(await ok(h, w.req("glob", { pattern: w.l("*/secret.txt"), root: w.logicalRoot }))).toEqual([])
      })

      it("decides by the pattern alone: any glob root, relative or elsewhere, answers the same", async () => {
        const { w, h } = setup()
        const expected = [w.l("a/b/file.txt")]
        for (const root of [".", "relative/dir", w.s.outside, w.l("a/b"), w.b("a"), w.l("empty")]) {
          expect(await ok(h, w.req("glob", { pattern: w.l("a/b/*.txt"), root }))).toEqual(expected)
        }
      })

      it("refuses a pattern outside both roots", async () => {
        const { w, h } = setup()
        await refused(h, w.req("glob", { pattern: `${w.s.outside}/*`, root: w.logicalRoot }), "PermissionDenied")
      })
    })

    describe("makeDirectory", () => {
      it("creates, recursively on request, with a mode", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("makeDirectory", { path: w.l("new") }))).toBeUndefined()
        expect(fs.statSync(w.s.abs("new")).isDirectory()).toBe(true)
        await ok(h, w.req("makeDirectory", { path: w.b("deep/er/est"), options: { recursive: true } }))
        expect(fs.statSync(w.s.abs("deep/er/est")).isDirectory()).toBe(true)
        await ok(h, w.req("makeDirectory", { path: w.b("deep/er/est"), options: { recursive: true } }))
        await ok(h, w.req("makeDirectory", { path: w.l("moded"), options: { mode: 0o700 } }))
        expect(fs.statSync(w.s.abs("moded")).mode & 0o777).toBe(0o700)
        await ok(h, w.req("makeDirectory", { path: w.l("x/y/z"), options: { recursive: true, mode: 0o700 } }))
        expect(fs.statSync(w.s.abs("x/y/z")).mode & 0o777).toBe(0o700)
        await ok(h, w.req("makeDirectory", { path: w.l("a"), options: { recursive: true } }))
      })

      it("fails on an existing name, refuses links and escapes", async () => {
        const { w, h } = setup()
        await refused(h, w.req("makeDirectory", { path: w.l("a") }), "AlreadyExists")
        await refused(h, w.req("makeDirectory", { path: w.l("nope/y") }), "NotFound")
        await refused(h, w.req("makeDirectory", { path: w.l("top.txt/y"), options: { recursive: true } }), "BadResource")
        await refused(h, w.req("makeDirectory", { path: w.l("linkdir/evil") }), "PermissionDenied")
        await refused(h, w.req("makeDirectory", { path: w.l("a/inner/evil"), options: { recursive: true } }), "PermissionDenied")
        await refused(h, w.req("makeDirectory", { path: w.l("../outside/evil") }), "PermissionDenied")
        expect(fs.existsSync(path.join(w.s.outside, "evil"))).toBe(false)
        expect(fs.existsSync(w.s.abs("a/b/evil"))).toBe(false)
      })
    })

    describe("remove", () => {
      it("removes files and, recursively, directories", async () => {
        const { w, h } = setup()
        await ok(h, w.req("remove", { path: w.l("top.txt") }))
        expect(fs.existsSync(w.s.abs("top.txt"))).toBe(false)
        await refused(h, w.req("remove", { path: w.b("a/b") }), "BadResource")
        expect(fs.existsSync(w.s.abs("a/b"))).toBe(true)
        await refused(h, w.req("remove", { path: w.logicalRoot, options: { recursive: true } }), "BadArgument")
        await ok(h, w.req("remove", { path: w.b("a/b"), options: { recursive: true } }))
        expect(fs.existsSync(w.s.abs("a/b"))).toBe(false)
        await refused(h, w.req("remove", { path: w.l("missing") }), "NotFound")
        await ok(h, w.req("remove", { path: w.l("missing"), options: { force: true } }))
      })

      it("removes a trailing link itself, never what it names", async () => {
        const { w, h } = setup()
        await ok(h, w.req("remove", { path: w.l("linkdir") }))
        expect(fs.existsSync(w.s.abs("linkdir"))).toBe(false)
        await ok(h, w.req("remove", { path: w.l("a/linkfile") }))
        secretIntact(w)
        expect(fs.existsSync(w.s.outside)).toBe(true)
      })

      it("refuses a link on the way and an escape, leaving everything in place", async () => {
        const { w, h } = setup()
        await refused(h, w.req("remove", { path: w.l("linkdir/secret.txt") }), "PermissionDenied")
        await refused(h, w.req("remove", { path: w.l("a/inner/file.txt") }), "PermissionDenied")
        await refused(h, w.req("remove", { path: w.l("../outside"), options: { recursive: true } }), "PermissionDenied")
        secretIntact(w)
        expect(fs.readFileSync(w.s.abs("a/b/file.txt"), "utf8")).toBe("hello")
      })

      it("removes a tree holding links without following them", async () => {
        const { w, h } = setup()
        await ok(h, w.req("remove", { path: w.l("a"), options: { recursive: true } }))
        expect(fs.existsSync(w.s.abs("a"))).toBe(false)
        secretIntact(w)
      })
    })

    describe("rename", () => {
      it("renames within the root, across both spellings, and a link as itself", async () => {
        const { w, h } = setup()
        await ok(h, w.req("rename", { from: w.l("top.txt"), to: w.b("a/top2.txt") }))
        expect(fs.readFileSync(w.s.abs("a/top2.txt"), "utf8")).toBe("top")
        await ok(h, w.req("rename", { from: w.l("a/b"), to: w.l("moved") }))
        expect(fs.readFileSync(w.s.abs("moved/file.txt"), "utf8")).toBe("hello")
        await ok(h, w.req("rename", { from: w.l("a/linkfile"), to: w.l("moved-link") }))
        expect(fs.readlinkSync(w.s.abs("moved-link"))).toBe(w.s.secret)
        secretIntact(w)
      })

      it("refuses links on the way and escapes on either side", async () => {
        const { w, h } = setup()
        await refused(h, w.req("rename", { from: w.l("linkdir/secret.txt"), to: w.l("got.txt") }), "PermissionDenied")
        await refused(h, w.req("rename", { from: w.l("top.txt"), to: w.l("linkdir/planted.txt") }), "PermissionDenied")
        await refused(h, w.req("rename", { from: w.l("top.txt"), to: w.l("../outside/planted.txt") }), "PermissionDenied")
        await refused(h, w.req("rename", { from: w.l("top.txt"), to: path.join(w.s.outside, "x") }), "PermissionDenied")
        expect(fs.readdirSync(w.s.outside)).toEqual(["secret.txt"])
        secretIntact(w)
        await refused(h, w.req("rename", { from: w.l("missing"), to: w.l("x") }), "NotFound")
      })
    })

    describe("chmod and chown", () => {
      it("changes a file's and a directory's mode, as lstat then shows", async () => {
        const { w, h } = setup()
        const mode = (rel: string) => fs.lstatSync(w.s.abs(rel)).mode & 0o7777
        expect([mode("top.txt"), mode("a")]).not.toEqual([0o600, 0o750])
        await ok(h, w.req("chmod", { path: w.l("top.txt"), options: { mode: 0o600 } }))
        expect(mode("top.txt")).toBe(0o600)
        await ok(h, w.req("chmod", { path: w.b("a"), options: { mode: 0o750 } }))
        expect(mode("a")).toBe(0o750)
        // The special bits travel too: the mode is the caller's, not masked to 0o777.
        await ok(h, w.req("chmod", { path: w.l("top.txt"), options: { mode: 0o2640 } }))
        expect(mode("top.txt")).toBe(0o2640)
        await refused(h, w.req("chmod", { path: w.l("nope"), options: { mode: 0o600 } }), "NotFound")
        await refused(h, w.req("chmod", { path: w.l("top.txt"), options: { mode: 0o10000 } }), "BadArgument")
        await refused(h, w.req("chmod", { path: w.l("top.txt") }), "BadArgument")
        await refused(h, w.req("chown", { path: w.l("top.txt"), options: { uid: "0", gid: 0 } }), "BadArgument")
        expect(mode("top.txt")).toBe(0o2640)
      })

      // Giving a file away takes root: run as root (CI is), the owner must really become another
      // user's; run unprivileged, the same request must be refused and change nothing.
      it("changes a file's and a directory's owner to another user's, as lstat then shows (-1 keeps one)", async () => {
        const { w, h } = setup()
        const owner = (rel: string) => {
          const st = fs.lstatSync(w.s.abs(rel))
          return [st.uid, st.gid]
        }
        const mine = owner("top.txt")
        expect(mine).not.toEqual([NOBODY, NOBODY])
        if (process.getuid?.() !== 0) {
          await refused(h, w.req("chown", { path: w.l("top.txt"), options: { uid: NOBODY, gid: NOBODY } }), "PermissionDenied")
          expect(owner("top.txt")).toEqual(mine)
          return
        }
        await ok(h, w.req("chown", { path: w.l("top.txt"), options: { uid: NOBODY, gid: NOBODY } }))
        expect(owner("top.txt")).toEqual([NOBODY, NOBODY])
        await ok(h, w.req("chown", { path: w.b("a"), options: { uid: NOBODY, gid: -1 } }))
        expect(owner("a")).toEqual([NOBODY, mine[1]])
        await ok(h, w.req("chown", { path: w.l("top.txt"), options: { uid: -1, gid: mine[1] } }))
        expect(owner("top.txt")).toEqual([NOBODY, mine[1]])
        await ok(h, w.req("chown", { path: w.l("top.txt"), options: { uid: -1, gid: -1 } }))
        expect(owner("top.txt")).toEqual([NOBODY, mine[1]])
      })

      it("refuses links anywhere and hard links, leaving the secret alone", async () => {
        const { w, h } = setup()
        for (const p of [...throughLinks, "hard.txt"]) {
          await refused(h, w.req("chmod", { path: w.l(p), options: { mode: 0o777 } }), "PermissionDenied")
          await refused(h, w.req("chown", { path: w.l(p), options: { uid: -1, gid: -1 } }), "PermissionDenied")
        }
        await refused(h, w.req("chmod", { path: w.l("../outside/secret.txt"), options: { mode: 0o777 } }), "PermissionDenied")
        secretIntact(w)
      })
    })

    describe("writeFile and writeFileString", () => {
      it("writes base64 bytes and strings, with flags and a mode", async () => {
        const { w, h } = setup()
        await ok(h, w.req("writeFile", { path: w.l("new.bin"), data: base64(new Uint8Array([0, 1, 2, 255])) }))
        expect([...fs.readFileSync(w.s.abs("new.bin"))]).toEqual([0, 1, 2, 255])
        await ok(h, w.req("writeFileString", { path: w.b("top.txt"), data: "replaced" }))
        expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("replaced")
        await ok(h, w.req("writeFileString", { path: w.b("top.txt"), data: "+more", options: { flag: "a" } }))
        expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("replaced+more")
        await refused(h, w.req("writeFileString", { path: w.l("top.txt"), data: "x", options: { flag: "wx" } }), "AlreadyExists")
        await ok(h, w.req("writeFileString", { path: w.l("private.txt"), data: "p", options: { mode: 0o600 } }))
        expect(fs.statSync(w.s.abs("private.txt")).mode & 0o777).toBe(0o600)
        await ok(h, w.req("writeFile", { path: w.l("empty.bin"), data: "" }))
        expect(fs.statSync(w.s.abs("empty.bin")).size).toBe(0)
        await ok(h, w.req("writeFile", { path: w.l("a/b/file.txt"), data: base64("new") }))
        expect(fs.readFileSync(w.s.abs("a/b/file.txt"), "utf8")).toBe("new")
        await ok(h, w.req("writeFile", { path: w.l("a/b/file.txt"), data: base64("+"), options: { flag: "a" } }))
        expect(fs.readFileSync(w.s.abs("a/b/file.txt"), "utf8")).toBe("new+")
        await ok(h, w.req("writeFile", { path: w.l("moded"), data: "", options: { flag: "wx", mode: 0o600 } }))
        expect(fs.statSync(w.s.abs("moded")).mode & 0o777).toBe(0o600)
        await ok(h, w.req("writeFileString", { path: w.l("s.txt"), data: "héllo" }))
        expect(fs.readFileSync(w.s.abs("s.txt"), "utf8")).toBe("héllo")
      })

      it("fails on a missing parent, a directory, and a file or missing name used as a directory", async () => {
        const { w, h } = setup()
        await refused(h, w.req("writeFileString", { path: w.l("nope/s.txt"), data: "x" }), "NotFound")
        await refused(h, w.req("writeFileString", { path: w.l("a"), data: "x" }), "BadResource")
        await refused(h, w.req("writeFileString", { path: `${w.l("top.txt")}/`, data: "x" }), "BadResource")
        await refused(h, w.req("writeFileString", { path: `${w.l("newname")}/`, data: "x" }), "NotFound")
        await refused(h, w.req("writeFileString", { path: w.logicalRoot, data: "x" }), "BadResource")
        expect(fs.existsSync(w.s.abs("newname"))).toBe(false)
      })

      it("refuses links anywhere, hard links and escapes, leaving the secret alone", async () => {
        const { w, h } = setup()
        for (const p of [...throughLinks, "hard.txt", "../outside/secret.txt"]) {
          await refused(h, w.req("writeFileString", { path: w.l(p), data: "pwned" }), "PermissionDenied")
          await refused(h, w.req("writeFile", { path: w.l(p), data: base64("pwned") }), "PermissionDenied")
        }
        await refused(h, w.req("writeFileString", { path: w.l("linkdir/new.txt"), data: "pwned" }), "PermissionDenied")
        expect(fs.readdirSync(w.s.outside)).toEqual(["secret.txt"])
        secretIntact(w)
      })

      it("refuses invalid base64 and payloads over the content limit", async () => {
        const { w } = setup()
        const h = extension({ contentLimit: 8 })
        expect(h.contentLimit).toBe(8)
        for (const data of ["%%%%", "abc", "YWJj\n", "=YWJ", "not base64!"]) {
          await refused(h, w.req("writeFile", { path: w.l("x.bin"), data }), "BadArgument")
        }
        const over = await refused(h, w.req("writeFile", { path: w.l("x.bin"), data: base64("123456789") }), "BadArgument")
        expect(over.reason.description).toMatch(/limit/)
        expect(fs.existsSync(w.s.abs("x.bin"))).toBe(false)
        await ok(h, w.req("writeFile", { path: w.l("x.bin"), data: base64("12345678") }))
        expect(fs.readFileSync(w.s.abs("x.bin"), "utf8")).toBe("12345678")
      })

      it("decodes base64 exactly as the strict check and Node's Buffer.from did, on generated payloads", async () => {
        const { w, h } = setup()
        // The extension's own check before the decode moved off the JavaScript thread: the oracle.
        const accepted = (s: string) => s.length % 4 === 0 && /^[A-Za-z0-9+/]*={0,2}$/.test(s)
        const alphabet = [..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"]
        const symbol = fc.constantFrom(...alphabet)
        // What a sloppy or hostile encoder could put anywhere: padding, whitespace, URL-safe symbols,
        // NUL, Latin-1, characters above U+00FF whose low byte is a symbol (U+0141 'Ł' is 0x41 'A'),
        // a lone surrogate.
        const junk = fc.constantFrom(
          "=",
          "==",
          " ",
          "\n",
          "-",
          "_",
          "\0",
          "%",
          "\u00e9",
          "\u00ff",
          "\u0141",
          "\u012b",
          "\ud800",
          "\u{1f600}"
        )
        const valid = fc.uint8Array({ maxLength: 40 }).map((b) => Buffer.from(b).toString("base64"))
        // Any symbol in place of the last one before '=': non-zero unused bits, which Node ignores.
        const loose = fc.tuple(valid, symbol).map(([s, c]) => {
          const at = s.indexOf("=") - 1
          return at < 0 ? s : s.slice(0, at) + c + s.slice(at + 1)
        })
        const mutated = fc.tuple(valid, fc.nat(), junk, fc.constantFrom("insert", "replace", "delete", "append")).map(([s, n, j, how]) => {
          const at = s.length === 0 ? 0 : n % s.length
          if (how === "insert") return s.slice(0, at) + j + s.slice(at)
          if (how === "replace") return s.slice(0, at) + j + s.slice(at + j.length)
          if (how === "delete") return s.slice(0, at) + s.slice(at + 1)
          return s + j
        })
        const symbols = fc.array(fc.oneof(symbol, fc.constant("=")), { maxLength: 12 }).map((a) => a.join(""))
        const payload = fc.oneof(valid, loose, mutated, symbols)
        const target = w.s.abs("gen.bin")
        let accepts = 0
        let refusals = 0
        await fc.assert(
          fc.asyncProperty(payload, fc.boolean(), async (data, existing) => {
            fs.rmSync(target, { force: true })
            if (existing) fs.writeFileSync(target, "kept")
            const exit = await run(h.execute(w.req("writeFile", { path: w.l("gen.bin"), data })))
            if (accepted(data)) {
              accepts++
              expect(exit._tag, JSON.stringify(data)).toBe("Success")
              expect(fs.readFileSync(target).equals(Buffer.from(data, "base64")), JSON.stringify(data)).toBe(true)
            } else {
              refusals++
              expect(exit._tag === "Failure" && Option.getOrUndefined(Cause.findErrorOption(exit.cause))?.reason._tag).toBe("BadArgument")
              if (existing) expect(fs.readFileSync(target, "utf8")).toBe("kept")
              else expect(fs.existsSync(target)).toBe(false)
            }
          }),
          // 1,000 writes through each executor; the native decoder itself is fuzzed for a minute
          // per CI run (native/fuzz/fuzz_base64.cc, against the same rule).
          { numRuns: 1000, seed: 11_7 }
        )
        // Both sides of the rule were exercised, not one.
        expect(accepts).toBeGreaterThan(100)
        expect(refusals).toBeGreaterThan(100)
      })

      it("refuses a payload over the content limit by its length alone, whatever its text", async () => {
        const { w } = setup()
        const h = extension({ contentLimit: 8 })
        // Invalid text past the limit is refused for its size: the size is checked before the text
        // is read, let alone copied or decoded.
        for (const data of ["%".repeat(16), "\u0141".repeat(1 << 20), "A".repeat(4 << 20)]) {
          const over = await refused(h, w.req("writeFile", { path: w.l("top.txt"), data }), "BadArgument")
          expect(over.reason.description).toMatch(/exceeds the 8 byte/)
        }
        expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("top")
        // At the limit, padding counted: 12 symbols with one '=' are 8 bytes.
        await ok(h, w.req("writeFile", { path: w.l("top.txt"), data: "MTIzNDU2Nzg=" }))
        expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("12345678")
      })

      it("refuses a writeFileString payload over the content limit, counted in UTF-8 bytes, writing nothing", async () => {
        const { w } = setup()
        const h = extension({ contentLimit: 8 })
        for (const data of ["123456789", "ééééé", "x".repeat(100_000)]) {
          const over = await refused(h, w.req("writeFileString", { path: w.l("x.txt"), data }), "BadArgument")
          expect(over.reason.description).toMatch(/limit/)
        }
        expect(fs.existsSync(w.s.abs("x.txt"))).toBe(false)
        await ok(h, w.req("writeFileString", { path: w.l("x.txt"), data: "éééé" }))
        expect(fs.readFileSync(w.s.abs("x.txt"), "utf8")).toBe("éééé")
      })
    })

    describe("batch", () => {
      it("answers every member, each with its own Result, failures alone", async () => {
        const { w, h } = setup()
        const requests = [
          { operation: "readFileString", path: w.l("a/b/file.txt") },
          { operation: "readFile", path: w.l("missing") },
          { operation: "exists", path: w.b("top.txt") },
          { operation: "stat", path: w.l("a") },
          { operation: "readFile", path: w.l("linkdir/secret.txt") },
          { operation: "resolve", path: w.l("a/inner/file.txt") },
          { operation: "realPath", path: w.l("a/b") },
          { operation: "readDirectory", path: w.l("a/b") },
          { operation: "readLink", path: w.l("a/linkfile") },
          { operation: "readFile", path: w.b("top.txt") }
        ]
        const answer = await ok(h, w.req("batch", { requests }))
        expect(answer.rootIdentity).toBe(w.rootIdentity)
        expect(answer.entries.map((e: { index: number }) => e.index)).toEqual(requests.map((_, i) => i))
        expect(answer.entries.map((e: { path: string }) => e.path)).toEqual(requests.map((r) => r.path))
        const [text, missing, exists, stat, link, resolution, real, listing, readLink, bytes] = answer.entries.map(
          (e: { result: Result.Result<any, any> }) => e.result
        )
        expect(text).toEqual(Result.succeed({ operation: "readFileString", value: "hello" }))
        expect(tagOf(missing)).toBe("NotFound")
        expect(exists).toEqual(Result.succeed({ operation: "exists", value: true }))
        expect(valueOf(stat).value.type).toBe("Directory")
        expect(tagOf(link)).toBe("PermissionDenied")
        expect(resolution).toEqual(Result.succeed({ operation: "resolve", resolution: { path: w.b("a/inner"), target: "b" } }))
        expect(real).toEqual(Result.succeed({ operation: "realPath", value: w.b("a/b") }))
        expect([...valueOf(listing).value].sort()).toEqual(["file.txt", "other.md"])
        expect(readLink).toEqual(Result.succeed({ operation: "readLink", value: w.s.secret }))
        expect(valueOf(bytes).operation).toBe("readFile")
        expect(valueOf(bytes).value).toBeInstanceOf(Uint8Array)
        expect(Buffer.from(valueOf(bytes).value).toString()).toBe("top")
      })

      if (features.globInBatch !== false) {
        it("runs glob members (pinnedfs extension), answering absolute paths", async () => {
          const { w, h } = setup()
          const answer = await ok(
            h,
            w.req("batch", {
              requests: [
                { operation: "glob", path: w.l("a/b/*.md"), root: w.logicalRoot },
                { operation: "glob", path: `${w.s.outside}/*`, root: w.logicalRoot },
                { operation: "glob", path: w.l("**/*.txt"), root: w.logicalRoot, options: { exclude: [w.l("a/**")] } },
                { operation: "glob", path: "relative/*", root: w.logicalRoot }
              ]
            })
          )
          const [md, outside, txt, relative] = answer.entries.map(
            (e: { result: Result.Result<unknown, PlatformError.PlatformError> }) => e.result
          )
          expect(md).toEqual(Result.succeed({ operation: "glob", value: [w.l("a/b/other.md")] }))
          expect(tagOf(outside)).toBe("PermissionDenied")
          expect(txt).toEqual(Result.succeed({ operation: "glob", value: [w.l("hard.txt"), w.l("top.txt")] }))
          expect(tagOf(relative)).toBe("BadArgument")
        })
      }

      it("fails a batch over the size limit as a whole", async () => {
        const { w } = setup()
        const h = extension({ batchLimits: { size: 3, response: 1 << 20 } })
        expect(h.batchLimits).toEqual({ size: 3, response: 1 << 20 })
        const member = { operation: "exists", path: w.l("top.txt") }
        expect((await ok(h, w.req("batch", { requests: [member, member, member] }))).entries).toHaveLength(3)
        const over = await refused(h, w.req("batch", { requests: [member, member, member, member] }), "BadArgument")
        expect(over.reason.description).toMatch(/limit/)
        await refused(h, w.req("batch", { requests: "nope" }), "BadArgument")
        expect(await ok(h, w.req("batch", { requests: [] }))).toEqual({ rootIdentity: w.rootIdentity, entries: [] })
      })

      it("fails alone a member whose content would pass the response limit", async () => {
        const { w } = setup()
        fs.writeFileSync(w.s.abs("big.bin"), Buffer.alloc(100, 7))
        const h = extension({ batchLimits: { size: 8, response: 120 } })
        const answer = await ok(
          h,
          w.req("batch", {
            requests: [
              { operation: "readFile", path: w.l("big.bin") },
              { operation: "readFile", path: w.l("big.bin") },
              { operation: "readFileString", path: w.l("top.txt") }
            ]
          })
        )
        const [first, second, third] = answer.entries.map((e: { result: Result.Result<any, any> }) => e.result)
        expect(valueOf(first).value.length).toBe(100)
        expect(tagOf(second)).toBe("BadArgument")
        expect(third).toEqual(Result.succeed({ operation: "readFileString", value: "top" }))
      })

      it("fails a malformed or non-read member alone", async () => {
        const { w, h } = setup()
        const answer = await ok(
          h,
          w.req("batch", {
            requests: [
              { operation: "writeFile", path: w.l("x"), data: "" },
              { operation: "writeFileString", path: w.l("top.txt"), data: "x" },
              42,
              null,
              { operation: "exists", path: "relative" },
              { operation: "exists", path: w.s.secret },
              { operation: "exists", path: w.l("top.txt") }
            ]
          })
        )
        const tags = answer.entries.map((e: { result: Result.Result<unknown, PlatformError.PlatformError> }) => tagOf(e.result))
        expect(tags).toEqual(["BadArgument", "BadArgument", "BadArgument", "BadArgument", "BadArgument", "PermissionDenied", "ok"])
        expect(fs.existsSync(w.s.abs("x"))).toBe(false)
        expect(fs.readFileSync(w.s.abs("top.txt"), "utf8")).toBe("top")
      })
    })

    describe("resolve and glob over a source tree, in either spelling of the root", () => {
      /** The workspace, its links, and both spellings of it: requests go out in each in turn. */
      const sources = () => {
        const w = workspace(sourceTree)
        fs.symlinkSync(w.s.outside, w.s.abs("src/escape"))
        fs.symlinkSync("main.ts", w.s.abs("src/alias"))
        fs.symlinkSync(w.s.outside, w.s.abs("linked"))
        fs.writeFileSync(`${w.s.outside}/evil.ts`, "")
        const spellings = [
          { at: w.l, base: w.logicalRoot },
          { at: w.b, base: w.boundaryRoot }
        ]
        return { w, h: extension(), spellings }
      }
      const globOf = (h: Host, w: Workspace, pattern: string, exclude?: Array<string>, root: unknown = w.logicalRoot) =>
        ok(h, w.req("glob", { pattern, root, ...(exclude === undefined ? {} : { options: { exclude } }) })) as Promise<Array<string>>

      it("resolves a link-free path whole, existing or not, in boundary spelling", async () => {
        const { w, h, spellings } = sources()
        for (const { at } of spellings) {
          expect(await ok(h, w.req("resolve", { path: at("src/main.ts") }))).toEqual({ path: w.b("src/main.ts"), target: null })
          expect(await ok(h, w.req("resolve", { path: at("src/missing/and/more") }))).toEqual({
            path: w.b("src/missing/and/more"),
            target: null
          })
          expect(await ok(h, w.req("resolve", { path: at("src/deep/../main.ts") }))).toEqual({ path: w.b("src/main.ts"), target: null })
          expect(await ok(h, w.req("resolve", { path: at("") }))).toEqual({ path: w.boundaryRoot, target: null })
        }
      })

      it("resolves to the first link, last, on the way or before a trailing slash, with its text", async () => {
        const { w, h, spellings } = sources()
        for (const { at } of spellings) {
          expect(await ok(h, w.req("resolve", { path: at("src/alias") }))).toEqual({ path: w.b("src/alias"), target: "main.ts" })
          for (const p of ["src/escape/secret.txt", "src/escape/", "src/deep/../escape/x"]) {
            expect(await ok(h, w.req("resolve", { path: at(p) }))).toEqual({ path: w.b("src/escape"), target: w.s.outside })
          }
        }
      })

      it("refuses to resolve a link a later .. climbs out of, a file in the middle, an escape, an outside path", async () => {
        const { w, h, spellings } = sources()
        for (const { at } of spellings) {
          const climb = await refused(h, w.req("resolve", { path: at("src/escape/../main.ts") }), "PermissionDenied")
          expect(climb.reason.description).toMatch(/symbolic/)
          for (const p of ["README.md/x", "src/main.ts/y/z", "README.md/"]) {
            await refused(h, w.req("resolve", { path: at(p) }), "BadResource")
          }
          const escape = await refused(h, w.req("resolve", { path: at("../outside") }), "PermissionDenied")
          expect(escape.reason.description).toMatch(/escapes/)
        }
        const outside = await refused(h, w.req("resolve", { path: w.s.secret }), "PermissionDenied")
        expect(outside.reason.description).toMatch(/outside/)
      })

      it("globs with Effect's semantics, answering absolute paths in the pattern's spelling", async () => {
        const { w, h, spellings } = sources()
        for (const { at, base } of spellings) {
          expect(await globOf(h, w, at("src/*.ts"))).toEqual([at("src/main.ts"), at("src/util.ts")])
          expect(await globOf(h, w, at("src/**/*.ts"))).toEqual([at("src/deep/x.ts"), at("src/main.ts"), at("src/util.ts")])
          expect(await globOf(h, w, at("*.md"))).toEqual([at("README.md")])
          expect(await globOf(h, w, at("nothing/*"))).toEqual([])
          expect(await globOf(h, w, `${base}//src/m*.ts`)).toEqual([`${base}/src/main.ts`])
          expect(await globOf(h, w, base)).toEqual([base])
          for (const root of [".", "relative", w.s.outside, at("src")]) {
            expect(await globOf(h, w, at("src/*.ts"), undefined, root)).toEqual([at("src/main.ts"), at("src/util.ts")])
          }
        }
      })

      it("never globs through a link, wherever the pattern names it", async () => {
        const { w, h, spellings } = sources()
        for (const { at } of spellings) {
          expect((await globOf(h, w, at("**/*.ts"))).some((p) => p.includes("evil"))).toBe(false)
          expect(await globOf(h, w, at("linked/*.ts"))).toEqual([])
          expect(await globOf(h, w, at("src/escape/*"))).toEqual([])
          expect(await globOf(h, w, at("*"))).toContain(at("linked"))
        }
      })

      it("refuses a glob outside the root or climbing out of it; bad input is BadArgument", async () => {
        const { w, h, spellings } = sources()
        for (const { at, base } of spellings) {
          await refused(h, w.req("glob", { pattern: `${w.s.outside}/*`, root: base }), "PermissionDenied")
          await refused(h, w.req("glob", { pattern: `${at("src")}/../../outside/*`, root: base }), "PermissionDenied")
          await refused(h, w.req("glob", { pattern: "src/*", root: base }), "BadArgument")
          await refused(h, w.req("glob", { pattern: at("*"), root: 7 }), "BadArgument")
          await refused(h, w.req("glob", { pattern: at("*"), root: base, options: { exclude: "x" } }), "BadArgument")
        }
      })
    })

    describe("refusals across operations", () => {
      it("refuses a link first, in the middle and last for reads, writes and metadata, naming it and the path", async () => {
        const { w, h } = setup()
        for (const p of throughLinks) {
          for (const request of [
            { operation: "readFile", path: w.l(p) },
            { operation: "readFileString", path: w.l(p) },
            { operation: "writeFile", path: w.l(p), data: base64("pwned") },
            { operation: "writeFileString", path: w.l(p), data: "pwned" },
            { operation: "chmod", path: w.l(p), options: { mode: 0o777 } },
            { operation: "chown", path: w.l(p), options: { uid: 0, gid: 0 } },
            { operation: "realPath", path: w.l(p) }
          ]) {
            const e = await refused(h, w.req(request.operation, request), "PermissionDenied")
            expect(e.reason.description).toMatch(/symbolic link/)
            expect(e.reason._tag === "BadArgument" ? "" : e.reason.pathOrDescriptor).toBe(w.l(p))
          }
        }
        for (const p of ["linkdir/secret.txt", "a/inner/file.txt"]) {
          for (const operation of ["exists", "stat", "readLink", "remove"]) {
            const e = await refused(h, w.req(operation, { path: w.l(p) }), "PermissionDenied")
            expect(e.reason.description).toMatch(/symbolic link/)
          }
          await refused(h, w.req("makeDirectory", { path: w.l(`${p}/new`), options: { recursive: true } }), "PermissionDenied")
          await refused(h, w.req("rename", { from: w.l(p), to: w.l("stolen") }), "PermissionDenied")
          await refused(h, w.req("rename", { from: w.l("top.txt"), to: w.l(p) }), "PermissionDenied")
        }
        secretIntact(w)
        expect(fs.readdirSync(w.s.outside)).toEqual(["secret.txt"])
      })

      it("treats a trailing slash after a link as a link met on the way", async () => {
        const { w, h } = setup()
        for (const operation of ["stat", "exists", "readLink", "readDirectory", "remove"]) {
          const e = await refused(h, w.req(operation, { path: `${w.l("linkdir")}/` }), "PermissionDenied")
          expect(e.reason.description).toMatch(/symbolic link/)
        }
        await refused(h, w.req("makeDirectory", { path: `${w.l("linkdir")}/`, options: { recursive: true } }), "PermissionDenied")
        expect(fs.lstatSync(w.s.abs("linkdir")).isSymbolicLink()).toBe(true)
      })

      it("refuses a hard-linked file for read, stat, write, chmod and chown; removing our name is allowed", async () => {
        const { w, h } = setup()
        for (const request of [
          { operation: "readFile", path: w.l("hard.txt") },
          { operation: "stat", path: w.l("hard.txt") },
          { operation: "writeFile", path: w.l("hard.txt"), data: base64("pwned") },
          { operation: "writeFileString", path: w.l("hard.txt"), data: "pwned", options: { flag: "a" } },
          { operation: "chmod", path: w.l("hard.txt"), options: { mode: 0o777 } },
          { operation: "chown", path: w.l("hard.txt"), options: { uid: 0, gid: 0 } }
        ]) {
          const e = await refused(h, w.req(request.operation, request), "PermissionDenied")
          expect(e.reason.description).toMatch(/hard-linked/)
        }
        expect(await ok(h, w.req("exists", { path: w.l("hard.txt") }))).toBe(true)
        secretIntact(w)
        await ok(h, w.req("remove", { path: w.l("hard.txt") }))
        secretIntact(w)
      })

      it("refuses .. above the root for writes too, and a .. after a link", async () => {
        const { w, h } = setup()
        for (const p of ["../outside/secret.txt", `../${rootName(w)}/top.txt`, "a/../../outside/secret.txt", ".."]) {
          const e = await refused(h, w.req("readFile", { path: `${w.logicalRoot}/${p}` }), "PermissionDenied")
          expect(e.reason.description).toMatch(/escapes/)
          await refused(h, w.req("writeFileString", { path: `${w.logicalRoot}/${p}`, data: "x" }), "PermissionDenied")
        }
        const e = await refused(h, w.req("readFile", { path: w.l("a/inner/../b/file.txt") }), "PermissionDenied")
        expect(e.reason.description).toMatch(/symbolic/)
        secretIntact(w)
      })

      it("refuses any absolute path outside both roots, a sibling sharing the root's prefix included", async () => {
        const { w, h } = setup()
        fs.writeFileSync(`${w.boundaryRoot}x`, "sibling")
        for (const p of [w.s.secret, `${w.logicalRoot}x`, `${w.boundaryRoot}x`, "/etc/passwd"]) {
          for (const request of [
            { operation: "readFile", path: p },
            { operation: "writeFileString", path: p, data: "x" }
          ]) {
            const e = await refused(h, w.req(request.operation, request), "PermissionDenied")
            expect(e.reason.description).toMatch(/outside/)
          }
        }
        expect(fs.readFileSync(`${w.boundaryRoot}x`, "utf8")).toBe("sibling")
        secretIntact(w)
      })

      it("refuses a FIFO without blocking on it, and a write to one, but describes it", async () => {
        const { w, h } = setup()
        mkfifo(w.s.abs("fifo"))
        const read = await refused(h, w.req("readFile", { path: w.l("fifo") }), "BadResource")
        expect(read.reason.description).toMatch(/FIFO/)
        const write = await refused(h, w.req("writeFileString", { path: w.l("fifo"), data: "x" }), "BadResource")
        expect(write.reason.description).toMatch(/FIFO/)
        expect((await ok(h, w.req("stat", { path: w.l("fifo") }))).type).toBe("FIFO")
      })
    })

    describe("root identity", () => {
      it("answers Busy once the root is renamed away and another directory put at its path", async () => {
        const { w, h } = setup()
        expect(await ok(h, w.req("readFileString", { path: w.l("top.txt") }))).toBe("top")
        const moved = `${w.boundaryRoot}-moved`
        fs.renameSync(w.boundaryRoot, moved)
        fs.mkdirSync(w.boundaryRoot)
        fs.writeFileSync(path.join(w.boundaryRoot, "top.txt"), "impostor")
        expect(rootIdentityOf(w.boundaryRoot)).not.toBe(w.rootIdentity)
        for (const request of [
          w.req("readFileString", { path: w.l("top.txt") }),
          w.req("readFileString", { path: w.b("top.txt") }),
          w.req("writeFileString", { path: w.b("top.txt"), data: "x" }),
          w.req("readFile", { path: w.l("top.txt") }),
          w.req("glob", { pattern: w.l("*"), root: w.logicalRoot }),
          w.req("batch", { requests: [{ operation: "exists", path: w.b("top.txt") }] })
        ]) {
          const e = await refused(h, request, "Busy")
          expect(e.reason.description).toMatch(/workspace_identity_changed/)
          expect(e.reason).toMatchObject({ pathOrDescriptor: w.boundaryRoot })
        }
        expect(fs.readFileSync(path.join(w.boundaryRoot, "top.txt"), "utf8")).toBe("impostor")
        // A fresh extension pins the new directory and still refuses the old identity.
        const fresh = extension()
        const e = await refused(fresh, w.req("exists", { path: w.b("top.txt") }), "Busy")
        expect(e.reason.description).toMatch(/workspace_identity_changed/)
        // The new identity is served.
        const current = { ...w.roots, rootIdentity: rootIdentityOf(w.boundaryRoot) }
        expect(await ok(fresh, { ...current, operation: "readFileString", path: w.b("top.txt") })).toBe("impostor")
      })

      it("answers Busy for every path-only read on a cached root once the root path names another directory", async () => {
        // These reads take the extension's short path (operands as arguments, the cached handle
        // used without waiting for its pin): the in-worker re-check of the root path must still run.
        const { w, h } = setup()
        expect(await ok(h, w.req("exists", { path: w.b("top.txt") }))).toBe(true)
        const moved = `${w.boundaryRoot}-moved`
        fs.renameSync(w.boundaryRoot, moved)
        fs.mkdirSync(w.boundaryRoot)
        fs.writeFileSync(path.join(w.boundaryRoot, "top.txt"), "impostor")
        for (const operation of ["exists", "stat", "readFile", "readFileString", "readLink", "realPath", "resolve"]) {
          for (const p of [w.b("top.txt"), w.l("top.txt")]) {
            const e = await refused(h, w.req(operation, { path: p }), "Busy")
            expect(e.reason.description).toMatch(/workspace_identity_changed/)
          }
        }
        await refused(h, w.req("readDirectory", { path: w.b("") }), "Busy")
      })

      it("answers Busy when the root path is gone", async () => {
        const { w, h } = setup()
        fs.renameSync(w.boundaryRoot, `${w.boundaryRoot}-gone`)
        await refused(h, w.req("exists", { path: w.b("top.txt") }), "Busy")
        await refused(extension(), w.req("exists", { path: w.b("top.txt") }), "Busy")
      })

      it("refuses a request whose identity is not the root's", async () => {
        const { w, h } = setup()
        const other = rootIdentityOf(w.s.outside)
        await refused(h, { ...w.req("exists", { path: w.b("top.txt") }), rootIdentity: other }, "Busy")
      })
    })

    describe("mkdirs and rmdirs (pinnedfs extensions)", () => {
      it("creates a planned tree, parent before child, with exact modes and identities", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        const out = await ok(
          h,
          w.req("mkdirs", {
            plan: [
              { path: w.l("p"), mode: 0o755 },
              { path: w.l("p/q"), mode: 0o700 }
            ]
          })
        )
        expect(out.error).toBeNull()
        expect(out.created).toEqual([
          { path: w.l("p"), identity: identityOf(w.s.abs("p")) },
          { path: w.l("p/q"), identity: identityOf(w.s.abs("p/q")) }
        ])
        expect(fs.statSync(w.s.abs("p/q")).mode & 0o777).toBe(0o700)
        const removed = await ok(
          h,
          w.req("rmdirs", {
            owned: [...out.created].reverse()
          })
        )
        expect(removed.stopped).toBe(false)
        expect(removed.members.map((m: { status: string }) => m.status)).toEqual(["removed", "removed"])
        expect(fs.existsSync(w.s.abs("p"))).toBe(false)
      })

      it("creates the ancestors a member implies, answered in the member's spelling", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        const out = await ok(h, w.req("mkdirs", { plan: [{ path: w.b("deep/er"), mode: 0o750 }] }))
        expect(out.error).toBeNull()
        expect(out.created.map((c: { path: string }) => c.path)).toEqual([w.b("deep"), w.b("deep/er")])
        expect(fs.statSync(w.s.abs("deep/er")).mode & 0o777).toBe(0o750)
      })

      it("stops at a conflict the plan meets, before making anything, and refuses links", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        const out = await ok(
          h,
          w.req("mkdirs", {
            plan: [{ path: w.l("made") }, { path: w.l("top.txt") }, { path: w.l("after") }]
          })
        )
        expect(out.error?.reason._tag).toBe("AlreadyExists")
        expect(out.error?.reason.pathOrDescriptor).toBe(w.l("top.txt"))
        // The file is found when the plan is probed, before the first creation: nothing was made.
        expect(out.created).toEqual([])
        for (const name of ["made", "after"]) expect(fs.existsSync(w.s.abs(name))).toBe(false)
        const link = await ok(h, w.req("mkdirs", { plan: [{ path: w.l("linkdir/evil") }] }))
        expect(link.created).toEqual([])
        expect(link.error?.reason._tag).toBe("PermissionDenied")
        expect(fs.existsSync(path.join(w.s.outside, "evil"))).toBe(false)
      })

      it("stops at a conflict met while creating, answering exactly the directories it made before it", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        // An immutable directory: even root cannot create in it (EPERM), and no probe can tell
        // before mkdirat is tried. Needs ext4-like chattr support and CAP_LINUX_IMMUTABLE.
        fs.mkdirSync(w.s.abs("frozen"))
        const frozen = spawnSync("chattr", ["+i", w.s.abs("frozen")], { encoding: "utf8" })
        skipUnless(
          ctx,
          frozen.status === 0,
          `chattr +i is refused here (${(frozen.stderr ?? String(frozen.error)).trim()}): no directory refuses a creation after planning`
        )
        try {
          const out = await ok(
            h,
            w.req("mkdirs", {
              plan: [{ path: w.l("a-made") }, { path: w.l("a-made/inner") }, { path: w.l("frozen/x") }, { path: w.l("z-after") }]
            })
          )
          expect(out.error?.reason._tag).toBe("PermissionDenied")
          expect(out.error?.reason.pathOrDescriptor).toBe(w.l("frozen/x"))
          // Exactly what ran before the conflict (the program goes parent before child, in name order),
          // each with its identity on disk.
          expect(out.created).toEqual([
            { path: w.l("a-made"), identity: identityOf(w.s.abs("a-made")) },
            { path: w.l("a-made/inner"), identity: identityOf(w.s.abs("a-made/inner")) }
          ])
          expect(fs.existsSync(w.s.abs("z-after"))).toBe(false)
          expect(fs.readdirSync(w.s.abs("frozen"))).toEqual([])
        } finally {
          spawnSync("chattr", ["-i", w.s.abs("frozen")])
        }
      })

      it("keeps a non-empty directory and refuses a changed one", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        const out = await ok(h, w.req("mkdirs", { plan: [{ path: w.l("keep") }, { path: w.l("swap") }] }))
        fs.writeFileSync(w.s.abs("keep/file"), "x")
        // Moved aside rather than removed, so the new directory cannot reuse its inode number.
        fs.renameSync(w.s.abs("swap"), w.s.abs("swapped-away"))
        fs.mkdirSync(w.s.abs("swap"))
        const removed = await ok(
          h,
          w.req("rmdirs", {
            owned: out.created.map((c: { path: string; identity: string }) => ({ ...c, optional: true }))
          })
        )
        const status = Object.fromEntries(removed.members.map((m: { path: string; status: string }) => [m.path, m.status]))
        expect(status).toEqual({ [w.l("keep")]: "kept", [w.l("swap")]: "refused" })
        const refusedMember = removed.members.find((m: { status: string }) => m.status === "refused")
        expect(refusedMember.error?.reason.pathOrDescriptor).toBe(w.l("swap"))
        expect(fs.existsSync(w.s.abs("keep/file"))).toBe(true)
        expect(fs.existsSync(w.s.abs("swap"))).toBe(true)
      })

      it("refuses malformed programs with BadArgument", async (ctx) => {
        programs(ctx)
        const { w, h } = setup()
        await refused(h, w.req("mkdirs", {}), "BadArgument")
        await refused(h, w.req("mkdirs", { plan: [{ path: 1 }] }), "BadArgument")
        await refused(h, w.req("mkdirs", { plan: [{ path: w.l("x"), mode: "0755" }] }), "BadArgument")
        await refused(h, w.req("rmdirs", { owned: [{ path: w.l("x"), identity: "nope" }] }), "BadArgument")
        await refused(h, w.req("rmdirs", { owned: "x" }), "BadArgument")
        await refused(h, w.req("mkdirs", { plan: [{ path: w.s.outside }] }), "PermissionDenied")
      })
    })
  })
}
