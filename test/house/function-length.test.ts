/**
 * The house rule that no function in src/ runs over 100 lines, checked on the syntax tree the
 * TypeScript compiler builds, so that a closure holding a whole algorithm is caught however it is
 * written (declaration, arrow, function expression, method, accessor or constructor). A function's
 * lines run from its first token to its last, its doc comment not counted.
 */
import { readdirSync, readFileSync } from "node:fs"
import { join, relative } from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const limit = 100
const srcDir = join(import.meta.dirname, "..", "..", "src")

interface Measured {
  readonly file: string
  readonly name: string
  readonly line: number
  readonly lines: number
}

const isFunction = (node: ts.Node): node is ts.FunctionLikeDeclaration =>
  ts.isFunctionDeclaration(node) ||
  ts.isFunctionExpression(node) ||
  ts.isArrowFunction(node) ||
  ts.isMethodDeclaration(node) ||
  ts.isConstructorDeclaration(node) ||
  ts.isGetAccessorDeclaration(node) ||
  ts.isSetAccessorDeclaration(node)

const nameOf = (node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string => {
  if (node.name !== undefined) return node.name.getText(source)
  const parent = node.parent
  if ((ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && parent.name !== undefined) {
    return parent.name.getText(source)
  }
  return ts.isConstructorDeclaration(node) ? "constructor" : "<anonymous>"
}

/** Every function of one file's text, with its length in lines. */
const measure = (file: string, text: string): Array<Measured> => {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Array<Measured> = []
  const visit = (node: ts.Node): void => {
    if (isFunction(node)) {
      const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line
      const last = source.getLineAndCharacterOfPosition(node.getEnd()).line
      found.push({ file, name: nameOf(node, source), line: first + 1, lines: last - first + 1 })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

const sourceFiles = (dir: string): Array<string> =>
  readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const at = join(dir, entry.name)
    if (entry.isDirectory()) return sourceFiles(at)
    return /\.(?:ts|mts|cts)$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [at] : []
  })

const over = (functions: ReadonlyArray<Measured>) =>
  functions.filter((f) => f.lines > limit).map((f) => `${f.file}:${f.line} ${f.name} is ${f.lines} lines`)

/** A function of `body` lines between its opening and closing lines, in each shape measured. */
const shapes = (body: number): Record<string, string> => {
  const inner = Array.from({ length: body }, (_, i) => `  const v${i} = ${i}`).join("\n")
  return {
    declaration: `function f() {\n${inner}\n}\n`,
    arrow: `export const f = () => {\n${inner}\n}\n`,
    expression: `const f = function () {\n${inner}\n}\n`,
    method: `class C {\n  m() {\n${inner}\n  }\n}\n`,
    nested: `const outer = () => {\n  const f = () => {\n${inner}\n  }\n  return f\n}\n`
  }
}

describe("no function over 100 lines in src/", () => {
  it("measures a function from its first line to its last, in every shape, and flags only what is over", () => {
    for (const [shape, text] of Object.entries(shapes(limit - 2))) {
      const inner = measure(`${shape}.ts`, text).filter((f) => f.name === "f" || f.name === "m")
      expect(
        inner.map((f) => f.lines),
        shape
      ).toEqual([limit])
      // The nested shape's outer function holds the inner one and is longer: over, as it should be.
      expect(over(measure(`${shape}.ts`, text)), shape).toHaveLength(shape === "nested" ? 1 : 0)
    }
    for (const [shape, text] of Object.entries(shapes(limit - 1))) {
      const flagged = over(measure(`${shape}.ts`, text))
      expect(
        flagged.some((f) => / (?:f|m) is 101 lines$/.test(f)),
        shape
      ).toBe(true)
    }
  })

  it("does not count a function's doc comment", () => {
    const comment = `/**\n${Array.from({ length: 200 }, () => " * why").join("\n")}\n */\n`
    expect(measure("doc.ts", `${comment}export const f = () => 1\n`)).toEqual([{ file: "doc.ts", name: "f", line: 203, lines: 1 }])
  })

  it("holds for every file under src/", () => {
    const files = sourceFiles(srcDir)
    expect(files.length).toBeGreaterThan(100)
    const offenders = files.flatMap((file) => over(measure(relative(process.cwd(), file), readFileSync(file, "utf8"))))
    expect(offenders).toEqual([])
  })
})
