/**
 * The `pinnedfs` bin writing into a pipe whose reader has gone (`pinnedfs fix --help | head -1`,
 * `pinnedfs fix … | head -1`, a terminal closed under a run): no stack trace, help exits 0, and a
 * run's lost output loses nothing else: the fixer still runs to its end, the scope is re-read, a
 * failed step is still rolled back, and the status is the run's own.
 */
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { scratch } from "../support/tree.ts"
import { runNodeIntoClosed } from "./support/node.ts"
import { transpileSources } from "./support/transpile.ts"
import { disk } from "./support/workspace.ts"
import { fixerScript } from "./support/fixer.ts"

let cli = ""
let cleanup = (): void => {}
beforeAll(() => {
  const t = transpileSources("cli-pipe")
  cli = path.join(t.dir, "cli", "main.js")
  cleanup = t.cleanup
})
afterAll(() => cleanup())

const into = (closed: ReadonlyArray<"stdout" | "stderr">, args: ReadonlyArray<string>) =>
  runNodeIntoClosed([cli, ...args], { cwd: os.tmpdir(), closed })

const script = fixerScript

describe("pinnedfs into a closed pipe", () => {
  for (const args of [["--help"], ["--version"], ["fix", "--help"], ["run", "--help"], ["mcp", "--help"]]) {
    it(`${args.join(" ")}: exits 0, no stack trace`, async () => {
      const r = await into(["stdout"], args)
      expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" })
    })
  }

  it("a usage error with stderr closed still exits 2, quietly", async () => {
    const r = await into(["stderr"], ["fix", "--no-such-option"])
    expect({ code: r.code, stdout: r.stdout }).toEqual({ code: 2, stdout: "" })
  })

  it("fix with its report lost: the fixer's edit lands, the status is the run's, nothing on stderr", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "src/b.ts": "b\n" })
    const fixer = script("for (const f of files) fs.appendFileSync(f, 'fixed\\n')")
    const r = await into(["stdout"], ["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" })
    expect([disk(s, "src/a.ts"), disk(s, "src/b.ts")]).toEqual(["a\nfixed\n", "b\nfixed\n"])
  })

  it("fix with stdout and stderr closed mid-progress: a failed step is still rolled back, and exits 1", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "src/b.ts": "b\n" })
    // Rewrites its files, talks (into the closed stderr, through pinnedfs), then fails.
    const fixer = script("for (const f of files) fs.writeFileSync(f, 'half\\n')\nconsole.log('lots of output')\nprocess.exit(3)")
    const r = await into(["stdout", "stderr"], ["fix", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect(r.code).toBe(1)
    expect([disk(s, "src/a.ts"), disk(s, "src/b.ts")]).toEqual(["a\n", "b\n"])
  })

  it("fix --json into a closed pipe: the status is the run's (1 for a failed step), no stack trace", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const fixer = script("process.exit(4)")
    const r = await into(["stdout"], ["fix", "--json", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 1, stderr: "" })
  })
})
