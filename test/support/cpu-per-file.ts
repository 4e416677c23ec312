/**
 * Where the suite's CPU goes, file by file: with PINNEDFS_TEST_CPU_LOG=FILE, each test file
 * appends one JSON line to FILE at its end: the CPU its process spent since the last line, its own
 * and that of every child it waited for (npm, tsc, bubblewrap, Node children).
 * `node scripts/test-cpu.mjs FILE` sums them. Files that share a process (`isolate: false`) are
 * told apart by the difference from the previous line; a file in a process of its own also pays
 * the process's start.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, expect } from "vitest"

/** utime, stime, cutime, cstime of this process, in seconds (proc(5): fields 14 to 17). */
const times = (): [number, number, number, number] => {
  const after = fs.readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ")
  return [11, 12, 13, 14].map((i) => Number(after[i]) / 100) as [number, number, number, number]
}

/** Where the previous file of this process left the counters. */
let last: [number, number, number, number] = [0, 0, 0, 0]

/** Registers, for the file being set up, the line written to `log` at its end. */
export const recordCpu = (log: string): void => {
  let file = ""
  beforeAll(() => {
    file = path.relative(process.cwd(), expect.getState().testPath ?? "")
  })
  afterAll(() => {
    const now = times()
    const [u, s, cu, cs] = now.map((t, i) => t - last[i]!) as [number, number, number, number]
    last = now
    fs.appendFileSync(log, `${JSON.stringify({ file, self: +(u + s).toFixed(2), children: +(cu + cs).toFixed(2) })}\n`)
  })
}
