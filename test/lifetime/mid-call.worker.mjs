// A worker that makes one long native call and says, through shared memory, the instant before it
// starts, so the parent can terminate it while the addon is still reading the call's arguments.
// The call: batch() over a long array of members that are not requests (each fails alone, cheaply),
// so most of its time goes to reading and sizing the list, where a length read twice once differed.
import { workerData } from "node:worker_threads"
import { loadAddon } from "./addon.mjs"

const native = loadAddon()
const h = await native.pin(workerData.root, workerData.strategy)
const members = new Array(workerData.members).fill(0)
const flag = new Int32Array(workerData.flag)
Atomics.store(flag, 0, 1)
Atomics.notify(flag, 0)
for (;;) await h.batch(members, { size: workerData.members, response: 1 }).catch(() => undefined)
