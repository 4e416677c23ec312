/**
 * `npm run demo` as a newcomer runs it: every section there, every line within 100 columns, and on
 * a machine without bubblewrap the confined command is skipped saying why while the rest still
 * runs. Short race and timing loops (DEMO_* variables), so the test checks the shape, not figures.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { ensureDist } from "../../scripts/package/dist.mjs"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { exec } from "../confine/support/tree.ts"
import { skipUnless } from "../support/skip.ts"
import { registerScratch } from "../support/tree.ts"

const repo = path.resolve(import.meta.dirname, "..", "..")

beforeAll(() => {
  ensureDist()
}, 300_000)

const demo = (env: NodeJS.ProcessEnv) =>
  exec(process.execPath, [path.join(repo, "scripts/demo.mjs")], {
    cwd: repo,
    env: { ...process.env, DEMO_RACE_READS: "200", DEMO_RACE_SECONDS: "0.5", DEMO_ITERATIONS: "200", ...env }
  })

const tooWide = (text: string) => text.split("\n").filter((l) => [...l].length > 100)

const sections = [
  "1. The library: read workspace/notes/secret.txt",
  "2. pinnedfs run: a command confined to the workspace",
  "3. pinnedfs fix: an in-place fixer rewrites src/",
  "4. Read workspace/docs/secret.txt while another thread swaps docs/",
  "5. Time per read of workspace/src/lib/util/file.txt"
]

describe("npm run demo", () => {
  it("shows the library, pinnedfs run refusing .git, pinnedfs fix re-reading a fixer's work, within 100 columns", async (ctx) => {
    const sandbox = await sandboxAvailable()
    skipUnless(ctx, sandbox.available, `no sandbox here for pinnedfs run: ${sandbox.available ? "" : sandbox.reason}`)
    const r = await demo({})
    expect(r.stderr).toBe("")
    expect(r.code).toBe(0)
    for (const s of sections) expect(r.stdout).toContain(s)
    expect(r.stdout).toMatch(/node:fs\/promises \(no confinement\) +READ THE SECRET/)
    expect(r.stdout).toMatch(/PinnedRoot \(walk\) +refused: PinnedFsError code=ELOOP refusal=symlink/)
    expect(r.stdout).toContain("notes.txt: written (the workspace is writable)")
    expect(r.stdout).toContain(".git/config: refused (read-only)")
    expect(r.stdout).toContain("../outside/secret.txt: refused (read-only)")
    expect(r.stdout).toContain("exit status 0; .git/config unchanged on disk: yes")
    expect(r.stdout).toMatch(/changed: +src\/app\.ts/)
    expect(r.stdout).toContain("let count = 1\n")
    expect(tooWide(r.stdout)).toEqual([])
  }, 120_000)

  it("without bubblewrap, says why pinnedfs run is skipped and shows the rest", async () => {
    // A PATH with no bwrap on it, as on a machine that never installed bubblewrap.
    const bare = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-demo-path-"))
    registerScratch(bare)
    const r = await demo({ PATH: bare })
    expect(r.code).toBe(0)
    for (const s of sections) expect(r.stdout).toContain(s)
    expect(r.stdout).toContain("skipped: this machine cannot confine a command: bubblewrap (bwrap) is not installed")
    expect(r.stdout).not.toContain(".git/config: refused")
    expect(r.stdout).toMatch(/changed: +src\/app\.ts/)
    expect(tooWide(`${r.stdout}${r.stderr}`)).toEqual([])
  }, 120_000)
})
