/**
 * The trip to the thread pool: the requests one turn submits queue behind a few work items (not one
 * each), an awaited caller's next request is taken by the runner that answered the last one, every
 * answer still goes to its own request, and a slow operation holds only its own runner, never the
 * requests behind it.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { native } from "../src/internal/native.ts"
import { noTestHooks, testHooks } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"

const child = fileURLToPath(new URL("./trip-linger.child.mjs", import.meta.url))
const poolSize = Math.min(Math.max(Number(process.env["UV_THREADPOOL_SIZE"] ?? 4) || 1, 1), 1024)
const workItems = (): number => {
  if (native.workItems === undefined) throw new Error(noTestHooks)
  return native.workItems()
}

describe.each(strategies)("the trip (%s)", (strategy) => {
  it("runs 256 requests of one turn on at most one more work item than the pool's size, each answered with its own file", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const s = scratch()
    const files: Record<string, string> = {}
    for (let i = 0; i < 256; i++) files[`f${i}.txt`] = `file ${i} `.repeat((i % 7) + 1)
    s.make(files)
    const root = await PinnedRoot.open(s.root, { strategy })
    try {
      await root.readFile("f0.txt")
      const before = workItems()
      const answers = await Promise.all(Object.keys(files).map((name) => root.readFile(name)))
      const used = workItems() - before
      answers.forEach((a, i) => expect(String(a), `f${i}.txt`).toBe(files[`f${i}.txt`]))
      // The turn's first request starts a runner at once; if that one empties the queue and ends
      // before the turn does, the turn's end starts up to the pool's size again.
      expect(used).toBeGreaterThanOrEqual(1)
      expect(used).toBeLessThanOrEqual(poolSize + 1)
    } finally {
      root.close()
    }
  })

  it("serves an awaited loop of reads mostly from a runner that lingers, not a work item per read", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    skipUnless(ctx, poolSize >= 2, `UV_THREADPOOL_SIZE=${poolSize}: a one-thread pool never lingers (the next test shows it)`)
    const s = scratch()
    s.make({ "a.txt": "lingers" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const reads = 400
    try {
      await root.readFile("a.txt")
      // Without lingering, every awaited read finds no runner and starts one: `used` is `reads`.
      // A runner gives up after 50 us, which a descheduled thread on a loaded machine can pass:
      // a few attempts, each of which proves the mechanism if it holds once.
      const used: number[] = []
      for (let attempt = 0; attempt < 4; attempt++) {
        const before = workItems()
        for (let i = 0; i < reads; i++) expect(String(await root.readFile("a.txt"))).toBe("lingers")
        used.push(workItems() - before)
        if (used[used.length - 1]! < reads / 2) break
      }
      expect(Math.min(...used), `work items per attempt: ${used.join(", ")}`).toBeLessThan(reads / 2)
    } finally {
      root.close()
    }
  })

  it("never spins the only thread of a one-thread pool, and lingers with two", (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const s = scratch()
    s.make({ "a.txt": "lingers" })
    const reads = 200
    const run = (pool: number): ReadonlyArray<number> => {
      const out = spawnSync(process.execPath, [child, s.root, String(reads), strategy], {
        env: { ...process.env, UV_THREADPOOL_SIZE: String(pool) },
        encoding: "utf8",
        timeout: 60_000
      })
      expect(out.status, out.stderr).toBe(0)
      const said = JSON.parse(out.stdout.trim().split("\n").pop()!) as { hooks: boolean; used?: number[] }
      expect(said.hooks, "the child's addon has the test hooks, as this one does").toBe(true)
      return said.used!
    }
    // Half the pool may spin, rounded down: none of one thread. Every awaited read then starts a
    // work item of its own, as before lingering.
    expect(run(1)).toEqual([reads, reads, reads, reads])
    const two = run(2)
    expect(Math.min(...two), `work items per attempt: ${two.join(", ")}`).toBeLessThan(reads / 2)
  }, 120_000)

  it("answers stats while a long recursive remove still holds its runner", async (ctx) => {
    skipUnless(
      ctx,
      poolSize >= 2,
      `UV_THREADPOOL_SIZE=${poolSize}: the remove holds the pool's only thread, and every request waits behind it`
    )
    const s = scratch()
    const dir = s.abs("big")
    fs.mkdirSync(dir)
    for (let i = 0; i < 20_000; i++) fs.writeFileSync(`${dir}/e${i}`, "")
    s.make({ "small.txt": "x" })
    const root = await PinnedRoot.open(s.root, { strategy })
    try {
      let removed = false
      const removal = root.remove("big", { recursive: true }).then(() => {
        removed = true
      })
      for (let i = 0; i < 20; i++) expect((await root.stat("small.txt")).size).toBe(1)
      // The removal was live, and still running when the last stat was answered.
      const left = fs.readdirSync(dir).length
      expect(removed).toBe(false)
      expect(left).toBeGreaterThan(0)
      await removal
      expect(fs.existsSync(dir)).toBe(false)
    } finally {
      root.close()
    }
  }, 120_000)
})
