/**
 * The README's pinnedfs/dev example, run as a user would run it (a child `node` process, the
 * package's own sources standing in for `pinnedfs` and `pinnedfs/dev`), so it cannot drift.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, expect, it } from "vitest"
import { runNodeOk } from "./support/node.ts"
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
  const stdout = await runNodeOk([file], { cwd: repo })
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
