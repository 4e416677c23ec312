/**
 * vitest's global setup: one temporary directory for the whole run, and a check that the run left
 * nothing in it.
 *
 * Every test removes what it makes; this is the check that they did, and the net for a run that
 * was killed or a test that failed half-way. The run's workers and every process they start
 * inherit `TMPDIR` (Node's `os.tmpdir()`, mkdtemp(3), mktemp(1) and bubblewrap's launches all read
 * it), so what a test puts in "the temporary directory" lands here. At the end anything left is
 * named, the directory is removed with it, and the run fails: a leak is a bug of the test that
 * made it, and its name prefix (`pinnedfs-fixer-`, `pinnedfs-stage-` ...) says which.
 *
 * One name is not a leak: `node-compile-cache`, where Node keeps compiled code for the tools that
 * call `module.enableCompileCache()` (npm, ESLint and Prettier do, from Node 22.1), to be reused.
 * Nor is an empty `pinnedfs-<uid>`: confinement's per-user runtime directory of launch records,
 * which stays between launches by design (removing it would race a launch about to record itself).
 * A record left in it is a leak: a launch that did not clean up.
 *
 * The directory is world-writable with the sticky bit, as /tmp is, because tests drop to `nobody`
 * and write there. `PINNEDFS_TEST_KEEP_TMPDIR=1` keeps it for a look after a failure.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

const emptyRuntimeDirectory = (p: string): boolean => {
  if (!/^pinnedfs-[0-9]+$/.test(path.basename(p))) return false
  try {
    return fs.lstatSync(p).isDirectory() && fs.readdirSync(p).length === 0
  } catch {
    return false
  }
}

/** Set while a run's directory is in force: a second global setup in the same run (one per vitest project) keeps it. */
const runVariable = "PINNEDFS_TEST_RUN_TMPDIR"

export default function setup(): () => void {
  const enclosing = process.env[runVariable]
  if (enclosing !== undefined && process.env["TMPDIR"] === enclosing) return () => {}
  const parent = os.tmpdir()
  const dir = fs.mkdtempSync(path.join(parent, "pinnedfs-run-"))
  fs.chmodSync(dir, 0o1777)
  const previous = process.env["TMPDIR"]
  process.env["TMPDIR"] = dir
  process.env[runVariable] = dir
  return () => {
    delete process.env[runVariable]
    if (previous === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = previous
    const left = fs
      .readdirSync(dir)
      .filter((name) => name !== "node-compile-cache" && !emptyRuntimeDirectory(path.join(dir, name)))
      .sort()
    if (process.env["PINNEDFS_TEST_KEEP_TMPDIR"] === "1") {
      console.log(`the run's temporary directory is kept: ${dir}`)
    } else {
      fs.rmSync(dir, { recursive: true, force: true })
    }
    if (left.length > 0) {
      throw new Error(
        `the tests left ${left.length} entr${left.length === 1 ? "y" : "ies"} in the temporary directory (${dir}), ` +
          `removed now; each is a test that did not clean up after itself:\n  ${left.join("\n  ")}`
      )
    }
  }
}
