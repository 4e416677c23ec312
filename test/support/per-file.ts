/**
 * vitest's setup file, run before every test file (in its process, shared or not): the hooks that
 * run the support modules' clean-ups (test/support/file-end.ts) after each test and at the file's
 * end, and with PINNEDFS_TEST_CPU_LOG=FILE, the file's CPU appended to FILE
 * (test/support/cpu-per-file.ts).
 *
 * With PINNEDFS_TEST_NO_SANDBOX=REASON (set by `npm test` outside CI when this machine has no
 * bubblewrap and none could be fetched, scripts/bubblewrap.mjs), every test of test/confine/ is
 * skipped with that reason printed: they all run commands in a sandbox, and a newcomer's machine
 * without one would otherwise see them fail for want of a tool, not for a fault. CI installs it.
 *
 * TMPDIR, for this file and what it starts: the run's directory on the system's temporary file
 * system for a file that starts sandboxes or needs inode numbers reused, else the run's directory
 * on /dev/shm where there is one (test/support/system-tmp-files.ts says why). Set here, before the
 * file is loaded, because files make their scratch directories as they load.
 */
import * as path from "node:path"
import { afterAll, afterEach, beforeEach, expect } from "vitest"
import { recordCpu } from "./cpu-per-file.ts"
import { runFileEnd, runTestEnd } from "./file-end.ts"
import { skipUnless } from "./skip.ts"
import { diskVariable, runVariable } from "./run-tmpdir.ts"
import { needsSystemTmp } from "./system-tmp-files.ts"

const run = process.env[runVariable]
const disk = process.env[diskVariable]
const file = expect.getState().testPath
if (run !== undefined && disk !== undefined && file !== undefined) {
  process.env["TMPDIR"] = needsSystemTmp(file, path.resolve(import.meta.dirname, "..", "..")) ? disk : run
}

afterEach(runTestEnd)
afterAll(runFileEnd)
const noSandbox = process.env["PINNEDFS_TEST_NO_SANDBOX"]
if (noSandbox) {
  const confine = `${path.sep}test${path.sep}confine${path.sep}`
  beforeEach((ctx) => {
    if (ctx.task.file.filepath.includes(confine)) skipUnless(ctx, false, `no sandbox here: ${noSandbox}`)
  })
}
if (process.env["PINNEDFS_TEST_CPU_LOG"]) recordCpu(process.env["PINNEDFS_TEST_CPU_LOG"])
