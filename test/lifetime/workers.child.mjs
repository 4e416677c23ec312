// 8 worker threads at a time load the addon, pin roots, work and exit, for `rounds` rounds: even
// ones are terminated with operations in flight, odd ones end on their own with roots open. In a
// child process, so a crash fails the test instead of the runner. Argument: rounds. Prints one
// JSON line: exit codes, descriptors before and after, whether the outside is intact.
import { Worker } from "node:worker_threads"
import { fdCount, makeTree } from "./tree.mjs"
import { loadAddon } from "./addon.mjs"

const rounds = Number(process.argv[2] ?? 10)
const perRound = 8
const tree = makeTree()
const script = new URL("./worker.mjs", import.meta.url)

const life = (id, terminate) =>
  new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData: { root: tree.root, id, endless: terminate } })
    w.on("error", reject)
    w.on("exit", resolve)
    w.on("message", () => {
      if (terminate) void w.terminate()
    })
  })

// The addon loaded here too, and stdout written once, so their own descriptors are in the baseline.
loadAddon()
process.stdout.write("")
const fdBefore = fdCount()
const codes = []
for (let round = 0; round < rounds; round++) {
  codes.push(...(await Promise.all(Array.from({ length: perRound }, (_, i) => life(round * perRound + i, i % 2 === 0)))))
}
const fdAfter = fdCount()
const secretIntact = tree.secretIntact()
tree.dispose()
console.log(
  JSON.stringify({
    rounds,
    perRound,
    terminated: codes.filter((c) => c === 1).length,
    ended: codes.filter((c) => c === 0).length,
    codes: [...new Set(codes)],
    fdBefore,
    fdAfter,
    secretIntact
  })
)
