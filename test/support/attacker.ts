/**
 * A bounded attacker for race tests: a worker thread that renames entries in a cycle (for example
 * an ancestor swapped for a symbolic link and back) until it has done `maxSwaps` cycles or spent
 * `maxMs`, whichever comes first. Every cycle ends with the tree as it began. Failed renames (the
 * program under test removed something) are counted and skipped, never thrown.
 */
import { Worker } from "node:worker_threads"
import * as fs from "node:fs"
import * as path from "node:path"

const body = `
const { parentPort, workerData } = require("node:worker_threads")
const fs = require("node:fs")
const { steps, maxSwaps, maxMs, flag } = workerData
const done = new Int32Array(flag)
const start = Date.now()
let swaps = 0, failed = 0
while (swaps < maxSwaps && Date.now() - start < maxMs) {
  for (const [from, to] of steps) {
    try { fs.renameSync(from, to) } catch { failed++ }
  }
  swaps++
}
Atomics.store(done, 0, 1)
parentPort.postMessage({ swaps, failed })
`

export interface Attack {
  /** True once the worker has stopped swapping and restored the tree. */
  readonly done: () => boolean
  readonly finished: Promise<{ swaps: number; failed: number }>
}

export const startSwapper = (
  steps: ReadonlyArray<readonly [string, string]>,
  bounds: { readonly maxSwaps?: number; readonly maxMs?: number } = {}
): Attack => {
  const flag = new SharedArrayBuffer(4)
  const view = new Int32Array(flag)
  const worker = new Worker(body, {
    eval: true,
    workerData: { steps, maxSwaps: bounds.maxSwaps ?? 2000, maxMs: bounds.maxMs ?? 2000, flag }
  })
  const finished = new Promise<{ swaps: number; failed: number }>((resolve, reject) => {
    worker.once("message", resolve)
    worker.once("error", reject)
  }).finally(() => worker.terminate())
  return { done: () => Atomics.load(view, 0) === 1, finished }
}

/** Every entry beneath `dir` with its type, mode and inode: equal snapshots mean nothing was created, removed or chmod'ed. */
export const snapshot = (dir: string): Array<string> => {
  const out: Array<string> = []
  const walk = (rel: string) => {
    const abs = path.join(dir, rel)
    const st = fs.lstatSync(abs)
    out.push(`${rel || "."} ${st.mode.toString(8)} ${st.ino}`)
    if (st.isDirectory()) for (const name of fs.readdirSync(abs).sort()) walk(path.join(rel, name))
  }
  walk("")
  return out
}
