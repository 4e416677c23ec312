// The scenarios, each a unit of work over a contender adapter (see contenders.mjs).
import { rereadScenarios } from "./reread.mjs"
import { handleScenarios } from "./scenario-handles.mjs"
import { copyFile1m, copyFile4k, cpTree } from "./scenario-copy.mjs"
import { mkdirsChain, mkdirsLargest } from "./scenario-mkdirs.mjs"
import { remove100k, removeTreeScenario, stat256 } from "./scenario-speed-trip.mjs"
import { readStringSustained } from "./scenario-sustained.mjs"
import { DEEP, LINKED, SHALLOW } from "./trees.mjs"

const payload = Buffer.alloc(4096, 0x62)
const mebibyte = Buffer.alloc(1 << 20, 0x63)
const deep256 = Array.from({ length: 256 }, () => DEEP)
const many = Array.from({ length: 256 }, (_, i) => `many/f${String(i).padStart(3, "0")}.txt`)

export const scenarios = [
  { id: "read-4k-d1", title: "read 4 KiB, depth 1", needs: "readFile", floor: ["read", SHALLOW], unit: (c) => () => c.readFile(SHALLOW) },
  { id: "read-4k-d8", title: "read 4 KiB, depth 8", needs: "readFile", floor: ["read", DEEP], unit: (c) => () => c.readFile(DEEP) },
  {
    id: "read-4k-d8-256",
    title: "read 4 KiB, depth 8, 256 in flight",
    needs: "readFile",
    ops: 256,
    unit: (c) => () => Promise.all(deep256.map((f) => c.readFile(f)))
  },
  {
    id: "read-string-4k-d8",
    title: "readFileString 4 KiB, depth 8 (node: fs.promises.readFile)",
    needs: "readFileString",
    unit: (c) => () => c.readFileString(DEEP)
  },
  {
    id: "protocol-read-d8",
    title: "client protocol read (resolve, resolve, read) 4 KiB, depth 8",
    needs: "protocolRead",
    unit: (c) => () => c.protocolRead(DEEP)
  },
  {
    id: "protocol-read-d8-256",
    title: "client protocol read 4 KiB, depth 8, 256 in flight",
    needs: "protocolRead",
    ops: 256,
    unit: (c) => () => Promise.all(deep256.map((f) => c.protocolRead(f)))
  },
  { id: "stat", title: "stat, depth 1", needs: "stat", floor: ["stat", SHALLOW], unit: (c) => () => c.stat(SHALLOW) },
  { id: "exists", title: "exists, depth 1 (node: access)", needs: "exists", unit: (c) => () => c.exists(SHALLOW) },
  // The write rows replace an existing file. "write-4k" is each contender's default (node:
  // fs.promises.writeFile in place; pinnedfs: the crash-safe replacement); the next three set the
  // same kind side by side.
  { id: "write-4k", title: "write 4 KiB, each one's default", needs: "writeFile", unit: (c) => () => c.writeFile("out/w.txt", payload) },
  {
    id: "write-4k-in-place",
    title: "write 4 KiB in place (truncate, write)",
    needs: "writeFileInPlace",
    unit: (c) => () => c.writeFileInPlace("out/p.txt", payload)
  },
  {
    id: "write-4k-replace",
    title: "write 4 KiB crash-safe (temporary, rename; node: by hand)",
    needs: "writeFileReplace",
    unit: (c) => () => c.writeFileReplace("out/r.txt", payload)
  },
  {
    id: "write-1m-replace",
    title: "write 1 MiB crash-safe (temporary, rename; node: by hand)",
    needs: "writeFileReplace",
    unit: (c) => () => c.writeFileReplace("out/m.txt", mebibyte)
  },
  {
    id: "write-4k-atomic",
    title: "write 4 KiB durable (+ fsync of the data and the directory)",
    needs: "writeFileAtomic",
    rounds: 3,
    unit: (c) => () => c.writeFileAtomic("out/a.txt", payload)
  },
  { id: "readdir-1000", title: "readDirectory, 1,000 entries", needs: "readDirectory", unit: (c) => () => c.readDirectory("list") },
  {
    id: "glob-10k",
    title: "glob **/*.ts over 10,000 files",
    needs: "glob",
    rounds: 3,
    minMs: 300,
    unit: (c) => () => c.glob("**/*.ts", "src")
  },
  {
    id: "reads-256-serial",
    title: "256 reads, awaited in turn",
    needs: "readFile",
    ops: 256,
    unit: (c) => async () => {
      for (const f of many) await c.readFile(f)
    }
  },
  {
    id: "reads-256-concurrent",
    title: "256 reads, concurrently",
    needs: "readFile",
    ops: 256,
    unit: (c) => () => Promise.all(many.map((f) => c.readFile(f)))
  },
  { id: "reads-256-batch", title: "256 reads, one batch", needs: "batch", ops: 256, unit: (c) => () => c.batch(many) },
  {
    id: "mkdirs-8",
    title: "mkdir -p, 8 deep",
    needs: "mkdirp",
    unit: (c) => {
      let n = 0
      return () => c.mkdirp(`out/mk-${c.name.length}-${c.strategy}-${n++}/b/c/d/e/f/g/h`)
    }
  },
  removeTreeScenario({ id: "remove-1000", title: "remove a 1,000-file tree", rounds: 5, template: (trees) => trees.removeTemplate() }),
  mkdirsChain,
  mkdirsLargest,
  copyFile4k,
  copyFile1m,
  cpTree,
  ...rereadScenarios,
  ...handleScenarios,
  // links within the root
  {
    id: "read-4k-link-within",
    title: "read 4 KiB through an in-root link on the way, depth 8 (symlinks: within)",
    needs: "readFileWithin",
    unit: (c) => () => c.readFileWithin(LINKED)
  },
  readStringSustained,
  stat256,
  remove100k
]

export const manyFiles = many
