// Worker thread: flips `swap` between a real directory and a symbolic link to the outside, as fast
// as rename(2) allows, until told to stop or its deadline passes. Four renames a cycle, so the
// name is a directory about half the time and a link about half the time (and briefly absent).
import * as fs from "node:fs"
import { parentPort, workerData } from "node:worker_threads"

const { swap, parked, link, stop, deadline } = workerData
const flag = new Int32Array(stop)
let cycles = 0
while (Atomics.load(flag, 0) === 0 && Date.now() < deadline) {
  try {
    fs.renameSync(swap, parked) // the real directory steps aside
    fs.renameSync(link, swap) // the link takes its name
    fs.renameSync(swap, link)
    fs.renameSync(parked, swap) // and the directory comes back
    cycles++
  } catch {
    // A rename lost to nothing but our own sequence; carry on.
  }
}
parentPort.postMessage(cycles)
