// One scale measurement in a process of its own, so its peak RSS is its own:
//   node scale-child.mjs '{"row":…,"contender":"node"|"pinnedfs","root":…,"targets":[rel,…],"reps":n,…}'
// Runs the row's operation once per target (a destructive row gets a fresh target each time; a
// listing repeats over the same one), and prints { ms: [per run], count, rssBaseMB, peakRssMB }.
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"

const args = JSON.parse(process.argv[2])
const dist = new URL("../../dist/", import.meta.url)
const abs = (rel) => path.join(args.root, rel)

// The node:fs way of a glob: fs.promises.glob where Node has it (22 and later), else a recursive
// readdir filtered by picomatch (the matcher pinnedfs itself names for globbing).
const nodeGlob = async (rel, pattern) => {
  if (typeof fsp.glob === "function") {
    const out = []
    for await (const p of fsp.glob(pattern, { cwd: abs(rel) })) out.push(p)
    return out
  }
  const { default: picomatch } = await import("picomatch")
  const match = picomatch(pattern)
  return (await fsp.readdir(abs(rel), { recursive: true })).filter((p) => match(p))
}

const makeRun = async () => {
  if (args.contender === "node") {
    switch (args.row) {
      case "readdir":
        return (rel) => fsp.readdir(abs(rel))
      case "readdir-recursive":
        return (rel) => fsp.readdir(abs(rel), { recursive: true })
      case "glob":
        return (rel) => nodeGlob(rel, "**/*.ts")
      case "remove":
        return (rel) => fsp.rm(abs(rel), { recursive: true })
      case "read-large":
        return (rel) => fsp.readFile(abs(rel))
      case "write-large": {
        const bytes = Buffer.alloc(args.bytes, 0x5a)
        return (rel) => fsp.writeFile(abs(rel), bytes)
      }
    }
  }
  if (args.row === "write-large") {
    // The client's wire form: the request arrives with its bytes already in base64; the timing is
    // of execute() taking it, decoding it and writing the file.
    const { Effect } = await import("effect")
    const { NodeAtomicFileSystem } = await import(new URL("effect/index.js", dist).href)
    const ext = NodeAtomicFileSystem.make({ strategy: args.strategy, contentLimit: Math.max(args.bytes, 64 * 2 ** 20) })
    const identity = await Effect.runPromise(ext.identifyRoot(args.root))
    const stamp = { boundaryRoot: args.root, logicalRoot: args.root, rootIdentity: identity }
    const data = Buffer.alloc(args.bytes, 0x5a).toString("base64")
    return (rel) => Effect.runPromise(ext.execute({ operation: "writeFile", path: abs(rel), data, ...stamp }))
  }
  const { PinnedRoot } = await import(new URL("index.js", dist).href)
  const r = await PinnedRoot.open(args.root, { strategy: args.strategy })
  switch (args.row) {
    case "readdir":
      return (rel) => r.readDirectory(rel)
    case "readdir-recursive":
      return (rel) => r.readDirectory(rel, { recursive: true })
    case "glob":
      return (rel) => r.glob("**/*.ts", { root: rel })
    case "remove":
      return (rel) => r.remove(rel, { recursive: true })
    case "read-large":
      return (rel) => r.readFile(rel, { limit: args.bytes })
  }
  throw new Error(`unknown row ${args.row}`)
}

const run = await makeRun()
const rssBase = process.memoryUsage().rss
const ms = []
let count = 0
for (const rel of args.targets) {
  const t0 = process.hrtime.bigint()
  const out = await run(rel)
  ms.push(Number(process.hrtime.bigint() - t0) / 1e6)
  count = Array.isArray(out) ? out.length : Buffer.isBuffer(out) ? out.length : count
}
// This process's own peak. Linux carries ru_maxrss (resourceUsage().maxRSS) across exec, so a child
// forked from a large benchmark process reports its parent's peak (measured: a child of a 300 MB
// parent said 304 MB where VmHWM said 40 MB); VmHWM belongs to the address space exec made.
const peakRssMB = () => {
  try {
    const hwm = /^VmHWM:\s+(\d+) kB$/m.exec(fs.readFileSync("/proc/self/status", "utf8"))
    if (hwm) return Number(hwm[1]) / 1024
  } catch {}
  return process.resourceUsage().maxRSS / 1024
}
process.stdout.write(JSON.stringify({ ms, count, rssBaseMB: rssBase / 2 ** 20, peakRssMB: peakRssMB() }))
process.exit(0)
