/**
 * One transpiler for every suite that runs `src/` as JavaScript (in a child process, a worker
 * thread or a staged package), with one cache for the run.
 *
 * About thirty test files each turned the whole of `src/` into JavaScript in their set-up: 150
 * files through TypeScript's `transpileModule`, about six seconds of CPU every time, a quarter of
 * the suite's CPU on this project's two cores. The output depends only on a file's text, so the
 * first file to need a source transpiles it and the rest read the result: the global set-up below
 * makes one cache directory for the run (named by `PINNEDFS_TEST_TRANSPILED` to the workers), keyed
 * by the SHA-256 of the source, and removes it at the end. A source edited during the run has a new
 * key, so a stale translation is never served. Outside a vitest run (no variable) it transpiles.
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import type * as TypeScript from "typescript"

const cacheVariable = "PINNEDFS_TEST_TRANSPILED"

// Loaded on the first miss only: TypeScript's compiler is nine megabytes of JavaScript to parse.
let ts: typeof TypeScript | undefined
const compiler = (): typeof TypeScript => (ts ??= createRequire(import.meta.url)("typescript") as typeof TypeScript)

/** The text of the TypeScript file `file` as ES module JavaScript (relative `.ts` imports as `.js`). */
export const transpiledText = (file: string): string => {
  const source = fs.readFileSync(file, "utf8")
  const cache = process.env[cacheVariable]
  const cached = cache === undefined ? undefined : path.join(cache, `${createHash("sha256").update(source).digest("hex")}.js`)
  if (cached !== undefined && fs.existsSync(cached)) return fs.readFileSync(cached, "utf8")
  const t = compiler()
  const out = t.transpileModule(source, {
    compilerOptions: { module: t.ModuleKind.ESNext, target: t.ScriptTarget.ES2022, rewriteRelativeImportExtensions: true }
  }).outputText
  if (cached !== undefined) {
    // Whole or not at all: another worker may be reading the same key.
    const partial = `${cached}.${process.pid}.partial`
    fs.writeFileSync(partial, out)
    fs.renameSync(partial, cached)
  }
  return out
}

/** Writes every `.ts` file below `from` as `.js` at the same place below `to` (directories 0755, files 0644). */
export const transpileTree = (from: string, to: string): void => {
  fs.mkdirSync(to, { recursive: true, mode: 0o755 })
  for (const entry of fs.readdirSync(from, { withFileTypes: true })) {
    const source = path.join(from, entry.name)
    if (entry.isDirectory()) transpileTree(source, path.join(to, entry.name))
    else if (entry.name.endsWith(".ts"))
      fs.writeFileSync(path.join(to, entry.name.replace(/\.ts$/, ".js")), transpiledText(source), { mode: 0o644 })
  }
}

/**
 * Fills the run's cache with every `.ts` file below `dir`, answering nothing: for a test whose child
 * processes will need the translations (a child vitest run, under a test time limit) and should find
 * them made, whatever the load.
 */
export const warmTranspiled = (dir: string): void => {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const source = path.join(dir, entry.name)
    if (entry.isDirectory()) warmTranspiled(source)
    else if (entry.name.endsWith(".ts")) transpiledText(source)
  }
}

/**
 * vitest's global set-up: the run's cache, outside the run's temporary directory, removed at the end.
 * A run started by a test of another run (test/restricted re-runs suites in a child vitest) uses the
 * enclosing run's cache, which outlives it: keyed by content, its entries are as good for the child,
 * and a cache of its own would transpile the whole of `src/` again for each child run.
 */
export default function setup(): () => void {
  const enclosing = process.env[cacheVariable]
  if (enclosing !== undefined && fs.existsSync(enclosing)) return () => {}
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-transpiled-"))
  const previous = process.env[cacheVariable]
  process.env[cacheVariable] = dir
  return () => {
    if (previous === undefined) delete process.env[cacheVariable]
    else process.env[cacheVariable] = previous
    fs.rmSync(dir, { recursive: true, force: true })
  }
}
