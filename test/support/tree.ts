/**
 * Scratch trees for tests: a workspace directory and, beside it, an "outside" directory whose
 * contents no operation may ever read or change.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { onTestEnd } from "./file-end.ts"

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

onTestEnd(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/**
 * Counts `base` as a scratch tree of the running test (its descriptors are counted by
 * openDescriptorCount, and it is removed after the test), for suites that lay out their own trees.
 */
export const registerScratch = (base: string): void => {
  made.push(base)
}

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

/**
 * Open descriptors of this process that name something in a scratch tree made by the running test,
 * for leak checks. Every descriptor pinnedfs opens (a pinned root, a directory on the way, a file,
 * an O_TMPFILE, a dup for readdir) names a path inside the tree it works on, so only those are
 * counted. Anything else in the table moves at moments no test controls: the runner shares this
 * process (its module loader reads files, libuv reserves /dev/null on a loop's first stream, worker
 * threads open and close their loops' descriptors), and a root an earlier test never closed is
 * closed whenever the collector finalizes its handle. That last one failed checks at random (once
 * on Node 24, whose collector runs at other moments; here under load on Node 20: "expected 1 to be
 * 6" in glob.test.ts, five earlier roots finalized mid-test). A child process that owns its whole
 * table (test/lifetime, test/hostile/*.child.mjs) still counts all of it.
 */
export const openDescriptorCount = (): number => {
  const mine = made.map((base) => `${fs.realpathSync(base)}/`)
  let count = 0
  for (const name of fs.readdirSync("/proc/self/fd")) {
    let target: string
    try {
      target = fs.readlinkSync(`/proc/self/fd/${name}`)
    } catch {
      continue // closed since it was listed (the listing's own descriptor, among others)
    }
    if (mine.some((base) => target.startsWith(base))) count++
  }
  return count
}
