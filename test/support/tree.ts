/**
 * Scratch trees for tests: a workspace directory and, beside it, an "outside" directory whose
 * contents no operation may ever read or change.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach } from "vitest"

export interface Scratch {
  /** The workspace the root is pinned at. */
  readonly root: string
  /** A sibling directory outside the root, with a secret file in it. */
  readonly outside: string
  readonly secret: string
  /** Creates files (content strings) and directories (trailing "/") under the root. */
  readonly make: (spec: Record<string, string>) => void
  readonly abs: (relative: string) => string
}

const made: Array<string> = []

afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

export const scratch = (): Scratch => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-test-"))
  made.push(base)
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(root)
  fs.mkdirSync(outside)
  const secret = path.join(outside, "secret.txt")
  fs.writeFileSync(secret, "TOP SECRET")
  const abs = (relative: string) => path.join(root, relative)
  const make = (spec: Record<string, string>) => {
    for (const [name, content] of Object.entries(spec)) {
      if (name.endsWith("/")) {
        fs.mkdirSync(abs(name), { recursive: true })
      } else {
        fs.mkdirSync(path.dirname(abs(name)), { recursive: true })
        fs.writeFileSync(abs(name), content)
      }
    }
  }
  return { root, outside, secret, make, abs }
}

/** Makes a FIFO (no Node API exists for it). */
export const mkfifo = (at: string): void => {
  execFileSync("mkfifo", [at])
}

const scratchPrefix = path.join(fs.realpathSync(os.tmpdir()), "pinnedfs-")

/**
 * Open descriptors of this process that name something in a scratch tree, for leak checks. Every
 * descriptor pinnedfs opens (a pinned root, a directory on the way, a file, an O_TMPFILE, a dup for
 * readdir) names a path inside the tree it works on, and only those are counted: the test runner
 * shares this process and opens and closes its own (vitest's module loader reading files, libuv's
 * /dev/null reserve made on the first stream of a loop, worker threads' epoll, eventfd and io_uring
 * descriptors, a FileHandle the collector closes), at moments no test controls. Counting the whole
 * table made a check fail once on Node 24 and pass on reruns; a child process that owns its whole
 * table (test/lifetime, test/hostile/*.child.mjs) still counts all of it.
 */
export const openDescriptorCount = (): number => {
  let count = 0
  for (const name of fs.readdirSync("/proc/self/fd")) {
    let target: string
    try {
      target = fs.readlinkSync(`/proc/self/fd/${name}`)
    } catch {
      continue // closed since it was listed (the listing's own descriptor, among others)
    }
    if (target.startsWith(scratchPrefix)) count++
  }
  return count
}
