/**
 * The operation table and the kernel's methods table against everything derived from them, and
 * the add-an-operation checklist of docs/architecture.md against the tree.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as NodePath from "@effect/platform-node/NodePath"
import { Effect, FileSystem, Path } from "effect"
import { describe, expect, it } from "vitest"
import { decodeRequest } from "../../src/effect/requests.ts"
import { isPathOnly } from "../../src/effect/single.ts"
import { native } from "../../src/internal/native.ts"
import { makeConfinedView } from "../../src/kernel/internal/confinedView.ts"
import { makeGuarded } from "../../src/kernel/internal/guarded.ts"
import { methodNames, methods } from "../../src/kernel/internal/methods.ts"
import { refusing } from "../../src/kernel/internal/refusing.ts"
import { batchReads, executorOperations, executorReads, executorWrites, pathReads } from "../../src/protocol/operations.ts"
import { opTable } from "../../src/protocol/opTable.ts"
import type { AtomicFileSystem } from "../../src/protocol/wire.ts"
// @ts-expect-error: a plain-JavaScript script without declarations
import { expected, headerPath, outputPath, parseOps, parseRows } from "../../scripts/op-table.mjs"

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
const wireNames = (r: { readonly name: string; readonly text: boolean }) => (r.text ? [r.name, `${r.name}String`] : [r.name])

describe("the operation table", () => {
  it("src/protocol/opTable.ts is what scripts/op-table.mjs makes of native/core/request.h", () => {
    expect(fs.readFileSync(outputPath, "utf8")).toBe((expected as () => string)())
  })

  it("the addon's opTable and ops exports are the header's rows", () => {
    const rows = (parseOps as (header: string) => unknown)(fs.readFileSync(headerPath, "utf8"))
    expect(native.opTable).toEqual(rows)
    expect(native.opTable).toEqual(opTable)
    expect(native.ops).toEqual(Object.fromEntries(opTable.map((r) => [r.name, r.code])))
  })

  it("every row is in the protocol's lists its columns put it in (a Method row in none), and no list names an operation the table lacks", () => {
    const known = new Set([...opTable.flatMap(wireNames), "batch"])
    for (const name of executorOperations) expect(known.has(name), name).toBe(true)
    for (const row of opTable) {
      for (const name of wireNames(row)) {
        // A PinnedRoot method's own operation is on no executor's wire.
        expect(executorOperations.includes(name as never), name).toBe(row.operand !== "Method")
        const compactRead = row.effect === "Read" && row.pathOnly
        expect(pathReads.includes(name as never), name).toBe(compactRead)
        expect(batchReads.includes(name as never), name).toBe(compactRead || row.operand === "Glob")
        expect(executorReads.includes(name as never), name).toBe(compactRead || row.effect === "Resolve")
        expect(executorWrites.includes(name as never), name).toBe(
          row.effect === "Write" && (row.operand === "Path" || row.operand === "PathTo" || row.operand === "Data")
        )
      }
    }
  })

  it("the compact form carries exactly the rows marked pathOnly", () => {
    for (const row of opTable) expect(isPathOnly({ op: row.code, path: "x" }), row.name).toBe(row.pathOnly)
  })
})

describe("what a new row needs no edit for", () => {
  const read = (...parts: Array<string>) => fs.readFileSync(path.join(repo, ...parts), "utf8")
  const rows = (parseRows as (header: string) => Array<{ name: string; handler: string }>)(read("native", "core", "request.h"))
  const opsDir = path.join(repo, "native", "ops")
  const opFiles = (ext: string) =>
    fs
      .readdirSync(opsDir)
      .filter((f) => f.endsWith(ext))
      .map((f) => [f, fs.readFileSync(path.join(opsDir, f), "utf8")] as const)
  const declared = (text: string, handler: string) => new RegExp(`Result<Value>\\s+${handler}\\s*\\(`).test(text)

  it("execute()'s dispatch is the handler column: no hand-written case", () => {
    const execute = read("native", "core", "execute.cc")
    expect(execute).toContain("PINNEDFS_OPS(PINNEDFS_DISPATCH)")
    expect(execute).toMatch(/case Op::name:\s*\\\s*return ops::handler\(root, request\);/)
    expect(new Set([...execute.matchAll(/case Op::(\w+)/g)].map((m) => m[1]))).toEqual(new Set(["name", "Count"]))
  })

  it("ops.h declares every handler from its row, no header by hand, and one native/ops file defines each", () => {
    expect(read("native", "ops", "ops.h")).toContain("PINNEDFS_OPS(PINNEDFS_OP_HANDLER)")
    const headers = opFiles(".h")
    const sources = opFiles(".cc")
    for (const { name, handler } of rows) {
      for (const [file, text] of headers) expect(declared(text, handler), `${file} declares ${handler}`).toBe(false)
      const defining = sources.filter(([, text]) => new RegExp(`^Result<Value> ${handler}\\(const Root&`, "m").test(text))
      expect(
        defining.map(([f]) => f),
        `${name}: ops::${handler} defined once`
      ).toHaveLength(1)
    }
  })

  it("native/sources.json lists no operation's file: both builds and the macOS check list native/ops", () => {
    const sources = JSON.parse(read("native", "sources.json")) as Record<string, unknown>
    expect(sources["coreDirs"]).toEqual(["native/ops"])
    for (const [key, list] of Object.entries(sources)) {
      if (Array.isArray(list) && key !== "coreDirs") {
        for (const f of list as Array<string>) expect(f.startsWith("native/ops/"), `${key}: ${f}`).toBe(false)
      }
    }
    expect(read("binding.gyp")).toContain("coreDirs.flatMap(d => fs.readdirSync(d)")
    expect(read("CMakeLists.txt")).toMatch(/string\(JSON \w+ GET "\$\{PINNEDFS_SOURCES_JSON\}" coreDirs/)
    expect(read("scripts", "package", "darwin-syntax.mjs")).toContain("sources.coreDirs.flatMap")
  })

  it("src/effect/requests.ts decodes by operand kind: no wire operation has a case of its own", () => {
    const requests = read("src", "effect", "requests.ts")
    for (const row of opTable) {
      for (const name of wireNames(row)) expect(requests.includes(`case "${name}"`), name).toBe(false)
    }
  })

  it("every executor row of a regular operand kind decodes to its own code", () => {
    const roots = { boundaryRoot: "/w", logicalRoot: "/w", rootIdentity: "1:1" }
    const limits = { batchSize: 8, contentLimit: 1024, durable: false }
    const operands = { path: "/w/a", from: "/w/a", to: "/w/b", data: "", options: { mode: 0o644, uid: 0, gid: 0 } }
    const regular = opTable.filter((r) => ["Path", "PathTo", "Data"].includes(r.operand) && executorOperations.includes(r.name as never))
    expect(regular.length).toBeGreaterThan(10)
    for (const row of regular) {
      for (const operation of wireNames(row)) {
        const decoded = decodeRequest({ ...roots, ...operands, operation }, limits)
        expect(decoded._tag, operation).toBe("Success")
        if (decoded._tag !== "Success" || decoded.success._tag !== "Single") throw new Error(operation)
        expect(decoded.success.planned.native.op, operation).toBe(row.code)
      }
    }
  })
})

describe("the kernel's methods table", () => {
  const noopPath = Effect.runSync(Effect.provide(Effect.service(Path.Path), NodePath.layer))
  const root = { boundaryRoot: "/w", logicalRoot: "/w", rootIdentity: "1:1:0" }

  it("has one row per FileSystem method, and every layer made from it has every method", () => {
    const effectMethods = Object.keys(FileSystem.makeNoop({})).filter((k) => !k.startsWith("~"))
    expect([...methodNames].sort()).toEqual(effectMethods.sort())
    const atomic = { execute: () => Effect.die("unused") } as unknown as AtomicFileSystem
    const auth = { atomic, path: noopPath, root, normalize: (p: string) => p }
    const layers = {
      refusing: refusing((p) => p, "/tmp"),
      confined: makeConfinedView(atomic, noopPath, root as never),
      guarded: makeGuarded({ auth: auth as never, systemTemp: "/tmp" })
    }
    for (const [layer, made] of Object.entries(layers)) {
      for (const name of methodNames) expect(typeof (made as unknown as Record<string, unknown>)[name], `${layer}.${name}`).toBe("function")
    }
  })

  it("a row that says how an isolated volume performs an operation names a wire operation", () => {
    for (const name of methodNames) {
      if (methods[name].volume !== undefined) expect(executorOperations, name).toContain(name)
    }
  })
})

describe("the add-an-operation checklist (docs/architecture.md)", () => {
  const doc = fs.readFileSync(path.join(repo, "docs", "architecture.md"), "utf8")
  const section = doc.slice(doc.indexOf("## Adding an operation"))
  const items = section.split("\n\n").find((block) => /^1\. /m.test(block)) ?? ""
  const named = [...items.matchAll(/`((?:native|src)\/[^`\s]+)`/g)].map((m) => m[1]!)

  it("names the two tables, and every file it names exists", () => {
    expect(named).toContain("native/core/request.h")
    expect(named).toContain("src/kernel/internal/methods.ts")
    for (const file of named) {
      if (file.includes("<op>")) expect(fs.existsSync(path.join(repo, path.dirname(file))), file).toBe(true)
      else expect(fs.existsSync(path.join(repo, file)), file).toBe(true)
    }
  })

  it("a new operation touches the six product files it lists, and no more", () => {
    // Less the tests, the regenerated table, and the files only an operand field of its own touches.
    const conditional = new Set(["native/binding/args.cc", "src/internal/native.ts", "src/effect/requests.ts", "src/protocol/opTable.ts"])
    const product = new Set(named.filter((f) => !f.startsWith("native/test/") && !conditional.has(f)))
    const claimed = /That is (\d+) product files edited by hand/.exec(section)
    expect(claimed).not.toBeNull()
    expect(product.size).toBe(Number(claimed![1]))
    expect([...product].sort()).toEqual(
      [
        "native/core/request.h",
        "native/ops/<op>.cc",
        "src/PinnedRoot.ts",
        "src/fallback/operations.ts",
        "src/kernel/internal/methods.ts",
        "src/protocol/wire.ts"
      ].sort()
    )
  })
})
