// The check-then-use race, run honestly: a worker swaps a workspace directory for a link to the
// outside while a reader reads a file through it. Bounded in reads and in time.
import * as fs from "node:fs"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { isRefusal } from "./readers.mjs"

/**
 * Lays out `workspace/docs/secret.txt` (an innocent decoy) and, parked beside it, a link
 * `workspace/.docs-link -> outside` whose `secret.txt` is the real secret.
 */
export const plantSwap = (workspace, outside) => {
  const swap = path.join(workspace, "docs")
  fs.mkdirSync(swap)
  fs.writeFileSync(path.join(swap, "secret.txt"), "decoy: an ordinary workspace file")
  const link = path.join(workspace, ".docs-link")
  fs.symlinkSync(outside, link)
  return { swap, parked: path.join(workspace, ".docs-real"), link, relative: "docs/secret.txt" }
}

export const race = async (reader, layout, secretText, { reads, seconds }) => {
  const stop = new SharedArrayBuffer(4)
  const deadline = Date.now() + seconds * 1000
  const worker = new Worker(new URL("./swapper.mjs", import.meta.url), {
    workerData: { ...layout, stop, deadline: deadline + 1000 }
  })
  const cycles = new Promise((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  })
  await new Promise((resolve) => worker.once("online", resolve))
  const tally = { reads: 0, decoy: 0, escaped: 0, refused: 0, missing: 0, example: undefined }
  while (tally.reads < reads && Date.now() < deadline) {
    tally.reads++
    try {
      const text = await reader.read(layout.relative)
      if (text === secretText) tally.escaped++
      else tally.decoy++
    } catch (e) {
      if (isRefusal(e)) {
        tally.refused++
        tally.example ??= e
      } else tally.missing++
    }
  }
  Atomics.store(new Int32Array(stop), 0, 1)
  tally.cycles = await cycles
  await worker.terminate()
  // Put the directory back under its name whatever state the worker stopped in.
  if (!fs.existsSync(layout.swap) && fs.existsSync(layout.parked)) fs.renameSync(layout.parked, layout.swap)
  if (fs.lstatSync(layout.swap).isSymbolicLink()) {
    fs.renameSync(layout.swap, layout.link)
    fs.renameSync(layout.parked, layout.swap)
  }
  return tally
}
