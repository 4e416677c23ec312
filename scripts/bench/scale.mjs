// Scale rows: each operation at two sizes (a cost that grows faster than the size shows between
// the two), pinnedfs beside the node:fs way of doing the same thing, each contender in a child
// process of its own so its peak RSS is its own (scale-child.mjs). Rounds alternate which
// contender goes first; figures are medians of the runs after a warm-up (a destructive row has no
// warm-up: each run gets a fresh tree).
//
// Rows: readDirectory of one directory of N entries; recursive readDirectory and glob "**/*.ts"
// over a tree of N files (100 files a directory, 10 directories a group); remove of such a tree
// against fs.rm(…, { recursive: true }); one large file read with the limit raised to its size;
// one large writeFile through the extension's execute (base64 on the wire) against
// fs.promises.writeFile.
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const child = fileURLToPath(new URL("./scale-child.mjs", import.meta.url))
const MiB = 2 ** 20

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

const measureIn = (args) => {
  const out = spawnSync(process.execPath, [child, JSON.stringify(args)], {
    encoding: "utf8",
    maxBuffer: 16 * MiB
  })
  if (out.status !== 0)
    throw new Error(
      `${args.row}/${args.contender}: exit ${out.status ?? out.signal}: ${out.stderr.trim().split("\n").slice(-3).join(" | ")}`
    )
  return JSON.parse(out.stdout)
}

const fillFlat = (dir, n) => {
  fs.mkdirSync(dir, { recursive: true })
  for (let i = 0; i < n; i++) fs.closeSync(fs.openSync(path.join(dir, `e${i}.txt`), "w"))
}

// N files, 100 a leaf directory, 10 leaves a group; two in three are .ts.
const fillTree = (dir, n) => {
  const body = "export {}\n"
  for (let i = 0; i < n; i += 100) {
    const leaf = path.join(dir, `g${Math.floor(i / 1000)}`, `l${Math.floor(i / 100) % 10}`)
    fs.mkdirSync(leaf, { recursive: true })
    for (let j = i; j < Math.min(i + 100, n); j++) fs.writeFileSync(path.join(leaf, `f${j}.${j % 3 === 0 ? "js" : "ts"}`), body)
  }
}

const fillLarge = (file, bytes) => {
  const chunk = Buffer.alloc(Math.min(bytes, 64 * MiB), 0x61)
  const fd = fs.openSync(file, "w")
  try {
    for (let done = 0; done < bytes; done += chunk.length) fs.writeSync(fd, chunk, 0, Math.min(chunk.length, bytes - done))
  } finally {
    fs.closeSync(fd)
  }
}

const freeGiB = (dir) => {
  const s = fs.statfsSync(dir)
  return (s.bavail * s.bsize) / 2 ** 30
}

// `only` (row names) and `sizes` / `largeRead` / `largeWrite` narrow a run for repeating a few rows
// (see the command line at the end of this file); the README table comes from a full run.
/**
 * @param {{ quick: boolean, strategy?: string, log?: (...line: Array<unknown>) => void, only?: Array<string>,
 *   sizes?: Array<number>, largeRead?: number, largeWrite?: number }} options
 */
export const scaleBench = async ({ quick, strategy = "openat2", log = () => {}, only, ...given }) => {
  const sizes = given.sizes ?? (quick ? [1_000, 10_000] : [1_000, 100_000])
  const largeRead = given.largeRead ?? (quick ? 64 * MiB : 1024 * MiB)
  const largeWrite = given.largeWrite ?? (quick ? 8 * MiB : 64 * MiB)
  const wanted = (row) => only === undefined || only.includes(row)
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-scale-"))
  const root = path.join(base, "workspace")
  fs.mkdirSync(root)
  const started = performance.now()
  const rows = []
  const failures = []
  const contenders = [
    { key: "node", name: "node:fs/promises" },
    { key: "pinnedfs", name: `PinnedRoot (${strategy})` }
  ]
  // Both contenders, `rounds` times each (alternating who starts), each child given `targets(round,
  // contender)`; `warm` leading runs of each child are not counted.
  /**
   * @param {string} row @param {number} entries @param {string} label
   * @param {{ rounds?: number, warm?: number, targets: Function, extra?: object, names?: { node?: string, pinnedfs?: string } }} options
   */
  const pair = (row, entries, label, { rounds = 2, warm = 1, targets, extra = {}, names = {} }) => {
    if (!wanted(row)) return
    /** @type {{ node: Array<number>, pinnedfs: Array<number> }} */
    const runs = { node: [], pinnedfs: [] }
    const peak = { node: 0, pinnedfs: 0 }
    const baseline = { node: 0, pinnedfs: 0 }
    try {
      for (let round = 0; round < rounds; round++) {
        const order = round % 2 === 0 ? contenders : [...contenders].reverse()
        for (const c of order) {
          const x = measureIn({
            row,
            contender: c.key,
            root,
            strategy,
            targets: targets(round, c.key),
            ...extra
          })
          runs[c.key].push(...x.ms.slice(warm))
          peak[c.key] = Math.max(peak[c.key], x.peakRssMB)
          baseline[c.key] = Math.max(baseline[c.key], x.rssBaseMB)
        }
      }
    } catch (e) {
      failures.push(`scale ${label} (${entries}): ${e.message}`)
      return
    }
    const node = median(runs.node)
    const ours = median(runs.pinnedfs)
    rows.push({
      row,
      label,
      entries,
      node: {
        name: names.node ?? contenders[0].name,
        ms: node,
        peakRssMB: peak.node,
        baseRssMB: baseline.node
      },
      pinnedfs: {
        name: names.pinnedfs ?? contenders[1].name,
        ms: ours,
        peakRssMB: peak.pinnedfs,
        baseRssMB: baseline.pinnedfs
      },
      ratio: node / ours
    })
    log(`  scale ${label} ${entries}: node ${node.toFixed(1)} ms, pinnedfs ${ours.toFixed(1)} ms`)
  }
  const times = (n, rel) => Array.from({ length: n }, () => rel)
  const nodeGlobName = typeof fs.promises.glob === "function" ? "fs.promises.glob" : "readdir recursive + picomatch"

  try {
    for (const n of sizes) {
      const reps = n <= 10_000 ? 10 : 3
      if (wanted("readdir")) fillFlat(path.join(root, `flat-${n}`), n)
      pair("readdir", n, "readDirectory, one directory", {
        targets: () => times(reps + 1, `flat-${n}`)
      })
      if (wanted("readdir-recursive") || wanted("glob")) fillTree(path.join(root, `tree-${n}`), n)
      pair("readdir-recursive", n, "readDirectory recursive, a tree", {
        targets: () => times(reps + 1, `tree-${n}`)
      })
      pair("glob", n, 'glob "**/*.ts", a tree', {
        targets: () => times(reps + 1, `tree-${n}`),
        names: { node: `node:fs (${nodeGlobName})` }
      })
      // Remove: fresh trees, made before each child starts; small trees several to a child.
      const perChild = n <= 10_000 ? 5 : 1
      const rounds = n <= 10_000 ? 2 : 1
      let made = 0
      pair("remove", n, "remove a tree (node: fs.rm recursive)", {
        rounds,
        warm: 0,
        targets: () =>
          Array.from({ length: perChild }, () => {
            const rel = `rm-${n}-${made++}`
            fillTree(path.join(root, rel), n)
            return rel
          })
      })
      fs.rmSync(path.join(root, `flat-${n}`), { recursive: true, force: true })
      fs.rmSync(path.join(root, `tree-${n}`), { recursive: true, force: true })
    }

    if (!wanted("read-large") && !wanted("write-large")) {
      // not asked for
    } else if (freeGiB(base) < (largeRead / 2 ** 30) * 2 + 2) {
      failures.push(`scale: large-file rows not run: less than ${((largeRead / 2 ** 30) * 2 + 2).toFixed(1)} GiB free in ${base}`)
    } else {
      if (wanted("read-large")) fillLarge(path.join(root, "large.bin"), largeRead)
      pair("read-large", largeRead, "read one large file (limit raised to its size)", {
        warm: 0,
        targets: () => ["large.bin"],
        extra: { bytes: largeRead }
      })
      fs.rmSync(path.join(root, "large.bin"), { force: true })
      fs.mkdirSync(path.join(root, "out"))
      let k = 0
      pair("write-large", largeWrite, "writeFile (pinnedfs: execute, base64 on the wire)", {
        targets: () => Array.from({ length: 4 }, () => `out/w${k++}.bin`),
        extra: { bytes: largeWrite },
        names: { pinnedfs: `NodeAtomicFileSystem (${strategy})` }
      })
    }
  } finally {
    execFileSync("rm", ["-rf", base])
  }
  return {
    rows,
    failures,
    seconds: (performance.now() - started) / 1000,
    lines: scaleLines(rows, { largeRead, sizes })
  }
}

const fmt = (n, d = 1) => Number(n).toFixed(d)
const sizeOf = (r) => (r.row === "read-large" || r.row === "write-large" ? `${r.entries / MiB} MiB` : r.entries.toLocaleString("en"))

const scaleLines = (rows, { largeRead, sizes }) => {
  if (rows.length === 0) return []
  const out = [
    "Scale (each contender in a child process of its own; peak RSS is that process's, from a baseline after start-up shown in brackets):",
    "",
    "| row | size | node:fs way | ms | peak RSS MB | pinnedfs | ms | peak RSS MB | vs node:fs |",
    "|---|---:|---|---:|---:|---|---:|---:|---:|"
  ]
  for (const r of rows) {
    out.push(
      `| ${r.label} | ${sizeOf(r)} | ${r.node.name} | ${fmt(r.node.ms)} | ${fmt(r.node.peakRssMB, 0)} (${fmt(r.node.baseRssMB, 0)}) | ${r.pinnedfs.name} | ${fmt(r.pinnedfs.ms)} | ${fmt(r.pinnedfs.peakRssMB, 0)} (${fmt(r.pinnedfs.baseRssMB, 0)}) | ${fmt(r.ratio, 2)}× |`
    )
  }
  const growth = []
  for (const row of ["readdir", "readdir-recursive", "glob", "remove"]) {
    const at = sizes.map((n) => rows.find((r) => r.row === row && r.entries === n)).filter(Boolean)
    if (at.length < 2) continue
    const [a] = at
    const g = (who) =>
      at
        .slice(1)
        .map(
          (b) =>
            `×${fmt(b[who].ms / a[who].ms, 0)} at ${b.entries.toLocaleString("en")}, peak RSS +${fmt(b[who].peakRssMB - a[who].peakRssMB, 0)} MB`
        )
        .join("; ")
    growth.push(`- ${a.label}, time from ${a.entries.toLocaleString("en")} entries: node:fs ${g("node")}; pinnedfs ${g("pinnedfs")}`)
  }
  if (growth.length) out.push("", ...growth)
  const big = rows.find((r) => r.row === "read-large")
  if (big) {
    const cap = largeRead / MiB + 64
    out.push(
      `- Large read: pinnedfs peak RSS ${fmt(big.pinnedfs.peakRssMB, 0)} MB against a ceiling of file + 64 MiB = ${cap} MB: ${big.pinnedfs.peakRssMB <= cap ? "holds" : "does not hold"} (node:fs ${fmt(big.node.peakRssMB, 0)} MB).`
    )
  }
  return out
}

// Repeating a few rows: node scripts/bench/scale.mjs [--rows remove,glob] [--sizes 1000,10000]
//   [--large-read MiB] [--large-write MiB] [--strategy openat2|walk]
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = (name) => {
    const at = process.argv.indexOf(name)
    return at >= 0 ? process.argv[at + 1] : undefined
  }
  const list = (name) =>
    arg(name)
      ?.split(",")
      .filter((x) => x !== "")
  const mib = (name) => (arg(name) === undefined ? undefined : Number(arg(name)) * MiB)
  const out = await scaleBench({
    quick: false,
    strategy: arg("--strategy") ?? "openat2",
    only: list("--rows"),
    sizes: list("--sizes")?.map(Number),
    largeRead: mib("--large-read"),
    largeWrite: mib("--large-write"),
    log: (line) => console.error(line)
  })
  console.log([...out.lines, ...out.failures.map((f) => `FAILED: ${f}`), `(${out.seconds.toFixed(0)} s)`].join("\n"))
}
