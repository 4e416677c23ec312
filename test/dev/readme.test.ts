/**
 * The README's pinnedfs/dev example, run as a user would run it (a child `node` process, the
 * package's own sources standing in for `pinnedfs` and `pinnedfs/dev`), so it cannot drift.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, expect, it } from "vitest"
import { repo } from "./support/tools.ts"
import { transpileSources } from "./support/transpile.ts"

const t = transpileSources("readme")
afterAll(() => t.cleanup())

const example = (): string => {
  const readme = fs.readFileSync(path.join(repo, "README.md"), "utf8")
  const section = readme.slice(readme.indexOf("## In-place fixers: `pinnedfs/dev`"))
  const block = /```js\n([\s\S]*?)```/.exec(section)
  if (!block) throw new Error("the README's pinnedfs/dev section has no js block")
  return block[1]!
}

it("the README's plan runs and does what its comments say", async () => {
  const code = example()
    .replace(`from "pinnedfs/dev"`, `from ${JSON.stringify(path.join(t.dir, "dev", "index.js"))}`)
    .replace(`from "pinnedfs"`, `from ${JSON.stringify(path.join(t.dir, "index.js"))}`)
  const file = path.join(t.dir, "readme-example.mjs")
  fs.writeFileSync(file, code)
  const stdout = await new Promise<string>((resolve, reject) => {
    const child = spawn(process.execPath, [file], { cwd: repo, stdio: ["ignore", "pipe", "pipe"] })
    let out = ""
    let err = ""
    child.stdout.on("data", (d: Buffer) => (out += d.toString()))
    child.stderr.on("data", (d: Buffer) => (err += d.toString()))
    child.on("error", reject)
    child.on("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))))
  })
  expect(stdout.split("\n")).toEqual([
    "edit a.ts ok []",
    "format ok [ 'WARNING withheld src/a.ts' ]",
    "write ok []",
    "format again ok []",
    "check ok [ 'WARNING engine src/a.ts' ]",
    "export const a = 42; // TODO",
    "",
    ""
  ])
}, 60_000)
