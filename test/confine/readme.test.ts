/**
 * The README's confinement example, run as it is written: extracted from README.md, saved in the
 * staged package (where `pinnedfs/confine` resolves), and run with Node in a child process.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"
import { stagePackage } from "./support/stage.ts"
import { exec } from "./support/tree.ts"

const readme = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../README.md")

it("the README's pinnedfs/confine example runs as written and prints what it promises", async () => {
  const text = fs.readFileSync(readme, "utf8")
  const match = /<!-- README example: confine -->\n```js\n([\s\S]*?)\n```/.exec(text)
  expect(match).not.toBeNull()
  const file = path.join(stagePackage(), "readme-confine.mjs")
  fs.writeFileSync(file, match![1]!)
  const r = await exec(process.execPath, [file])
  expect(r.stderr).toBe("")
  expect(r.code).toBe(0)
  const lines = r.stdout.trim().split("\n")
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^read-only .*\/project\/\.git$/),
      expect.stringMatching(/^inaccessible .*\/project\/\.env$/),
      expect.stringMatching(/^inaccessible .*\/home\/\.ssh$/),
      "workspace: written",
      ".git: read-only",
      ".env: hidden",
      "~/.ssh: hidden",
      "outside the workspace: read-only",
      "exit 0 true"
    ])
  )
})
