/**
 * Where the suite's CPU goes, file by file: with PINNEDFS_TEST_CPU_LOG=FILE, each test file's
 * process appends one JSON line to FILE at its end (its own CPU, and that of every child it waited
 * for: npm, tsc, bubblewrap, Node children). vitest runs each file in a process of its own
 * (`pool: "forks"`), so the process's totals are the file's. `node scripts/test-cpu.mjs FILE`
 * sums them. On a two-core machine the suite is bound by CPU, and its wall time is about half of
 * the total.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, expect } from "vitest"

const log = process.env["PINNEDFS_TEST_CPU_LOG"]
let file = ""

/** utime, stime, cutime, cstime of this process, in seconds (proc(5): fields 14 to 17). */
const times = (): ReadonlyArray<number> => {
  const after = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  return [11, 12, 13, 14].map((i) => Number(after[i]) / 100)
}

beforeAll(() => {
  file = path.relative(process.cwd(), expect.getState().testPath ?? "")
})

afterAll(() => {
  if (log === undefined) return
  const [u, s, cu, cs] = times() as [number, number, number, number]
  fs.appendFileSync(log, `${JSON.stringify({ file, self: +(u + s).toFixed(2), children: +(cu + cs).toFixed(2) })}\n`)
})
