/**
 * The kernel changing under a running process: a seccomp filter installed after openat2 has
 * worked (test/restricted/seccomp_block.c, on every thread at once), in a child process that is
 * thrown away afterwards. Two promises of the README are checked through PinnedRoot as a user
 * calls it:
 * - no downgrade: once the kernel strategy has worked in a process, a later ENOSYS or EPERM makes
 *   an `auto` pin fail visibly instead of quietly walking, and a root already pinned with openat2
 *   answers the error instead of walking; the control is the same filter installed before openat2
 *   ever worked, where `auto` takes the walk;
 * - EAGAIN from openat2 is retried a bounded number of times, then reported as Busy.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { buildHelper } from "../../scripts/race/run.mjs"
import { runStaged } from "../support/nobody.ts"

let blocker = ""
beforeAll(() => {
  blocker = buildHelper("test/restricted/seccomp_block.c", "seccomp_block.node", { shared: true })
})

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** A root with one file; world-readable, so the staged child can reach it. */
const tree = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-changed-"))
  made.push(dir)
  fs.mkdirSync(path.join(dir, "a"))
  fs.writeFileSync(path.join(dir, "a/f.txt"), "inside")
  return dir
}

interface Settled {
  readonly ok: boolean
  readonly value?: unknown
  readonly code?: string
  readonly reason?: string
  readonly refusal?: string
  readonly description?: string
}

/**
 * Runs `steps` (the body of an async function with `PinnedRoot`, `block(errnoName)`, `dir`,
 * `settle(promise)` and `out` in scope) in a child, through the library staged from the sources.
 */
const inChild = (dir: string, steps: string): Record<string, Settled | string | number> => {
  const run = runStaged(
    `
    ;(async () => {
      const [blocker, dir] = process.argv.slice(1)
      const { block } = require(blocker)
      const { PinnedRoot } = await import(stage + "/dist/index.js")
      const settle = (p) => p.then(
        (value) => ({ ok: true, value }),
        (e) => ({ ok: false, code: e.code, reason: e.reason, refusal: e.refusal, description: e.description }))
      const out = {}
      ${steps}
      process.stdout.write(JSON.stringify(out))
    })().catch((e) => { console.error(e); process.exit(1) })`,
    { args: [blocker, dir], library: true, user: "self" }
  )
  expect(run.stderr).toBe("")
  expect(run.status).toBe(0)
  return JSON.parse(run.stdout)
}

describe.each(["ENOSYS", "EPERM"])("openat2 answering %s after it has worked in the process", (blocked) => {
  it("makes a later auto pin fail visibly, and a root pinned with openat2 fail, never walk", () => {
    const out = inChild(
      tree(),
      `
      const first = await PinnedRoot.open(dir)
      out.first = first.strategy
      out.before = await settle(first.readFileString("a/f.txt"))
      block(${JSON.stringify(blocked)})
      out.held = await settle(first.readFileString("a/f.txt"))
      out.auto = await settle(PinnedRoot.open(dir).then((r) => r.strategy))
      out.openat2 = await settle(PinnedRoot.open(dir, { strategy: "openat2" }).then((r) => r.strategy))
      out.walk = await settle(PinnedRoot.open(dir, { strategy: "walk" }).then((r) => r.readFileString("a/f.txt")))`
    )
    expect(out["first"]).toBe("openat2")
    expect(out["before"]).toEqual({ ok: true, value: "inside" })
    // The root already pinned keeps its strategy: the error, not the file through a walk.
    expect(out["held"]).toMatchObject({ ok: false, code: blocked })
    // A new auto pin is refused, saying why.
    expect(out["auto"]).toMatchObject({ ok: false, code: blocked })
    expect((out["auto"] as Settled).description).toContain("refusing to downgrade to the walk")
    expect(out["openat2"]).toMatchObject({ ok: false, code: blocked })
    // Asking for the walk by name still works: only the silent downgrade is refused.
    expect(out["walk"]).toEqual({ ok: true, value: "inside" })
  })

  it("(control) lets auto take the walk when openat2 never worked in the process", () => {
    const out = inChild(
      tree(),
      `
      block(${JSON.stringify(blocked)})
      const root = await PinnedRoot.open(dir)
      out.auto = root.strategy
      out.read = await settle(root.readFileString("a/f.txt"))`
    )
    expect(out).toEqual({ auto: "walk", read: { ok: true, value: "inside" } })
  })
})

describe("openat2 answering EAGAIN", () => {
  it("is retried a bounded number of times, then answered Busy; the walk is untouched", () => {
    const out = inChild(
      tree(),
      `
      const kernel = await PinnedRoot.open(dir, { strategy: "openat2" })
      const walk = await PinnedRoot.open(dir, { strategy: "walk" })
      block("EAGAIN")
      out.kernel = await settle(kernel.readFileString("a/f.txt"))
      out.walk = await settle(walk.readFileString("a/f.txt"))`
    )
    // It came back at all (the retries are bounded), as Busy with the errno and the reason said.
    expect(out["kernel"]).toMatchObject({ ok: false, code: "EAGAIN", reason: "Busy", refusal: "" })
    expect((out["kernel"] as Settled).description).toContain("retries exhausted")
    expect(out["walk"]).toEqual({ ok: true, value: "inside" })
  })
})
