/**
 * A flood of completions is settled in slices (native/settle_pacer.cc): while a turn of the event
 * loop has spent its budget, finished operations wait, in order, for a later turn. These tests hold
 * the parts of that which are not a matter of speed: every operation of a flood is answered once,
 * with its own answer or its own error, and a turn ends once continuations have used up the budget
 * (so a setImmediate queued by the first continuation runs long before the last). How short the
 * turns get is the benchmark's to show (the event-loop table of `npm run bench`).
 */
import * as fs from "node:fs"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../src/index.ts"
import { native } from "../src/internal/native.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"

const files = 256
const content = (i: number) => `file ${i} `.repeat(1 + (i % 7))

/** Busy-waits `ms` on the JavaScript thread: a continuation that does real work. */
const spin = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // Nothing: the point is holding the thread.
  }
}

describe.each(strategies)("a flood of completions (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const spec: Record<string, string> = {}
    for (let i = 0; i < files; i++) spec[`f${i}.txt`] = content(i)
    s.make(spec)
    fs.symlinkSync(s.secret, s.abs("link"))
    return PinnedRoot.open(s.root, { strategy })
  }

  it("answers each of 20,000 reads exactly once, with its own content or its own error", async () => {
    const root = await setup()
    const paced = native.paced()
    const n = 20_000
    const answers = new Uint8Array(n)
    const wrong: Array<string> = []
    let next = 0
    const lane = async () => {
      while (next < n) {
        const i = next++
        const path = i % 97 === 0 ? `missing-${i}` : i % 101 === 0 ? "link" : `f${i % files}.txt`
        await root.readFile(path).then(
          (b) => {
            answers[i]! += 1
            // A little work per answer, so a turn with many answers ready runs out of budget.
            spin(0.02)
            if (b.toString() !== content(i % files) || path.startsWith("missing") || path === "link") wrong.push(`${i}: content`)
          },
          (e: unknown) => {
            answers[i]! += 1
            const want = path === "link" ? "symlink" : "NotFound"
            const got = e instanceof PinnedFsError ? (path === "link" ? e.refusal : e.reason) : String(e)
            if (got !== want) wrong.push(`${i}: ${String(got)}`)
          }
        )
      }
    }
    await Promise.all(Array.from({ length: 512 }, lane))
    root.close()
    expect(wrong).toEqual([])
    expect(answers.every((x) => x === 1)).toBe(true)
    // Some of them waited for a later turn: the queue was exercised, not only the direct path.
    expect(native.paced()).toBeGreaterThan(paced)
  }, 120_000)

  it("ends a turn once slow continuations have spent its budget", async () => {
    const root = await setup()
    const n = 64
    let settled = 0
    let immediateAfter = -1
    const reads = Array.from({ length: n }, (_, i) =>
      root.readFile(`f${i}.txt`).then(() => {
        if (settled === 0) setImmediate(() => (immediateAfter = settled))
        settled += 1
        spin(0.25)
      })
    )
    // Every read finishes on the pool meanwhile, so all 64 are ready in the same turn: settled at
    // once, their continuations would hold the thread 16 ms before the immediate could run.
    spin(50)
    await Promise.all(reads)
    root.close()
    expect(settled).toBe(n)
    expect(immediateAfter).toBeGreaterThan(0)
    expect(immediateAfter).toBeLessThan(n / 2)
  })
})
