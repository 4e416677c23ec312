/**
 * `pinnedfs fix --confine` whose confinement is refused before the fixer starts (a `--may-create`
 * name in the mandatory deny set): the run must end with its failure, not hang. The step's
 * "still running" heartbeat used to start before the confinement was prepared, and a refusal left
 * the timer alive, so the process printed "still running" every two seconds forever.
 */
import { spawnSync } from "node:child_process"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, expect, it } from "vitest"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { sandboxWhy, skipUnless } from "../support/skip.ts"
import { scratch } from "../support/tree.ts"
import { transpileSources } from "./support/transpile.ts"
import { disk } from "./support/workspace.ts"

let cli = ""
let cleanup = (): void => {}
beforeAll(() => {
  const t = transpileSources("cli-refused-confine")
  cli = path.join(t.dir, "cli", "main.js")
  cleanup = t.cleanup
})
afterAll(() => cleanup())
// Where no sandbox can be built, fix --confine refuses for that reason before it looks at the
// names: the refusal this file is about is then not reached.
const sandbox = await sandboxAvailable()

it("a refused --may-create under --confine fails the run and the process exits", (ctx) => {
  skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
  const s = scratch()
  s.make({ "src/a.ts": "a\n" })
  // Bounded: a run that hangs is killed at 60 s and fails the test on its signal.
  const r = spawnSync(
    process.execPath,
    [cli, "fix", "--confine", "-w", s.root, "-s", "src/**", "--may-create", ".vscode/settings.json", "--", "/bin/true"],
    { cwd: os.tmpdir(), encoding: "utf8", timeout: 60_000 }
  )
  expect(r.signal, `stderr:\n${r.stderr}`).toBeNull()
  expect(r.status).not.toBe(0)
  expect(r.stderr).toMatch(/\.vscode/)
  expect(disk(s, "src/a.ts")).toBe("a\n")
})
