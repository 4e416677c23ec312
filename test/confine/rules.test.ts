/**
 * docs/confine-rules.md names, for each rule of the design, the test that proves it. This keeps the
 * table honest: every test it names exists, by that exact name, in the file it names.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect, it } from "vitest"

const repo = path.resolve(import.meta.dirname, "../..")

it("every test docs/confine-rules.md names exists, by that name, in the file it names", () => {
  const table = fs.readFileSync(path.join(repo, "docs/confine-rules.md"), "utf8")
  const rows = [...table.matchAll(/^\| (.+?) \| `([^`]+)`(?: \(both\))? \| (.+?) \|$/gm)].map((m) => ({ file: m[2]!, name: m[3]! }))
  expect(rows.length).toBeGreaterThan(60)
  const missing = rows.filter(({ file, name }) => {
    const source = fs.readFileSync(path.join(repo, file), "utf8")
    return !source.includes(JSON.stringify(name))
  })
  expect(missing).toEqual([])
})
