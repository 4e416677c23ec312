// A worker that calls into the addon in a tight loop until it is terminated: readFile, stat and
// readDirectory (single calls, a batch, a compact readMany), successes and refusals, with many
// operations in flight at every moment, so a terminate() lands mid-call, mid-settle or mid-error.
import { parentPort, workerData } from "node:worker_threads"
import { loadAddon } from "./addon.mjs"

const native = loadAddon()
const { ops } = native
const h = await native.pin(workerData.root, workerData.strategy)
const quiet = () => undefined
parentPort.postMessage("looping")
for (let i = 0; ; i++) {
  const inFlight = workerData.simple
    ? [
        h.call(ops.readFile, "file.txt"),
        h.call(ops.readFile, "out/secret.txt").catch(quiet),
        h.call(ops.stat, "dir/sub/deep.txt"),
        h.call(ops.readDirectory, "dir", true)
      ]
    : [
        h.call(ops.readFile, "file.txt"),
        h.call(ops.readFile, "out/secret.txt").catch(quiet), // refused: an error object is built
        h.call(ops.stat, "dir/sub/deep.txt"),
        h.call(ops.readDirectory, "dir", true),
        h.execute({ op: ops.readFile, path: "no/such" }).catch(quiet),
        h.batch(
          [
            { op: ops.stat, path: "file.txt" },
            { op: ops.readFile, path: "hard.txt" }
          ],
          { size: 4, response: 1 << 20 }
        ),
        h.readMany(new Uint8Array([ops.readFile, ops.stat]), ["file.txt", "../x"], new Uint8Array(2), 4, 1 << 20)
      ]
  if (i % 4 === 0) await Promise.all(inFlight)
}
