/**
 * Hover documentation: every public member of PinnedRoot carries a doc comment (editors show it,
 * and the published declarations keep it), and the main operations carry an example.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const file = path.resolve(import.meta.dirname, "..", "..", "src", "PinnedRoot.ts")
const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, true)

const pinnedRoot = source.statements.find((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name?.text === "PinnedRoot")!

const members = pinnedRoot.members.filter((m) => {
  const modifiers = ts.canHaveModifiers(m) ? (ts.getModifiers(m) ?? []) : []
  if (modifiers.some((x) => x.kind === ts.SyntaxKind.PrivateKeyword)) return false
  if (ts.isConstructorDeclaration(m)) return false
  return m.name !== undefined
})
const docs = (m: ts.ClassElement) => ts.getJSDocCommentsAndTags(m).filter(ts.isJSDoc)
const nameOf = (m: ts.ClassElement) => (m.name as ts.Identifier).text
const published = members.filter((m) => !docs(m).some((d) => d.tags?.some((t) => t.tagName.text === "internal")))

describe("PinnedRoot's doc comments", () => {
  it("finds the class and its public methods", () => {
    expect(published.map(nameOf)).toEqual(expect.arrayContaining(["open", "readFile", "remove", "rename", "chmod", "writeFile", "close"]))
  })

  it("documents every public member", () => {
    const bare = published.filter((m) => docs(m).every((d) => (ts.getTextOfJSDocComment(d.comment) ?? "").trim() === "")).map(nameOf)
    expect(bare).toEqual([])
  })

  it.for(["open", "readFile", "writeFile", "remove"])("gives %s an example", (name) => {
    const m = published.find((x) => nameOf(x) === name)!
    expect(
      docs(m)
        .flatMap((d) => d.tags ?? [])
        .some((t) => t.tagName.text === "example")
    ).toBe(true)
  })
})
