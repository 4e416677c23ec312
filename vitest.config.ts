import * as os from "node:os"
import { defineConfig } from "vitest/config"
import { belowFloor, floor } from "./scripts/node-lines.mjs"

if (belowFloor()) {
  throw new Error(
    `vitest 5 and the Effect peers need Node ${floor} or later; this is Node ${process.version}. ` +
      "`npm test` (or `npm test -- test/some.test.ts`) runs the suite on a supported Node, fetched once from the npm registry."
  )
}

/**
 * The files that run each in a process of its own. A process is per file by default in vitest, and
 * costs about a second of CPU (Node, vitest, Effect and the library loaded again), a third of the
 * whole suite's CPU on two cores. These need it: they count the process's descriptors or memory,
 * set its environment, umask or limits, start worker threads or child processes that inherit from
 * it, install seccomp filters, or stage packages and sandboxes. Every other file shares a process
 * with the files before it in its worker (`isolate: false`): they only open roots and trees of
 * their own and close them, and the support modules' clean-ups run for each of them
 * (test/support/file-end.ts). A new file that does any of the above belongs in this list.
 */
const ownProcess = [
  "test/cli/**/*.test.ts",
  "test/confine/**/*.test.ts",
  "test/demo/**/*.test.ts",
  "test/hostile/**/*.test.ts",
  "test/lifetime/**/*.test.ts",
  "test/package/**/*.test.ts",
  "test/race/**/*.test.ts",
  "test/restricted/**/*.test.ts",
  "test/unprivileged/**/*.test.ts",
  "test/attr.test.ts",
  "test/dir.test.ts",
  "test/glob.test.ts",
  "test/link.test.ts",
  "test/messages.test.ts",
  "test/mkdir.test.ts",
  "test/mkdirs.test.ts",
  "test/write.test.ts",
  "test/effect/lifetime.test.ts",
  "test/effect/workers.test.ts",
  "test/root/abort-readfile.test.ts",
  "test/root/copy.test.ts",
  "test/root/dispose.test.ts",
  "test/root/open.test.ts",
  "test/root/streams.test.ts",
  "test/root/unchanged.test.ts"
]

export default defineConfig({
  test: {
    // One transpile of src/ shared by the run (test/support/transpile-cache.ts), and one temporary
    // directory per run, checked empty at the end (test/support/run-tmpdir.ts).
    globalSetup: ["./test/support/transpile-cache.ts", "./test/support/run-tmpdir.ts"],
    // Before every file: the support modules' clean-ups, and PINNEDFS_TEST_CPU_LOG's line.
    setupFiles: ["./test/support/per-file.ts"],
    // Processes, not threads: the addon, seccomp filters and descriptor counts are per process.
    pool: "forks",
    // At least two files at a time. vitest's default is cores - 1, which on two cores is one file
    // at a time; most files wait on the thread pool, child processes or the disk for much of their
    // time, so two on two cores overlap those waits.
    maxWorkers: Math.max(2, os.availableParallelism() - 1),
    testTimeout: 30_000,
    // Set-ups stage packages and build helpers; on a loaded two-core machine (five other runs at
    // once) a stage took longer than 30 s and failed files whose tests would pass. Only set-up gets
    // the room: no test's own bound changes.
    hookTimeout: 120_000,
    projects: [
      { extends: true, test: { name: "own process", include: ownProcess } },
      { extends: true, test: { name: "shared process", include: ["test/**/*.test.ts"], exclude: ownProcess, isolate: false } }
    ]
  }
})
