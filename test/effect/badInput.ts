/**
 * Malformed requests, table-driven: every one must fail with a typed `BadArgument` (never a
 * defect, never a crash, never a change on disk). Requests come from a serialized boundary, so
 * each field is tried with every wrong type a decoder could meet.
 *
 * Batches: a batch that is not an array or is over the size limit fails as a whole; a malformed
 * member fails alone (covered in the conformance suite).
 *
 * Reusable over any extension, like `runConformance`: `runBadInput(name, makeExtension)`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import type { AtomicFileSystem } from "../../src/protocol/wire.ts"
import { failure, failureOf, host, type Workspace, workspace } from "./support.ts"

type Row = readonly [string, (w: Workspace) => unknown]

const wrongTypes: ReadonlyArray<readonly [string, unknown]> = [
  ["missing", undefined],
  ["null", null],
  ["a number", 42],
  ["a boolean", true],
  ["an object", { path: "/x" }],
  ["an array", ["/x"]]
]

/** Every way a path operand can be wrong. */
const badPaths = (w: Workspace): ReadonlyArray<readonly [string, unknown]> => [
  ...wrongTypes,
  ["a string with a NUL byte", w.l("a\0b")],
  ["a NUL byte after the root", `${w.logicalRoot}\0/x`],
  ["a relative path", "top.txt"],
  ["an empty string", ""],
  ["a path over PATH_MAX", w.l("x".repeat(5000))],
  ["a component over NAME_MAX", w.l(`${"y".repeat(300)}/z`)]
]

const rows: ReadonlyArray<Row> = [
  ["request undefined", () => undefined],
  ["request null", () => null],
  ["request a number", () => 42],
  ["request a string", () => "readFile"],
  ["request an array", (w) => [w.req("exists", { path: w.l("top.txt") })]],
  ["operation missing", (w) => ({ ...w.roots, path: w.l("top.txt") })],
  ["operation a number", (w) => ({ ...w.roots, operation: 0, path: w.l("top.txt") })],
  ["operation unknown", (w) => w.req("frobnicate", { path: w.l("top.txt") })],
  ["operation a prototype key", (w) => w.req("constructor", { path: w.l("top.txt") })],
  ["operation __proto__", (w) => w.req("__proto__", { path: w.l("top.txt") })],
  ["operation toString", (w) => w.req("toString", { path: w.l("top.txt") })],
  ["roots missing", (w) => ({ operation: "exists", path: w.l("top.txt") })],
  ["boundaryRoot missing", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), boundaryRoot: undefined })],
  ["boundaryRoot relative", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), boundaryRoot: "root" })],
  ["boundaryRoot with NUL", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), boundaryRoot: `${w.boundaryRoot}\0` })],
  ["logicalRoot a number", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), logicalRoot: 7 })],
  ["rootIdentity missing", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: undefined })],
  ["rootIdentity a number", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: 12 })],
  ["rootIdentity not dev:ino", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: "abc" })],
  ["rootIdentity with three parts", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: "1:2:3" })],
  ["rootIdentity negative", (w) => ({ ...w.req("exists", { path: w.l("top.txt") }), rootIdentity: "-1:2" })],
  ["readDirectory options a string", (w) => w.req("readDirectory", { path: w.l("a"), options: "recursive" })],
  ["readDirectory options an array", (w) => w.req("readDirectory", { path: w.l("a"), options: [true] })],
  ["readDirectory recursive a string", (w) => w.req("readDirectory", { path: w.l("a"), options: { recursive: "yes" } })],
  ["readFileString encoding a number", (w) => w.req("readFileString", { path: w.l("top.txt"), encoding: 8 })],
  ["readFileString encoding unknown", (w) => w.req("readFileString", { path: w.l("top.txt"), encoding: "klingon" })],
  ["readFileString encoding unknown, file missing", (w) => w.req("readFileString", { path: w.l("nope"), encoding: "x" })],
  ["makeDirectory mode negative", (w) => w.req("makeDirectory", { path: w.l("n"), options: { mode: -1 } })],
  ["makeDirectory mode fractional", (w) => w.req("makeDirectory", { path: w.l("n"), options: { mode: 1.5 } })],
  ["makeDirectory mode too large", (w) => w.req("makeDirectory", { path: w.l("n"), options: { mode: 0o10000 } })],
  ["makeDirectory mode a string", (w) => w.req("makeDirectory", { path: w.l("n"), options: { mode: "755" } })],
  ["makeDirectory recursive a number", (w) => w.req("makeDirectory", { path: w.l("n"), options: { recursive: 1 } })],
  ["remove force a string", (w) => w.req("remove", { path: w.l("top.txt"), options: { force: "true" } })],
  ["remove options a number", (w) => w.req("remove", { path: w.l("top.txt"), options: 1 })],
  ["rename to missing", (w) => w.req("rename", { from: w.l("top.txt") })],
  ["rename to a number", (w) => w.req("rename", { from: w.l("top.txt"), to: 3 })],
  ["rename from relative", (w) => w.req("rename", { from: "top.txt", to: w.l("x") })],
  ["rename to with NUL", (w) => w.req("rename", { from: w.l("top.txt"), to: w.l("x\0") })],
  ["chmod options missing", (w) => w.req("chmod", { path: w.l("top.txt") })],
  ["chmod mode missing", (w) => w.req("chmod", { path: w.l("top.txt"), options: {} })],
  ["chmod mode a string", (w) => w.req("chmod", { path: w.l("top.txt"), options: { mode: "0644" } })],
  ["chmod mode NaN", (w) => w.req("chmod", { path: w.l("top.txt"), options: { mode: Number.NaN } })],
  ["chown options missing", (w) => w.req("chown", { path: w.l("top.txt") })],
  ["chown uid a string", (w) => w.req("chown", { path: w.l("top.txt"), options: { uid: "0", gid: 0 } })],
  ["chown uid over 32 bits", (w) => w.req("chown", { path: w.l("top.txt"), options: { uid: 2 ** 32, gid: 0 } })],
  ["chown gid below -1", (w) => w.req("chown", { path: w.l("top.txt"), options: { uid: 0, gid: -2 } })],
  ["chown gid missing", (w) => w.req("chown", { path: w.l("top.txt"), options: { uid: 0 } })],
  ["writeFile data missing", (w) => w.req("writeFile", { path: w.l("new.bin") })],
  ["writeFile data a number", (w) => w.req("writeFile", { path: w.l("new.bin"), data: 5 })],
  ["writeFile data bytes, not base64", (w) => w.req("writeFile", { path: w.l("new.bin"), data: new Uint8Array(3) })],
  ["writeFile data invalid base64", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "not base64!" })],
  ["writeFile data an object", (w) => w.req("writeFile", { path: w.l("new.bin"), data: { length: 4 } })],
  ["writeFile data null", (w) => w.req("writeFile", { path: w.l("new.bin"), data: null })],
  // Characters above U+00FF, in a length that passes the cheap check: a copy keeping only each
  // character's low byte would read "\u0141" as "A" and accept it.
  ["writeFile data U+0141 (Ł) in base64's length", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "\u0141\u0141\u0141\u0141" })],
  ["writeFile data U+0141 (Ł) over an existing file, flag w", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "Zm9v\u0141AAA" })],
  ["writeFile data a Latin-1 character (é)", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "Zm9\u00e9" })],
  ["writeFile data a lone surrogate", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "\ud800AAA" })],
  ["writeFile data with a NUL", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "AAA\0" })],
  ["writeFile data '=' mid-way, flag w", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "Zg==Zg==" })],
  ["writeFile data three '=', flag w+", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "Z===", options: { flag: "w+" } })],
  ["writeFile data URL-safe alphabet, flag a", (w) => w.req("writeFile", { path: w.l("top.txt"), data: "-_-_", options: { flag: "a" } })],
  ["writeFile flag unknown", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "", options: { flag: "z" } })],
  ["writeFile flag a number", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "", options: { flag: 1 } })],
  ["writeFile flag a prototype key", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "", options: { flag: "constructor" } })],
  ["writeFile mode a string", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "", options: { mode: "644" } })],
  ["writeFile options a string", (w) => w.req("writeFile", { path: w.l("new.bin"), data: "", options: "w" })],
  ["writeFileString data bytes", (w) => w.req("writeFileString", { path: w.l("new.txt"), data: new Uint8Array(1) })],
  ["writeFileString data missing", (w) => w.req("writeFileString", { path: w.l("new.txt") })],
  ["glob pattern missing", (w) => w.req("glob", { root: w.logicalRoot })],
  ["glob pattern relative", (w) => w.req("glob", { pattern: "*.txt", root: w.logicalRoot })],
  ["glob root missing", (w) => w.req("glob", { pattern: w.l("*") })],
  ["glob root a number", (w) => w.req("glob", { pattern: w.l("*"), root: 1 })],
  ["glob exclude a string", (w) => w.req("glob", { pattern: w.l("*"), root: w.logicalRoot, options: { exclude: "x" } })],
  ["glob exclude with a number", (w) => w.req("glob", { pattern: w.l("*"), root: w.logicalRoot, options: { exclude: [1] } })],
  ["glob exclude with NUL", (w) => w.req("glob", { pattern: w.l("*"), root: w.logicalRoot, options: { exclude: ["\0"] } })],
  ["glob pattern with NUL", (w) => w.req("glob", { pattern: w.l("*\0"), root: w.logicalRoot })],
  ["batch requests missing", (w) => w.req("batch")],
  ["batch requests an object", (w) => w.req("batch", { requests: { 0: { operation: "exists", path: w.l("top.txt") } } })],
  ["batch requests a string", (w) => w.req("batch", { requests: "exists" })],
  [
    "batch over the size limit",
    (w) =>
      w.req("batch", {
        requests: Array.from({ length: 5 }, () => ({ operation: "exists", path: w.l("top.txt") }))
      })
  ],
  ["mkdirs plan missing", (w) => w.req("mkdirs")],
  ["mkdirs plan member a string", (w) => w.req("mkdirs", { plan: [w.l("x")] })],
  ["rmdirs owned member identity missing", (w) => w.req("rmdirs", { owned: [{ path: w.l("a") }] })]
]

/** Operations with one path operand, each tried with every bad path. */
const pathOperations: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
  ["exists", {}],
  ["stat", {}],
  ["readFile", {}],
  ["readFileString", {}],
  ["readDirectory", {}],
  ["readLink", {}],
  ["realPath", {}],
  ["resolve", {}],
  ["makeDirectory", {}],
  ["remove", {}],
  ["chmod", { options: { mode: 0o644 } }],
  ["chown", { options: { uid: -1, gid: -1 } }],
  ["writeFile", { data: "" }],
  ["writeFileString", { data: "" }]
]

const snapshot = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { recursive: true, encoding: "utf8" })
    .sort()
    .map((name) => {
      const st = fs.lstatSync(path.join(dir, name))
      return `${name} ${st.mode.toString(8)} ${st.size}`
    })

/**
 * Registers the table under `describe(name)`. The extension is built with a batch limit of 4 (so
 * an over-limit batch is cheap to make).
 */
export const runBadInput = (
  name: string,
  makeExtension: (options: { readonly batchLimits?: { readonly size?: number; readonly response?: number } }) => AtomicFileSystem
): void => {
  const made: Array<AtomicFileSystem> = []
  afterEach(() => {
    for (const e of made.splice(0)) (e as { close?: () => void }).close?.()
  })
  const setup = () => {
    const w = workspace({ "top.txt": "top", "a/b.txt": "b" })
    const e = makeExtension({ batchLimits: { size: 4, response: 1 << 20 } })
    made.push(e)
    return { w, h: host(e), before: snapshot(w.boundaryRoot) }
  }

  describe(name, () => {
    it.each(rows)("%s → BadArgument", async (_, make) => {
      const { w, h, before } = setup()
      const e = await failure(h, make(w))
      expect(e.reason._tag, e.message.slice(0, 300)).toBe("BadArgument")
      expect(snapshot(w.boundaryRoot)).toEqual(before)
    })

    it.each(pathOperations)("%s with every bad path → BadArgument", async (operation, fields) => {
      const { w, h, before } = setup()
      for (const [what, path] of badPaths(w)) {
        const e = await failure(h, w.req(operation, { ...fields, path }))
        expect(e.reason._tag, `${operation} with ${what}: ${e.message.slice(0, 300)}`).toBe("BadArgument")
      }
      expect(snapshot(w.boundaryRoot)).toEqual(before)
    })

    it("identifyRoot refuses what is not an absolute path", async () => {
      const { h } = setup()
      for (const [, path] of [...wrongTypes, ["relative", "x"], ["NUL", "/tmp\0"]] as const) {
        const e = await failureOf(h.identifyRoot!(path as string))
        expect(e.reason._tag).toBe("BadArgument")
      }
    })
  })
}
