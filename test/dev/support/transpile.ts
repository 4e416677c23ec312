/**
 * The package's sources transpiled to JavaScript inside the package (so the addon's loader finds
 * the package root two levels up, as it does from dist/), for tests that spawn `node` on them:
 * the command line is tested as a user runs it, in a child process, without depending on whether
 * dist/ was rebuilt since the last edit.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import ts from "typescript"
import { repo } from "./tools.ts"

export const transpileSources = (name: string): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = path.join(repo, `.vitest-${name}-${process.pid}`)
  const src = path.join(repo, "src")
  for (const file of fs.readdirSync(src, { recursive: true, encoding: "utf8" })) {
    if (!file.endsWith(".ts")) continue
    const out = ts.transpileModule(fs.readFileSync(path.join(src, file), "utf8"), {
      compilerOptions: { module: ts.ModuleKind.ESNext, target: ts.ScriptTarget.ES2022, rewriteRelativeImportExtensions: true }
    })
    const target = path.join(dir, file.replace(/\.ts$/, ".js"))
    fs.mkdirSync(path.dirname(target), { recursive: true })
    fs.writeFileSync(target, out.outputText)
  }
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}
