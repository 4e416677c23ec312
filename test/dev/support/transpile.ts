/**
 * The package's sources transpiled to JavaScript inside the package (so the addon's loader finds
 * the package root two levels up, as it does from dist/), for tests that spawn `node` on them:
 * the command line is tested as a user runs it, in a child process, without depending on whether
 * dist/ was rebuilt since the last edit.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { transpileTree } from "../../support/transpile-cache.ts"
import { repo } from "./tools.ts"

export const transpileSources = (name: string): { readonly dir: string; readonly cleanup: () => void } => {
  const dir = path.join(repo, `.vitest-${name}-${process.pid}`)
  transpileTree(path.join(repo, "src"), dir)
  return { dir, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) }
}
