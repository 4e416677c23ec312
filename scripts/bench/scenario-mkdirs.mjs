// The directory program's worst known shape: one mkdirs of a 1,980-level chain plus 200
// leaves at its end (2,180 directories). Once quadratic in the depth (29 s and more); now a
// constant number of syscalls per directory. Ops are directories created, so ops/s reads as
// directories per second and the row compares with any other. Each run starts in a fresh
// directory; the previous one is removed (untimed) with rm -rf, which, unlike a recursive
// fs.rm, does not run out of stack on a chain this deep.
import { execFileSync } from "node:child_process"
import * as path from "node:path"

const DEPTH = 1980
const LEAVES = 200
const CHAIN = Array.from({ length: DEPTH }, () => "d").join("/")

/**
 * A scenario's unit that runs `run(c, dir)` each round in a directory of its own under out/ (named
 * by `prefix`, the contender and a counter, short: the deepest leaf must stay under PATH_MAX with
 * the workspace path in front), removing the previous round's untimed.
 */
const freshDirectory = (prefix, run) => (c, trees) => {
  let n = 0
  let dir
  return {
    before: () => {
      if (dir && trees) execFileSync("rm", ["-rf", path.join(trees.root, dir)])
      dir = `out/${prefix}${c.name.length}${c.strategy[0]}${n++}`
    },
    run: () => run(c, dir)
  }
}

export const mkdirsChain = {
  id: "mkdirs-chain",
  title: "mkdirs, 1,980-level chain + 200 leaves (ops = directories)",
  needs: "mkdirsPlan",
  ops: DEPTH + LEAVES,
  rounds: 3,
  minMs: 0,
  warmupMs: 0,
  unit: freshDirectory("k", (c, dir) =>
    c.mkdirsPlan([
      { path: `${dir}/${CHAIN}`, mode: 0o755 },
      ...Array.from({ length: LEAVES }, (_, i) => ({ path: `${dir}/${CHAIN}/l${i}`, mode: 0o755 }))
    ])
  )
}

// The largest plan one call accepts: four 1,023-level chains under one new directory (4,093
// directories, just under the 4,096 a call may name, implied ones included, each chain short
// enough for PATH_MAX). Ops are calls, so 1 / ops/s is how long one call holds a thread of the
// pool: the bound the per-call limit buys, measured.
const QUARTER = Array.from({ length: 1022 }, () => "d").join("/")

export const mkdirsLargest = {
  id: "mkdirs-largest",
  title: "mkdirs, the largest plan one call takes: 4,093 dirs (ops = calls; 1/ops = pool thread held)",
  needs: "mkdirsPlan",
  ops: 1,
  rounds: 3,
  minMs: 0,
  warmupMs: 0,
  unit: freshDirectory("q", (c, dir) => c.mkdirsPlan([0, 1, 2, 3].map((j) => ({ path: `${dir}/c${j}/${QUARTER}`, mode: 0o755 }))))
}
