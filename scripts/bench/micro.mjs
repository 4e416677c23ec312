#!/usr/bin/env node
// node scripts/bench/micro.mjs [ms-per-round]
//
// The read targets of the benchmark in isolation, with CPU time beside wall time: on a shared,
// loaded machine wall-clock ops/s swings with the neighbours, while CPU microseconds per operation
// (process.cpuUsage: the JS thread and libuv's pool together) and the ratios inside one run hold.
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { manyFiles } from "./scenarios.mjs"
import { SHALLOW, makeTrees } from "./trees.mjs"

const { PinnedRoot } = await import(new URL("../../dist/index.js", import.meta.url).href)

const roundMs = Number(process.argv[2] ?? 300)
const trees = makeTrees({ globFiles: 0, dirEntries: 0, removeFiles: 0 })
const root = await PinnedRoot.open(trees.root, { strategy: "openat2" })
const abs = (rel) => path.join(trees.root, rel)
const batchReq = manyFiles.map((p) => ({ operation: "readFile", path: p }))

/** @type {Array<[string, number, () => Promise<unknown>]>} */
const cases = [
  ["single awaited: fs.promises.readFile", 1, () => fsp.readFile(abs(SHALLOW))],
  ["single awaited: PinnedRoot.readFile", 1, () => root.readFile(SHALLOW)],
  ["256 concurrent: fs.promises.readFile", 256, () => Promise.all(manyFiles.map((f) => fsp.readFile(abs(f))))],
  ["256 concurrent: PinnedRoot.readFile", 256, () => Promise.all(manyFiles.map((f) => root.readFile(f)))],
  [
    "256 batch: PinnedRoot.batch",
    256,
    async () => {
      const out = await root.batch(batchReq)
      for (const e of out) if (!e.ok) throw e.error
    }
  ],
  [
    "256 sync: readFileSync",
    256,
    async () => {
      for (const f of manyFiles) fs.readFileSync(abs(f))
    }
  ]
]

const run = async (unit, ms) => {
  let ops = 0
  const c0 = process.cpuUsage()
  const t0 = process.hrtime.bigint()
  let elapsed = 0
  while (elapsed < ms) {
    await unit()
    ops++
    elapsed = Number(process.hrtime.bigint() - t0) / 1e6
  }
  const c = process.cpuUsage(c0)
  return { ops, wallMs: elapsed, cpuUs: c.user + c.system }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1]
const results = []
for (const [name, per, unit] of cases) {
  await run(unit, 50)
  const rates = []
  const cpus = []
  for (let r = 0; r < 5; r++) {
    const x = await run(unit, roundMs)
    rates.push((x.ops * per) / (x.wallMs / 1000))
    cpus.push(x.cpuUs / (x.ops * per))
  }
  results.push({ name, opsPerSec: median(rates), cpuUsPerOp: median(cpus) })
}
for (const r of results) {
  console.log(
    `${r.name.padEnd(40)} ${(r.opsPerSec / 1000).toFixed(1).padStart(8)} k ops/s  ${r.cpuUsPerOp.toFixed(2).padStart(7)} µs CPU/op`
  )
}
const get = (n) => results.find((r) => r.name.startsWith(n))
const ratio = (a, b, f) => `${(f(get(a)) / f(get(b))).toFixed(2)}×`
const ops = (r) => r.opsPerSec
const cpu = (r) => 1 / r.cpuUsPerOp
console.log(
  `single: PinnedRoot / fs.promises = ${ratio("single awaited: P", "single awaited: f", ops)} wall, ${ratio("single awaited: P", "single awaited: f", cpu)} CPU`
)
console.log(
  `batch / 256 concurrent fs.promises = ${ratio("256 batch", "256 concurrent: f", ops)} wall, ${ratio("256 batch", "256 concurrent: f", cpu)} CPU`
)
console.log(
  `batch / 256 concurrent PinnedRoot = ${ratio("256 batch", "256 concurrent: P", ops)} wall, ${ratio("256 batch", "256 concurrent: P", cpu)} CPU`
)
console.log(`batch / readFileSync = ${ratio("256 batch", "256 sync", ops)} wall, ${ratio("256 batch", "256 sync", cpu)} CPU`)
root.close()
trees.cleanup()
