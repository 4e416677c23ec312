/**
 * Two `pinnedfs fix` runs on the same workspace at the same time. Each re-reads and may roll back
 * what it saw change, and nothing tells one run's fixer's writes from the other's: a failing run
 * would put its pre-step bytes back over the other run's reported, successful fix. So the second
 * run is refused while the first holds the workspace (exit 75, nothing done), and the first run's
 * hold ends with it, however it ends.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { mkfifo, scratch } from "../support/tree.ts"
import { useCli } from "./support/cli.ts"
import { disk } from "./support/workspace.ts"
import { fixerScript } from "./support/fixer.ts"

const pinnedfs = useCli("cli-concurrent")
const dirs: Array<string> = []
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true })
})
const script = fixerScript

/** A FIFO in a directory of its own, removed after the file's tests: a gate between the test and a fixer. */
const fifo = (): string => {
  const gate = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-gate-")), "fifo")
  dirs.push(path.dirname(gate))
  mkfifo(gate)
  return gate
}

describe("pinnedfs fix twice at once on one workspace", () => {
  it("the second is refused while the first runs; the first's rollback then loses nobody's edit", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const gate = fifo()
    // A: rewrites its file, then waits on the FIFO until the test lets it go, then fails.
    const slow = script(`for (const f of files) fs.writeFileSync(f, 'A\\n')\nfs.readFileSync(${JSON.stringify(gate)})\nprocess.exit(1)`)
    const first = pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, slow])
    // Opening the FIFO for writing returns once A's fixer has opened it: A is mid-run.
    const held = await fs.promises.open(gate, "w")
    const fast = script("for (const f of files) fs.appendFileSync(f, 'B\\n')")
    const second = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fast])
    await held.close()
    const a = await first
    expect(a.code).toBe(1)
    expect({ code: second.code, stderr: second.stderr, stdout: second.stdout }).toEqual({
      code: 75,
      stderr: expect.stringMatching(/another pinnedfs fix is running on the workspace .*: nothing done/),
      stdout: ""
    })
    // A was rolled back; B changed nothing and said so.
    expect(disk(s, "src/a.ts")).toBe("a\n")
    // The hold ended with A: a run now goes ahead.
    const third = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fast])
    expect(third.code).toBe(0)
    expect(disk(s, "src/a.ts")).toBe("a\nB\n")
  })

  it("a run killed with SIGKILL leaves no hold behind", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const gate = fifo()
    // The fixer reports the pid of pinnedfs (its parent) through the FIFO, then waits to be killed.
    const waiting = script(`fs.writeFileSync(${JSON.stringify(gate)}, process.ppid + " " + process.pid)\nsetInterval(() => {}, 1 << 30)`)
    const run = pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, waiting])
    const [pid, fixer] = (await fs.promises.readFile(gate, "utf8")).split(" ").map(Number)
    process.kill(pid!, "SIGKILL")
    expect((await run).code).toBe(null)
    // Its fixer, in a process group of its own, outlives it: stopped here, by its id.
    process.kill(fixer!, "SIGKILL")
    const fast = script("for (const f of files) fs.appendFileSync(f, 'B\\n')")
    const next = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, fast])
    expect(next.code).toBe(0)
    expect(disk(s, "src/a.ts")).toBe("a\nB\n")
  })
})
