/**
 * A twin of a scratch tree for node:fs/promises: the same content copied beside the root (inside the
 * scratch base, so the scratch's cleanup removes it), so each PinnedRoot call can be compared with
 * Node's on an identical tree.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import type { Scratch } from "../support/tree.ts"

export const twinOf = (s: Scratch, name = "twin"): string => {
  const twin = path.join(path.dirname(s.root), name)
  fs.rmSync(twin, { recursive: true, force: true })
  fs.cpSync(s.root, twin, { recursive: true, verbatimSymlinks: true })
  return twin
}
