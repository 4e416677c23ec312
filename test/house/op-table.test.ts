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
import { expected, headerPath, outputPath, parseOps } from "../../scripts/op-table.mjs"

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

  it("the files it says a new operation touches are the ones it lists", () => {
    // Less the tests and the two files only an operand field of its own touches.
    const conditional = new Set(["native/binding/args.cc", "src/internal/native.ts"])
    const product = new Set(named.filter((f) => !f.startsWith("native/test/") && !conditional.has(f)))
    const claimed = /That is (\d+) product files edited by hand/.exec(section)
    expect(claimed).not.toBeNull()
    // The listed files, less the regenerated table, plus the new `<op>.cc` counted once.
    expect(product.size - 1).toBe(Number(claimed![1]))
  })
})
