/**
 * Twin trees, so each PinnedRoot call can be compared with node:fs/promises on an identical tree:
 * `twinOf` copies a scratch tree beside its root (inside the scratch base, so the scratch's cleanup
 * removes it); `describeTree` describes a tree entry by entry (type, permission bits, content or
 * link text) for comparing the two sides after a change; `outcome` says what a call settled to.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { expect } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import type { TestStrategy } from "../support/strategies.ts"
import { type Scratch, scratch } from "../support/tree.ts"

export const twinOf = (s: Scratch, name = "twin"): string => {
  const twin = path.join(path.dirname(s.root), name)
  fs.rmSync(twin, { recursive: true, force: true })
  fs.cpSync(s.root, twin, { recursive: true, verbatimSymlinks: true })
  return twin
}

export type Entry =
  | { readonly type: "file"; readonly mode: number; readonly content: string }
  | { readonly type: "dir"; readonly mode: number }
  | { readonly type: "link"; readonly text: string }

/** Every entry beneath `dir`, by relative path, sorted; links described, never followed. */
export const describeTree = (dir: string): Record<string, Entry> => {
  const out: Record<string, Entry> = {}
  const visit = (rel: string) => {
    for (const name of fs.readdirSync(path.join(dir, rel)).sort()) {
      const r = rel ? `${rel}/${name}` : name
      const abs = path.join(dir, r)
      const st = fs.lstatSync(abs)
      if (st.isSymbolicLink()) out[r] = { type: "link", text: fs.readlinkSync(abs) }
      else if (st.isDirectory()) {
        out[r] = { type: "dir", mode: st.mode & 0o7777 }
        visit(r)
      } else out[r] = { type: "file", mode: st.mode & 0o7777, content: fs.readFileSync(abs, "latin1") }
    }
  }
  visit("")
  return out
}

/** What a promise settled to, for comparing outcomes (an error by its code only). */
export const outcome = async (p: Promise<unknown>): Promise<string> =>
  p.then(
    () => "ok",
    (e: unknown) => {
      const code = (e as { code?: unknown }).code
      return `error ${typeof code === "string" ? code : String(e)}`
    }
  )

/**
 * A scratch root and its twin `node` beside it, each holding `files` (parents made as needed) and a
 * link `ln` to file.txt, with the scratch pinned under `strategy`: what a suite comparing each call
 * with node:fs/promises starts from.
 */
export const pinnedTwins = async (strategy: TestStrategy, files: Record<string, string>) => {
  const s = scratch()
  const node = path.join(path.dirname(s.root), "node")
  for (const base of [s.root, node]) {
    for (const [rel, content] of Object.entries(files)) {
      fs.mkdirSync(path.dirname(path.join(base, rel)), { recursive: true })
      fs.writeFileSync(path.join(base, rel), content)
    }
    fs.symlinkSync("file.txt", path.join(base, "ln"))
  }
  const root = await PinnedRoot.open(s.root, { strategy })
  expect(root.strategy).toBe(strategy)
  return { s, node, root }
}
