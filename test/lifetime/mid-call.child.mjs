// Rounds of one worker terminated while it is inside a long batch() call (mid-call.worker.mjs):
// the parent waits on shared memory for the worker's "calling now", then waits `spin` microseconds
// more (a different moment each round) and terminates it. Arguments: rounds [members] [seed].
// Prints one line per finished round, then a JSON summary; a crash shows in the parent as a signal.
import { Worker } from "node:worker_threads"
import { seeded } from "./random.mjs"
import { makeTree } from "./tree.mjs"

const rounds = Number(process.argv[2] ?? 20)
const members = Number(process.argv[3] ?? 200_000)
const random = seeded(process.argv[4] ?? 1)
const tree = makeTree()
process.on("exit", () => tree.dispose())
const script = new URL("./mid-call.worker.mjs", import.meta.url)

const codes = []
let signalled = 0
for (let round = 0; round < rounds; round++) {
  const shared = new SharedArrayBuffer(4)
  const flag = new Int32Array(shared)
  const w = new Worker(script, { workerData: { root: tree.root, strategy: round % 2 ? "walk" : "openat2", members, flag: shared } })
  const exited = new Promise((resolve, reject) => {
    w.on("exit", resolve)
    w.on("error", reject)
  })
  // Blocks this thread until the worker is about to call, or gives up after 60 s (then the
  // worker never got there and the summary says so).
  if (Atomics.wait(flag, 0, 0, 60_000) !== "timed-out") signalled++
  const spin = Math.floor(random() * 2000)
  const until = process.hrtime.bigint() + BigInt(spin) * 1000n
  while (process.hrtime.bigint() < until);
  void w.terminate()
  codes.push(await exited)
  process.stdout.write(`round ${round}\n`)
}
console.log(JSON.stringify({ rounds, signalled, codes: [...new Set(codes)], secretIntact: tree.secretIntact() }))
