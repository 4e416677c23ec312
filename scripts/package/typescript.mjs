#!/usr/bin/env node
// npm run build:ts — tsc -p tsconfig.build.json, with one change to the declaration files.
//
// The sources import each other as "./PinnedRoot.ts" (allowImportingTsExtensions with
// rewriteRelativeImportExtensions, so tests and scripts run them as they are). tsc rewrites those
// specifiers to ".js" in the JavaScript it emits but leaves them as written in the .d.ts files,
// which then point a consumer at source files the package does not ship. The transformer below
// gives the declarations the same ".js" specifiers as the JavaScript beside them. The compiler's
// own settings (stripInternal among them) come from tsconfig.build.json.
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..")
const configPath = join(root, "tsconfig.build.json")

const host = {
  getCanonicalFileName: (f) => f,
  getCurrentDirectory: () => root,
  getNewLine: () => "\n"
}

const fail = (diagnostics) => {
  process.stderr.write(ts.formatDiagnosticsWithColorAndContext(diagnostics, host))
  process.exit(1)
}

const read = ts.readConfigFile(configPath, ts.sys.readFile)
if (read.error) fail([read.error])
const config = ts.parseJsonConfigFileContent(read.config, ts.sys, root, undefined, configPath)
if (config.errors.length > 0) fail(config.errors)

const jsExtension = { ".ts": ".js", ".tsx": ".jsx", ".mts": ".mjs", ".cts": ".cjs" }

/** "./a.ts" → "./a.js"; bare specifiers and anything already ".js" are left alone. */
export const rewriteSpecifier = (text) => {
  if (!text.startsWith("./") && !text.startsWith("../")) return text
  if (text.endsWith(".d.ts")) return text
  for (const [from, to] of Object.entries(jsExtension)) {
    if (text.endsWith(from)) return text.slice(0, -from.length) + to
  }
  return text
}

const specifiers = (context) => {
  const f = context.factory
  const literal = (node) =>
    node && ts.isStringLiteral(node) && rewriteSpecifier(node.text) !== node.text
      ? f.createStringLiteral(rewriteSpecifier(node.text))
      : undefined
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const s = literal(node.moduleSpecifier)
      if (s) return f.updateImportDeclaration(node, node.modifiers, node.importClause, s, node.attributes)
    } else if (ts.isExportDeclaration(node)) {
      const s = literal(node.moduleSpecifier)
      if (s) {
        return f.updateExportDeclaration(node, node.modifiers, node.isTypeOnly, node.exportClause, s, node.attributes)
      }
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const s = literal(node.argument.literal)
      if (s) {
        return f.updateImportTypeNode(
          node,
          f.updateLiteralTypeNode(node.argument, s),
          node.attributes,
          node.qualifier,
          ts.visitNodes(node.typeArguments, visit),
          node.isTypeOf
        )
      }
    }
    return ts.visitEachChild(node, visit, context)
  }
  return (file) => (ts.isSourceFile(file) ? ts.visitEachChild(file, visit, context) : file)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const program = ts.createProgram({ rootNames: config.fileNames, options: config.options, projectReferences: config.projectReferences })
  const before = ts.getPreEmitDiagnostics(program)
  if (before.length > 0) fail(before)
  const result = program.emit(undefined, undefined, undefined, false, { afterDeclarations: [specifiers] })
  if (result.diagnostics.length > 0) fail(result.diagnostics)
}
