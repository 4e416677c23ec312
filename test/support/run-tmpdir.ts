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

const tmpfsMagic = 0x01021994
const tmpfsRoom = 4 * 1024 ** 3

/**
 * Where the run's directory goes: a tmpfs at /dev/shm with 4 GiB free, writable and not `noexec`
 * (tests run programs they stage there), where there is one, else the system's temporary
 * directory. The suite makes and removes some hundred thousand files. On ext4 without a journal
 * (this project's CI machines), each new inode is found by scanning past every inode freed in the
 * last half minute (the kernel's `recently_deleted`), and that scan took a fifth of the suite's CPU
 * in a `perf record -a` of `npm test`. On a tmpfs the allocation is constant. The run's directory
 * is one file system either way, and the tests that need another mount or a full disk make their
 * own; the files that start sandboxes or need inode numbers reused keep the system's
 * (test/support/system-tmp-files.ts). `PINNEDFS_TEST_TMP_PARENT` names another parent.
 */
/** Whether the mount at `point` is `noexec` (the last line of /proc/self/mounts for it says). */
const noexec = (point: string): boolean => {
  const line = fs
    .readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[1] === point)
    .at(-1)
  return line === undefined || line.split(" ")[3]?.split(",").includes("noexec") !== false
}

const runParent = (): string => {
  const named = process.env["PINNEDFS_TEST_TMP_PARENT"]
  if (named !== undefined && named !== "") return named
  try {
    const shm = "/dev/shm"
    const st = fs.statfsSync(shm)
    fs.accessSync(shm, fs.constants.W_OK)
    // Tests run programs they stage in the temporary directory (a Node for `nobody`, helpers).
    if (st.type === tmpfsMagic && st.bavail * st.bsize >= tmpfsRoom && !noexec(shm)) return shm
  } catch {
    // No /dev/shm, or not one this user may write: the system's directory.
  }
  return os.tmpdir()
}

/** Set while a run's directory is in force: a second global setup in the same run (one per vitest project) keeps it. */
export const runVariable = "PINNEDFS_TEST_RUN_TMPDIR"
/**
 * The run's directory on the system's temporary file system, for the files that start sandboxes
 * or need inode numbers reused (test/support/system-tmp-files.ts). The same directory as TMPDIR where the run's is not on /dev/shm.
 */
export const diskVariable = "PINNEDFS_TEST_DISK_TMPDIR"

const made = (parent: string): string => {
  const dir = fs.mkdtempSync(path.join(parent, "pinnedfs-run-"))
  fs.chmodSync(dir, 0o1777)
  return dir
}

/** What was left in `dir`, named; `dir` removed (or kept with PINNEDFS_TEST_KEEP_TMPDIR=1). */
const leftIn = (dir: string): Array<string> => {
  const left = fs
    .readdirSync(dir)
    .filter((name) => name !== "node-compile-cache" && !emptyRuntimeDirectory(path.join(dir, name)))
    .sort()
  if (process.env["PINNEDFS_TEST_KEEP_TMPDIR"] === "1") {
    console.log(`the run's temporary directory is kept: ${dir}`)
  } else {
    fs.rmSync(dir, { recursive: true, force: true })
  }
  return left.map((name) => path.join(dir, name))
}

export default function setup(): () => void {
  const enclosing = process.env[runVariable]
  if (enclosing !== undefined && process.env["TMPDIR"] === enclosing) return () => {}
  const parent = runParent()
  const dir = made(parent)
  const disk = parent === os.tmpdir() ? dir : made(os.tmpdir())
  const previous = process.env["TMPDIR"]
  process.env["TMPDIR"] = dir
  process.env[runVariable] = dir
  process.env[diskVariable] = disk
  return () => {
    delete process.env[runVariable]
    delete process.env[diskVariable]
    if (previous === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = previous
    const left = [...leftIn(dir), ...(disk === dir ? [] : leftIn(disk))]
    if (left.length > 0) {
      throw new Error(
        `the tests left ${left.length} entr${left.length === 1 ? "y" : "ies"} in the run's temporary directories, ` +
          `removed now; each is a test that did not clean up after itself:\n  ${left.join("\n  ")}`
      )
    }
  }
}
