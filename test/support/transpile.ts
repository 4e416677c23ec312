/**
 * The package's sources transpiled to JavaScript inside the package (so the addon's loader finds
 * the package root two levels up, as it does from dist/), for worker threads and child processes
 * that cannot load TypeScript. Answers the directory; remove it when done.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import ts from "typescript"

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

export const transpileSources = (name: string): string => {
  const transpiled = path.join(packageRoot, `.vitest-${name}-${process.pid}`)
  const src = path.join(packageRoot, "src")
  for (const file of fs.readdirSync(src, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".ts")) continue
    const out = ts.transpileModule(fs.readFileSync(path.join(src, file), "utf8"), {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        rewriteRelativeImportExtensions: true
      }
    })
    const target = path.join(transpiled, file.replace(/\.ts$/, ".js"))
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, out.outputText)
  }
  return transpiled
}
