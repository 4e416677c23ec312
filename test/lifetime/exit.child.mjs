// A process that ends with roots open and work in flight. Argument: how it ends.
//   exit     process.exit(0) while operations run on the pool
//   natural  the event loop empties with roots never closed
//   worker   process.exit(0) while a worker thread also has roots open and work in flight
import { Worker } from "node:worker_threads"
import { loadAddon } from "./addon.mjs"
import { makeTree } from "./tree.mjs"

const how = process.argv[2]
const native = loadAddon()
const tree = makeTree()
process.on("exit", () => tree.dispose())
const { ops } = native
const handles = [await native.pin(tree.root, "openat2"), await native.pin(tree.root, "walk")]
const flood = () => {
  for (const h of handles) {
    for (let i = 0; i < 200; i++) h.execute({ op: ops.readFile, path: i % 2 ? "file.txt" : "out/secret.txt" }).catch(() => undefined)
    h.batch(
      Array.from({ length: 256 }, () => ({ op: ops.stat, path: "dir/sub/deep.txt" })),
      { size: 256, response: 1 << 24 }
    )
    h.execute({ op: ops.glob, path: "", to: "", pattern: "**", exclude: [], dot: true })
  }
}
if (how === "exit") {
  flood()
  process.exit(0)
} else if (how === "natural") {
  flood()
} else if (how === "worker") {
  const w = new Worker(new URL("./worker.mjs", import.meta.url), { workerData: { root: tree.root, id: 0, endless: true } })
  w.on("message", () => {
    flood()
    process.exit(0)
  })
} else {
  console.error(`unknown ending '${how}'`)
  process.exit(2)
}
