/**
 * 100,000 mixed operations (reads, stats, listings, globs, writes plain and atomic, mkdirs/rmdirs
 * programs, removes, renames, batches, and failures of every kind: missing files, links on the way,
 * hard links, escapes, NUL bytes, unknown operations) through both strategies with 32 in flight.
 * Descriptors must come back to their count exactly; RSS, measured after two full collections in a
 * child started with --expose-gc, may grow by at most RSS_LIMIT_MB over a warmed-up baseline.
 *
 * The count runs in well under a minute here (about 20 s on two loaded cores); PINNEDFS_CHURN_OPS
 * changes it (e.g. 1000000 for a long soak).
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const child = fileURLToPath(new URL("./churn.child.mjs", import.meta.url))
const operations = Number(process.env.PINNEDFS_CHURN_OPS ?? 100_000)
/**
 * Allocator arenas and V8's heap move by a few MB between runs; a leak of even one small string per
 * operation would add well over this across 100,000 operations (a leaked 4 KB payload: 400 MB).
 */
const RSS_LIMIT_MB = 30

it(`keeps descriptors and memory flat across ${operations} mixed operations`, () => {
  const out = spawnSync(process.execPath, ["--expose-gc", child, String(operations), "32"], {
    encoding: "utf8",
    timeout: 300_000
  })
  expect(out.signal, out.stderr).toBeNull()
  expect(out.status, out.stderr).toBe(0)
  const line = out.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`churn: ${line}`)
  const m = JSON.parse(line) as {
    done: number
    failed: number
    fdBefore: number
    fdWarm: number
    fdLoaded: number
    fdAfter: number
    rssGrowthMb: number
    secretIntact: boolean
  }
  expect(m.done).toBeGreaterThanOrEqual(operations)
  // Failures were exercised, and so were successes.
  expect(m.failed).toBeGreaterThan(operations / 10)
  expect(m.failed).toBeLessThan(m.done)
  // Two pinned roots open: two descriptors more while loaded, none once closed.
  expect(m.fdLoaded).toBe(m.fdWarm)
  expect(m.fdWarm).toBe(m.fdBefore + 2)
  expect(m.fdAfter).toBe(m.fdBefore)
  expect(m.rssGrowthMb).toBeLessThan(RSS_LIMIT_MB)
  expect(m.secretIntact).toBe(true)
}, 320_000)
