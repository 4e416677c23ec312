/**
 * The `pinnedfs` bin as a user runs it: the sources transpiled once per test file (beforeAll), each
 * run a child process, its exit status and output collected.
 */
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll } from "vitest"
import { runNode, type Ran } from "./node.ts"
import { transpileSources } from "./transpile.ts"

export type Pinnedfs = (args: ReadonlyArray<string>, options?: { cwd?: string; bin?: string; env?: NodeJS.ProcessEnv }) => Promise<Ran>

/** Registers the transpilation for the calling test file and answers a runner for the bin. */
export const useCli = (name: string): Pinnedfs => {
  let cli = ""
  let cleanup = (): void => {}
  beforeAll(() => {
    const t = transpileSources(name)
    cli = path.join(t.dir, "cli", "main.js")
    cleanup = t.cleanup
  })
  afterAll(() => cleanup())
  return (args, options = {}) =>
    runNode([options.bin ?? cli, ...args], { cwd: options.cwd ?? os.tmpdir(), ...(options.env ? { env: options.env } : {}) })
}
