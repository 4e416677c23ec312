import * as os from "node:os"
import { defineConfig } from "vitest/config"
import { belowFloor, floor } from "./scripts/node-lines.mjs"

if (belowFloor()) {
  throw new Error(
    `vitest 5 and the Effect peers need Node ${floor} or later; this is Node ${process.version}. ` +
      "`npm test` (or `npm test -- test/some.test.ts`) runs the suite on a supported Node, fetched once from the npm registry."
  )
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // One transpile of src/ shared by the run (test/support/transpile-cache.ts), and one temporary
    // directory per run, checked empty at the end (test/support/run-tmpdir.ts).
    globalSetup: ["./test/support/transpile-cache.ts", "./test/support/run-tmpdir.ts"],
    // PINNEDFS_TEST_CPU_LOG=FILE: each file's CPU, for scripts/test-cpu.mjs (docs/testing.md).
    setupFiles: process.env["PINNEDFS_TEST_CPU_LOG"] ? ["./test/support/cpu-per-file.ts"] : [],
    // Separate processes: the addon, seccomp filters and descriptor counts are per process.
    pool: "forks",
    // At least two files at a time. vitest's default is cores - 1, which on two cores is one file
    // at a time; most files wait on the thread pool, child processes or the disk for much of their
    // time, so two on two cores overlap those waits.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    testTimeout: 30_000,
    // Set-ups stage packages and build helpers; on a loaded two-core machine (five other runs at
    // once) a stage took longer than 30 s and failed files whose tests would pass. Only set-up gets
    // the room: no test's own bound changes.
    hookTimeout: 120_000
  }
})
