// copyFile and cp -r against fs.promises.copyFile and fs.promises.cp (verbatimSymlinks, the one
// link behaviour that matches ours). Run only these with `npm run bench -- --only
// copy-4k,copy-1m,cp-r-10k --contenders node:fs/promises,PinnedRoot`.
//
// The copy rows replace an existing destination each time (pinnedfs: a temporary published by
// rename; node: truncate and write in place). The cp row copies the benchmark's source-like tree
// (10,000 files in 100 directories; 2,000 with --quick) into a fresh directory each run; the
// previous copy is removed untimed. Ops are trees copied.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"

const ensure = (trees, rel, bytes) => {
  const abs = path.join(trees.root, rel)
  if (!fs.existsSync(abs)) fs.writeFileSync(abs, Buffer.alloc(bytes, 0x64))
}

const copyRow = (id, title, bytes) => ({
  id,
  title,
  needs: "copyFile",
  unit: (c, trees) => {
    const from = `out/copy-src-${bytes}.bin`
    if (trees) ensure(trees, from, bytes)
    const to = `out/copy-${c.name.length}${c.strategy[0]}-${bytes}.bin`
    return () => c.copyFile(from, to)
  }
})

export const copyFile4k = copyRow("copy-4k", "copyFile 4 KiB onto an existing file", 4096)
export const copyFile1m = copyRow("copy-1m", "copyFile 1 MiB onto an existing file", 1 << 20)

export const cpTree = {
  id: "cp-r-10k",
  title: "cp -r of the 10,000-file source tree (ops = trees)",
  needs: "cpTree",
  ops: 1,
  rounds: 3,
  minMs: 0,
  warmupMs: 0,
  unit: (c, trees) => {
    let n = 0
    let dir
    return {
      before: () => {
        if (dir && trees) execFileSync("rm", ["-rf", path.join(trees.root, dir)])
        dir = `out/cp${c.name.length}${c.strategy[0]}${n++}`
      },
      run: () => c.cpTree("src", dir)
    }
  }
}
