/**
 * Twin trees, made for a whole describe block (the caller removes them in afterAll): the same files, directories, modes and times laid out twice, side by side, one for
 * each server. A result from one tree is compared with the other's after each tree's path is
 * replaced by `<ROOT>` (and the other scratch paths by their names), so any remaining difference is
 * a difference of behaviour.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"

export interface Twins {
  /** The scratch directory holding both trees and anything outside them. */
  readonly base: string
  readonly ours: string
  readonly reference: string
  /** A directory outside both trees, with a secret in it. */
  readonly outside: string
  /** Lays `spec` out in both trees (content strings, "dir/" for a directory), in the same order. */
  readonly make: (spec: Record<string, string>) => void
  /** Runs `f` on each tree's path, ours first. */
  readonly both: (f: (root: string) => void) => void
  /** A result with each tree's path replaced by `<ROOT>`. */
  readonly normalize: (r: CallToolResult, root: string) => unknown
  /** Removes both trees and everything beside them. */
  readonly cleanup: () => void
}

/** A fixed time every entry gets, so that `get_file_info` and sizes agree between the trees. */
export const fixedTime = new Date("2025-01-02T03:04:05.678Z")

export const twins = (): Twins => {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-mcp-")))
  const ours = path.join(base, "ours")
  const reference = path.join(base, "refr")
  const outside = path.join(base, "outside")
  for (const d of [ours, reference, outside]) fs.mkdirSync(d)
  fs.writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET")
  const both = (f: (root: string) => void) => {
    f(ours)
    f(reference)
  }
  const make = (spec: Record<string, string>) =>
    both((root) => {
      for (const [name, content] of Object.entries(spec)) {
        const at = path.join(root, name)
        if (name.endsWith("/")) fs.mkdirSync(at, { recursive: true })
        else {
          fs.mkdirSync(path.dirname(at), { recursive: true })
          fs.writeFileSync(at, content)
        }
      }
    })
  const normalize = (r: CallToolResult, root: string) =>
    JSON.parse(
      JSON.stringify(r)
        .split(root)
        .join("<ROOT>")
        .split(base)
        .join("<BASE>")
        .replace(/created: [^\n"\\]+/g, "created: <birth>")
    )
  const cleanup = () => fs.rmSync(base, { recursive: true, force: true })
  return { base, ours, reference, outside, make, both, normalize, cleanup }
}

/** Every entry below `root` gets {@link fixedTime} as its access and modification time. */
export const fixTimes = (root: string): void => {
  const visit = (p: string) => {
    const st = fs.lstatSync(p)
    if (st.isDirectory()) for (const n of fs.readdirSync(p)) visit(path.join(p, n))
    if (!st.isSymbolicLink()) fs.utimesSync(p, fixedTime, fixedTime)
  }
  visit(root)
}
