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

/** Open descriptors of this process, for leak checks. */
export const openDescriptorCount = (): number => fs.readdirSync("/proc/self/fd").length
