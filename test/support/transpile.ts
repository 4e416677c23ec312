/**
 * The package's sources transpiled to JavaScript inside the package (so the addon's loader finds
 * the package root two levels up, as it does from dist/), for worker threads and child processes
 * that cannot load TypeScript. Answers the directory; remove it when done.
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { transpileTree } from "./transpile-cache.ts"

export const packageRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..")

export const transpileSources = (name: string): string => {
  const transpiled = path.join(packageRoot, `.vitest-${name}-${process.pid}`)
  transpileTree(path.join(packageRoot, "src"), transpiled)
  return transpiled
}
