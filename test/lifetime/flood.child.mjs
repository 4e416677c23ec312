// A flood whose continuations are slow enough that most completions wait in the addon's queue for
// a later turn of the loop (native/settle_pacer.cc), ended three ways. Argument: how.
//   natural     the flood runs to its end and the loop runs dry: every read answered, exit 0
//   worker      the same inside a worker thread, which then ends on its own
//   terminate   a worker is terminated while its queue holds settled-later completions
// Prints the count of reads answered (natural, worker) or "terminated", and whether completions
// waited for a later turn ("paced"; the test needs them to, or it would prove nothing).
import { Worker, isMainThread, parentPort, workerData } from "node:worker_threads"
import { loadAddon } from "./addon.mjs"
import { makeTree } from "./tree.mjs"

const spin = (ms) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // Holding the thread, as a continuation doing real work does.
  }
}

// 2,000 reads, 256 in flight, each continuation 0.05 ms of work: every turn's budget is spent
// long before the turn's completions are, so the queue is rarely empty.
const flood = async (root, onBusy) => {
  const native = loadAddon()
  const h = await native.pin(root, "openat2")
  let answered = 0
  let next = 0
  const lane = async () => {
    while (next < 2_000) {
      next++
      await h.execute({ op: native.ops.readFile, path: next % 2 ? "file.txt" : "out/secret.txt" }).catch(() => undefined)
      answered++
      if (answered === 300) onBusy?.(native.paced())
      spin(0.05)
    }
  }
  await Promise.all(Array.from({ length: 256 }, lane))
  return `${answered} ${native.paced() > 0 ? "paced" : "unpaced"}`
}

if (!isMainThread) {
  const answered = await flood(workerData.root, (paced) => parentPort.postMessage({ busy: paced > 0 ? "paced" : "unpaced" }))
  parentPort.postMessage(answered)
} else {
  const how = process.argv[2]
  const tree = makeTree()
  process.on("exit", () => tree.dispose())
  if (how === "natural") {
    console.log(String(await flood(tree.root)))
  } else if (how === "worker" || how === "terminate") {
    const w = new Worker(new URL(import.meta.url), { workerData: { root: tree.root } })
    w.on("message", (m) => {
      if (typeof m === "string") console.log(m)
      else if (how === "terminate") void w.terminate().then(() => console.log(`terminated ${m.busy}`))
    })
    w.on("error", (e) => {
      console.error(e)
      process.exitCode = 1
    })
  } else {
    console.error(`unknown ending '${how}'`)
    process.exit(2)
  }
}
