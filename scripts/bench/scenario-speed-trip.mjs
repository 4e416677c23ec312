// The rows of the trip's own goals: stat with 256 in flight (the single awaited stat is "stat"),
// and a recursive remove of a 100,000-file tree against fs.rm (the 1,000-file one is
// "remove-1000"). Ops for the remove row are files, so ops/s reads as files removed per second.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { SHALLOW } from "./trees.mjs"

const shallow256 = Array.from({ length: 256 }, () => SHALLOW)

export const stat256 = {
  id: "stat-256",
  title: "stat, depth 1, 256 in flight",
  needs: "stat",
  ops: 256,
  unit: (c) => () => Promise.all(shallow256.map((f) => c.stat(f)))
}

const FILES = 100_000
const DIRS = 100

/** A fresh 100-directory, 100,000-file tree under the workspace, made untimed before each round. */
const hugeTemplate = (root) => {
  const dir = `trash-huge-${process.hrtime.bigint()}`
  for (let d = 0; d < DIRS; d++) fs.mkdirSync(path.join(root, dir, `s${d}`), { recursive: true })
  for (let i = 0; i < FILES; i++) fs.writeFileSync(path.join(root, dir, `s${i % DIRS}`, `r${i}.txt`), "x")
  return dir
}

/**
 * A recursive remove row: each round removes a fresh tree that `template(trees)` makes untimed
 * (and answers the workspace-relative path of), written back to disk before the clock starts. A
 * file still only in the page cache is removed at ~4 us, one written back at ~70 us on this disk
 * (ext4 with `discard` frees its blocks in the unlink): without the `sync`, whether a row's tree
 * had been written back when its turn came (the kernel writes back what is 30 s old) decided the
 * row, and every contender's tree was in a different state. A user's tree is on disk.
 */
export const removeTreeScenario = ({ id, title, ops = 1, rounds, template }) => ({
  id,
  title,
  needs: "removeTree",
  ops,
  rounds,
  minMs: 0,
  warmupMs: 0,
  unit: (c, trees) => {
    let dir
    return {
      before: () => {
        dir = template(trees)
        execFileSync("sync")
      },
      run: () => c.removeTree(dir)
    }
  }
})

export const remove100k = removeTreeScenario({
  id: "remove-100k",
  title: "remove a 100,000-file tree (ops = files)",
  ops: FILES,
  rounds: 1,
  template: (trees) => hugeTemplate(trees.root)
})
