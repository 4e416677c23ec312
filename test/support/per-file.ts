/**
 * vitest's setup file, run before every test file (in its process, shared or not): the hooks that
 * run the support modules' clean-ups (test/support/file-end.ts) after each test and at the file's
 * end, and with PINNEDFS_TEST_CPU_LOG=FILE, the file's CPU appended to FILE
 * (test/support/cpu-per-file.ts).
 */
import { afterAll, afterEach } from "vitest"
import { recordCpu } from "./cpu-per-file.ts"
import { runFileEnd, runTestEnd } from "./file-end.ts"

afterEach(runTestEnd)
afterAll(runFileEnd)
if (process.env["PINNEDFS_TEST_CPU_LOG"]) recordCpu(process.env["PINNEDFS_TEST_CPU_LOG"])
