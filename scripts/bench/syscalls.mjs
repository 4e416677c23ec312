// Syscalls per operation, from `strace -f -c` over a fixed count: the same child runs once with the
// count and once with zero, and the difference divided by the count is what one operation costs.
// Only file-system calls are counted; libuv's futex/epoll/eventfd traffic is left out.
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const child = fileURLToPath(new URL("./child.mjs", import.meta.url))

const FILE_CALLS = new Set([
  "open",
  "openat",
  "openat2",
  "close",
  "read",
  "pread64",
  "readv",
  "write",
  "pwrite64",
  "writev",
  "fstat",
  "newfstatat",
  "statx",
  "lstat",
  "stat",
  "getdents64",
  "mkdir",
  "mkdirat",
  "unlink",
  "unlinkat",
  "rmdir",
  "rename",
  "renameat",
  "renameat2",
  "fsync",
  "fdatasync",
  "ftruncate",
  "readlink",
  "readlinkat",
  "fchmod",
  "fchmodat",
  "fchmodat2",
  "fchown",
  "fchownat",
  "linkat",
  "lseek",
  "fcntl",
  "access",
  "faccessat",
  "faccessat2",
  "utimensat",
  "fstatfs",
  "statfs"
])

export const straceAvailable = () => {
  try {
    execFileSync("strace", ["-V"], { stdio: "ignore" })
    return true
  } catch {
    return false
  }
}

// A full trace with descriptor paths (-y), so libuv's own wake-ups (read/write on its eventfd,
// epoll) are told apart from the file work and left out; `strace -c` cannot tell them apart.
const LIBUV_FD = /^\d+<(anon_inode:\[(eventfd|eventpoll|signalfd|timerfd)\]|pipe:)/

const count = (args) => {
  const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-strace-")), "trace")
  const r = spawnSync("strace", ["-f", "-y", "-qq", "-o", out, process.execPath, child, JSON.stringify(args)], {
    stdio: ["ignore", "ignore", "pipe"],
    timeout: 180_000
  })
  if (r.status !== 0) throw new Error(`strace child failed: ${r.stderr?.toString().slice(0, 500)}`)
  const calls = { file: 0, other: 0, byName: {} }
  for (const line of fs.readFileSync(out, "utf8").split("\n")) {
    const m = /^(?:\d+\s+)?(?:\[pid\s+\d+\]\s+)?([a-z_0-9]+)\((.*)$/.exec(line)
    if (!m) continue
    const [, name, rest] = m
    if (LIBUV_FD.test(rest)) continue
    calls.byName[name] = (calls.byName[name] ?? 0) + 1
    if (FILE_CALLS.has(name)) calls.file += 1
    else calls.other += 1
  }
  fs.rmSync(path.dirname(out), { recursive: true, force: true })
  return calls
}

/** File-system syscalls one operation of `scenario` costs through `contender`. */
export const syscallsPerOp = ({ contender, strategy, scenario, root, units = 200, opsPerUnit = 1 }) => {
  const base = count({ contender, strategy, scenario, root, units: 0 })
  const run = count({ contender, strategy, scenario, root, units })
  const perOp = (run.file - base.file) / (units * opsPerUnit)
  const names = {}
  for (const [k, v] of Object.entries(run.byName)) {
    const d = v - (base.byName[k] ?? 0)
    if (FILE_CALLS.has(k) && d > 0) names[k] = Math.round((d / (units * opsPerUnit)) * 100) / 100
  }
  return { perOp: Math.round(perOp * 100) / 100, names }
}
