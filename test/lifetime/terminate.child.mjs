// Rounds of six worker threads looping over the addon, terminated at random moments. Arguments:
// rounds [seed]. Prints one line per finished round ("round N"), then a JSON summary: a process
// that dies mid-round shows as a signal or an exit code in the parent, which counts it.
import { Worker } from "node:worker_threads"
import { seeded } from "./random.mjs"
import { makeTree } from "./tree.mjs"

const rounds = Number(process.argv[2] ?? 10)
const random = seeded(process.argv[3] ?? 1)
// "simple": the workers loop over single reads only (readFile, stat, readDirectory).
const simple = process.argv[4] === "simple"
const tree = makeTree()
process.on("exit", () => tree.dispose())
const script = new URL("./looping.worker.mjs", import.meta.url)

let looping = 0
const life = (i) =>
  new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData: { root: tree.root, strategy: i % 2 ? "walk" : "openat2", simple } })
    w.on("error", reject)
    w.on("exit", resolve)
    w.on("message", () => {
      looping++
      // Terminated somewhere between at once and 20 ms into the loop.
      const delay = Math.floor(random() * 20)
      if (delay === 0) void w.terminate()
      else setTimeout(() => void w.terminate(), delay)
    })
  })

const codes = []
for (let round = 0; round < rounds; round++) {
  codes.push(...(await Promise.all(Array.from({ length: 6 }, (_, i) => life(i)))))
  process.stdout.write(`round ${round}\n`)
}
// Every worker was looping when terminated (it said so first), and each ended by terminate():
// exit code 1, or 13 when its top-level await was left pending by the termination.
console.log(JSON.stringify({ rounds, workers: codes.length, looping, codes: [...new Set(codes)], secretIntact: tree.secretIntact() }))
