/**
 * A fixer script outside the workspace, run as `node SCRIPT FILES...` with `fs` and `files` (its
 * arguments) in scope; removed after the test, with its scratch workspace.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { registerScratch } from "../../support/tree.ts"

export const fixerScript = (body: string): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-fixer-"))
  registerScratch(dir)
  const file = path.join(dir, "fixer.cjs")
  fs.writeFileSync(file, `const fs = require("fs")\nconst files = process.argv.slice(2)\n${body}\n`)
  return file
}
