// One worker thread's life: load the addon, pin the root under both strategies, do some work
// (successes and refusals), then leave operations in flight and tell the parent, which either
// terminates this worker mid-flight (`endless`: it keeps work in flight until then) or lets it end
// on its own with its roots still open. Either
// way the environment's teardown must drop every root (native/binding/addon.cc `teardown`).
import { parentPort, workerData } from "node:worker_threads"
import { loadAddon } from "./addon.mjs"

const native = loadAddon()
const { root, id, endless } = workerData
const { ops, flags } = native
const handles = [await native.pin(root, "openat2"), await native.pin(root, "walk")]
for (const h of handles) {
  await h.execute({ op: ops.readFile, path: "file.txt" })
  await h.execute({ op: ops.readFile, path: "out/secret.txt" }).catch(() => undefined)
  await h.execute({ op: ops.writeFile, path: `worker-${id}.txt`, data: "x", flag: flags.w, atomic: true })
  await h.batch(
    [
      { op: ops.stat, path: "dir" },
      { op: ops.readDirectory, path: "dir", recursive: true }
    ],
    { size: 8, response: 1 << 20 }
  )
}
// Work still in flight when the parent hears "busy": a deep listing, a batch and many reads.
const inFlight = []
for (const h of handles) {
  inFlight.push(h.execute({ op: ops.glob, path: "", to: "", pattern: "**", exclude: [], dot: true }))
  inFlight.push(
    h.batch(
      Array.from({ length: 200 }, () => ({ op: ops.readFile, path: "dir/sub/deep.txt" })),
      { size: 256, response: 1 << 24 }
    )
  )
  for (let i = 0; i < 50; i++) inFlight.push(h.execute({ op: ops.stat, path: "file.txt" }))
}
for (const p of inFlight) p.catch(() => undefined)
parentPort.postMessage("busy")
if (endless) {
  // To be terminated: the operations above are still in flight (a deep glob, a 200-member batch,
  // 100 stats) when the parent hears "busy" and calls terminate(); this worker then waits without
  // issuing more. Workers terminated while they keep calling into the addon in a tight loop are
  // test/lifetime/terminate.test.ts.
  setInterval(() => {}, 60_000)
}
// Left to end on its own, the worker exits once its work settles, roots never closed by hand.
