#!/usr/bin/env node
// node scripts/bench/writes.mjs [DIR ...] [--writes N] [--rounds N]
//
// What a whole-file write costs, run alone: one existing file replaced N times, awaited in turn,
// by each way of writing it, interleaved round by round so a change in the machine's load falls on
// all of them alike. Per way, the median microseconds per write over the rounds, and its ratio to
// fs.promises.writeFile measured in the same rounds. Each DIR (default: the system's temporary
// directory) gets its own table: give a tmpfs and an ext4 path to see the file system's share.
// Needs dist/ (npm run build:ts).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { median } from "./measure.mjs"

const argv = process.argv.slice(2)
const option = (name, fallback) => {
  const at = argv.indexOf(name)
  return at >= 0 ? Number(argv[at + 1]) : fallback
}
const writes = option("--writes", 500)
const rounds = option("--rounds", 5)
const dirs = argv.filter((a, i) => !a.startsWith("--") && !argv[i - 1]?.startsWith("--"))
const dist = new URL("../../dist/", import.meta.url)
if (!fs.existsSync(fileURLToPath(new URL("index.js", dist)))) {
  console.error("dist/ is missing: run `npm run build:ts` first")
  process.exit(1)
}
const { PinnedRoot } = await import(new URL("index.js", dist).href)
const { NodeAtomicFileSystem } = await import(new URL("effect/index.js", dist).href)
const { Effect } = await import("effect")

const payload = Buffer.alloc(4096, 0x62)

/** What a careful node:fs user writes for "never half-written": a temporary, then rename. */
const nodeReplace = async (abs) => {
  const tmp = `${abs}.tmp-${process.pid}`
  await fs.promises.writeFile(tmp, payload)
  await fs.promises.rename(tmp, abs)
}

const table = async (base) => {
  const dir = fs.mkdtempSync(path.join(base, "pinnedfs-writes-"))
  try {
    const abs = path.join(dir, "f.txt")
    fs.writeFileSync(abs, payload)
    const root = await PinnedRoot.open(dir)
    const extension = NodeAtomicFileSystem.make()
    const rootIdentity = await Effect.runPromise(extension.identifyRoot(dir))
    const wire = { boundaryRoot: dir, logicalRoot: dir, rootIdentity, operation: "writeFile", path: abs, data: payload.toString("base64") }
    /** @type {Array<[string, () => Promise<unknown>]>} */
    const ways = [
      ["fs.promises.writeFile (in place)", () => fs.promises.writeFile(abs, payload)],
      ["node: temporary + rename, by hand", () => nodeReplace(abs)],
      ["PinnedRoot.writeFile, default (replacement)", () => root.writeFile("f.txt", payload)],
      ["PinnedRoot.writeFile, atomic: false (in place)", () => root.writeFile("f.txt", payload, { atomic: false })],
      ["PinnedRoot.writeFile, durable: true", () => root.writeFile("f.txt", payload, { durable: true })],
      ["extension writeFile (replacement, base64)", () => Effect.runPromise(extension.execute(wire))]
    ]
    const times = ways.map(() => [])
    const ratios = ways.map(() => [])
    for (let r = 0; r < rounds + 1; r++) {
      const us = []
      for (const [, write] of ways) {
        const t0 = process.hrtime.bigint()
        for (let i = 0; i < writes; i++) await write()
        us.push(Number(process.hrtime.bigint() - t0) / 1e3 / writes)
      }
      if (r === 0) continue // warm-up
      us.forEach((u, i) => {
        times[i].push(u)
        ratios[i].push(us[0] / u)
      })
    }
    root.close()
    extension.close()
    console.log(
      `\n${base} (${writes} writes of 4 KiB a round, ${rounds} rounds, load average ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")})\n`
    )
    console.log("| way | µs a write (median) | vs fs.promises.writeFile (median of the rounds) |")
    console.log("|---|---:|---:|")
    ways.forEach(([name], i) => console.log(`| ${name} | ${median(times[i]).toFixed(0)} | ${median(ratios[i]).toFixed(2)}× |`))
  } finally {
    fs.rmSync(dir, { recursive: true, force: true })
  }
}

for (const base of dirs.length > 0 ? dirs : [os.tmpdir()]) await table(base)
