#!/usr/bin/env node
// npm run bench [-- --quick] [-- --json FILE] [-- --only ID,ID,...] [-- --contenders NAME,NAME,...]
//                [-- --client-kernel FILE]
//
// --only keeps the named scenarios (and the event-loop flood when "flood" is named, syscall counts
// when "strace" is, the scale rows when "scale" is, the confinement figures when "confine" is, the
// MCP servers' when "mcp" is (scripts/bench/mcp.mjs: pinnedfs mcp against the reference server),
// the fixers' 50,000-file row against lint-staged when "fixers" is;
// --client-kernel FILE (or PINNEDFS_CLIENT_KERNEL) adds the client's own kernel as a contender, lifted
// from the document that carries its FileSystem.ts (scripts/bench/contenders-client.mjs);
// memory figures only in a run without --only); --contenders keeps the contenders whose name
// starts with one of the given names. Both are for repeating a few rows; the README table comes
// from a full run.
//
// One run, every contender side by side on the same fresh trees: warm-up, several rounds, medians.
// Prints a markdown table (ops/s, ratio to node:fs/promises and to the path-based fallback, file
// syscalls per operation when strace is present), the event-loop delay during a flood, and memory
// before and after many operations. --json FILE writes the same figures as rows.
//
// Exits 1 when anything it set out to measure failed (a contender that could not be made, a
// scenario that threw, the floor, a syscall count): the figures that were measured are printed
// first, the failures after them. Only a missing optional tool (strace) is a note.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import { distStale, ensureDist } from "./package/dist.mjs"

// The bench measures the compiled package: dist/ is built first when it is missing or older than a
// source (a fresh checkout after npm install has none), as the demo does; what imports it is loaded
// after.
try {
  if (distStale()) process.stderr.write("pinnedfs bench: building dist/ from the sources first (tsc, under a minute)\n")
  ensureDist()
} catch (e) {
  console.error(`pinnedfs bench: ${e.message}`)
  process.exit(1)
}
const { eventLoopDelay, measureSideBySide, median, pool, poolFor } = await import("./bench/measure.mjs")
const { contenderNames, makeContender } = await import("./bench/registry.mjs")
const { manyFiles, scenarios } = await import("./bench/scenarios.mjs")
const { straceAvailable, syscallsPerOp } = await import("./bench/syscalls.mjs")
const { DEEP, makeTrees } = await import("./bench/trees.mjs")
const { confineBench } = await import("./bench/confine.mjs")
const { mcpBench } = await import("./bench/mcp.mjs")
const { scaleBench } = await import("./bench/scale.mjs")
const { fixersBench } = await import("./bench/fixers.mjs")
const { goalLines, goals } = await import("./bench/goals.mjs")

// Strict: an unknown option or a missing value is a usage error (exit 2), never a full run begun
// with the option ignored; --help prints the usage above.
const usage = () => {
  const text = fs.readFileSync(fileURLToPath(import.meta.url), "utf8")
  const lines = text.split("\n").slice(1)
  const end = lines.findIndex((l) => !l.startsWith("//"))
  return lines
    .slice(0, end)
    .map((l) => l.replace(/^\/\/ ?/, ""))
    .join("\n")
}
let args
try {
  args = parseArgs({
    options: {
      quick: { type: "boolean" },
      json: { type: "string" },
      only: { type: "string" },
      contenders: { type: "string" },
      "client-kernel": { type: "string" },
      help: { type: "boolean", short: "h" }
    },
    strict: true,
    allowPositionals: false
  }).values
} catch (e) {
  console.error(`npm run bench: ${e instanceof Error ? e.message : String(e)}\n\n${usage()}`)
  process.exit(2)
}
if (args.help) {
  console.log(usage())
  process.exit(0)
}
const quick = args.quick === true
const jsonFile = args.json
const repo = path.resolve(fileURLToPath(new URL("..", import.meta.url)))

if (!fs.existsSync(path.join(repo, "dist", "index.js"))) {
  console.error("dist/ is missing: run `npm install` (or `npm run build:ts`) first")
  process.exit(1)
}

const listArg = (value) => (value === undefined ? undefined : value.split(",").filter((x) => x !== ""))
const only = listArg(args.only)
const contenderFilter = listArg(args.contenders)
const QUICK_SCENARIOS = new Set([
  "read-4k-d1",
  "read-4k-d8",
  "read-4k-d8-256",
  "read-string-4k-d8",
  "read-string-4k-d8-256x20",
  "stat",
  "exists",
  "reads-256-concurrent",
  "reads-256-batch",
  "glob-10k"
])
// Every name --only takes: a scenario, or one of the groups of rows outside the scenario table.
const groups = ["flood", "strace", "confine", "mcp", "scale", "fixers"]
const unknownOnly = (only ?? []).filter((id) => !groups.includes(id) && !scenarios.some((s) => s.id === id))
if (unknownOnly.length > 0) {
  console.error(
    `npm run bench: --only names no scenario or group: ${unknownOnly.join(", ")}\n` +
      `scenarios: ${scenarios.map((s) => s.id).join(", ")}\ngroups: ${groups.join(", ")}`
  )
  process.exit(2)
}
const chosen = scenarios.filter((s) => (only ? only.includes(s.id) : !quick || QUICK_SCENARIOS.has(s.id)))
const flood = only === undefined || only.includes("flood")
const trees = makeTrees(quick ? { globFiles: 2_000 } : {})
// The trees are 100,000 files and more, all dirty in the page cache: left to the kernel's writeback,
// its threads take a core for a minute of the first rows. Written back now, before any is measured.
execFileSync("sync")
const rows = []
const notes = []
const failures = []

const log = (...a) => process.stderr.write(`${a.join(" ")}\n`)
const benchStarted = performance.now()

// ---------------------------------------------------------------------------------------------
// The floor: the same syscalls in a tight C++ loop (native/bench/floor.cc), built with cmake.
const floorBinary = () => {
  const dir = path.join(repo, "build-bench")
  try {
    execFileSync("cmake", ["-S", repo, "-B", dir, "-DCMAKE_BUILD_TYPE=Release"], { stdio: "ignore" })
    execFileSync("cmake", ["--build", dir, "--target", "pinnedfs_floor", "-j", "2"], { stdio: "ignore" })
    return path.join(dir, "pinnedfs_floor")
  } catch (e) {
    failures.push(`floor: cmake build failed (${e.message.split("\n")[0]})`)
    return undefined
  }
}

const runFloor = (bin, op, rel) => {
  const out = execFileSync(bin, [trees.root, rel, op, quick ? "20000" : "200000"]).toString()
  return JSON.parse(out)
}

// ---------------------------------------------------------------------------------------------
const main = async () => {
  const contenders = []
  for (const [name, strategy] of contenderNames) {
    if (contenderFilter && !contenderFilter.some((f) => name.startsWith(f))) continue
    try {
      contenders.push(await makeContender(name, trees.root, strategy))
    } catch (e) {
      if (e.notMeasured) notes.push(`${name} (${strategy}): ${e.message}`)
      else failures.push(`${name} (${strategy}) could not be made: ${e.message}`)
    }
  }

  for (const s of chosen) {
    const runners = []
    for (const c of contenders) {
      if (typeof c[s.needs] !== "function") continue
      const u = s.unit(c, trees)
      runners.push({ c, unit: typeof u === "function" ? u : u.run, before: typeof u === "function" ? undefined : u.before })
    }
    log(`  ${s.id}: ${runners.map((r) => `${r.c.name} (${r.c.strategy})`).join(", ")}`)
    const results = await measureSideBySide(runners, {
      opsPerUnit: s.ops ?? 1,
      rounds: quick ? 3 : (s.rounds ?? 5),
      minMs: quick ? 100 : (s.minMs ?? 200),
      // Half a second per contender before its rounds: the Effect contenders run a deep call graph
      // that V8 optimizes only after some thousands of calls (measured: the extension's first 20,000
      // awaited reads ran at about 14 k/s, the next 20,000 at 23 to 26 k/s), and a shorter warm-up
      // timed the tiering, not the code.
      warmupMs: s.warmupMs ?? (quick ? 100 : 500)
    })
    results.forEach((x, i) => {
      const c = runners[i].c
      if (x.error) failures.push(`${s.id} / ${c.name} (${c.strategy}) failed: ${x.error.message}`)
      else
        rows.push({
          scenario: s.id,
          title: s.title,
          contender: c.name,
          strategy: c.strategy,
          opsPerSec: x.opsPerSec,
          cpuUsPerOp: x.cpuUsPerOp
        })
    })
  }

  const bin = chosen.some((x) => x.floor) ? floorBinary() : undefined
  if (bin) {
    for (const s of chosen.filter((x) => x.floor)) {
      const [op, rel] = s.floor
      const f = runFloor(bin, op, rel)
      rows.push({
        scenario: s.id,
        title: s.title,
        contender: "floor (C++ loop)",
        strategy: "openat2",
        opsPerSec: 1e9 / f.nsPerOp,
        syscallsPerOp: f.syscallsPerOp
      })
      if (rel === DEEP && op === "read") {
        const w = runFloor(bin, "walkread", rel)
        rows.push({
          scenario: s.id,
          title: s.title,
          contender: "floor (C++ loop)",
          strategy: "walk",
          opsPerSec: 1e9 / w.nsPerOp,
          syscallsPerOp: w.syscallsPerOp
        })
      }
    }
  }

  // Ratios within this run.
  for (const r of rows) {
    const node = rows.find((x) => x.scenario === r.scenario && x.contender === "node:fs/promises")
    const fb = rows.find((x) => x.scenario === r.scenario && x.contender === "PathAtomicFileSystem")
    r.ratioVsNode = node ? r.opsPerSec / node.opsPerSec : null
    r.ratioVsFallback = fb ? r.opsPerSec / fb.opsPerSec : null
  }

  // Syscalls per operation.
  if (only !== undefined && !only.includes("strace")) {
    // A partial run counts syscalls only when asked (`--only …,strace`).
  } else if (straceAvailable()) {
    const traced = quick
      ? ["read-4k-d1", "read-4k-d8"]
      : ["read-4k-d1", "read-4k-d8", "protocol-read-d8", "stat", "exists", "write-4k", "readdir-1000", "reads-256-batch", "mkdirs-8"]
    for (const r of rows) {
      if (!traced.includes(r.scenario) || r.contender.startsWith("floor")) continue
      const s = scenarios.find((x) => x.id === r.scenario)
      try {
        const n = syscallsPerOp({
          contender: r.contender,
          strategy: r.strategy,
          scenario: r.scenario,
          root: trees.root,
          units: s.ops ? 10 : 200,
          opsPerUnit: s.ops ?? 1
        })
        r.syscallsPerOp = n.perOp
        r.syscalls = n.names
      } catch (e) {
        failures.push(`syscalls for ${r.scenario} / ${r.contender}: ${e.message}`)
      }
    }
  } else {
    notes.push("syscalls per operation not measured: strace is not installed (apt-get install strace)")
  }

  // Event-loop delay during a flood, and memory over many operations, for PinnedRoot and node:fs.
  const loop = []
  const floodCount = quick ? 2_000 : 10_000
  // Every flood lasts at least this long, whatever its contender's speed, so that every histogram
  // holds about as many samples (one a millisecond): 10,000 reads alone took the fastest contender
  // 50 ms, whose p99 was then its worst turn, and slower ones 400 ms.
  const floodMs = quick ? 250 : 1_000
  // The synchronous contender is left out: it blocks the loop for the whole flood, so the
  // histogram (which samples only when the loop runs) would show nothing at all.
  // One flood gives about a thousand samples of the delay, so its p99 is the tenth worst turn:
  // a few collections or preemptions by another process decide it. Each contender floods several
  // times, interleaved as the rounds above are; the table gives the median p50 and p99 and the
  // worst max, with the spread of the p99s beside it.
  const floodRounds = quick ? 3 : 5
  const floods = contenders.filter((x) => !("blocking" in x && x.blocking) && flood && typeof x.readFile === "function")
  const runs = floods.map(() => [])
  for (let r = 0; r < floodRounds; r++) {
    for (const [k, c] of floods.entries()) {
      let reads = 0
      const delay = await eventLoopDelay(async () => {
        reads = await poolFor(floodCount, floodMs, 256, (i) => c.readFile(manyFiles[i % 256]))
      })
      runs[k].push({ ...delay, reads })
    }
  }
  for (const [k, c] of floods.entries()) {
    const of = (key) => runs[k].map((d) => d[key]).filter((x) => x !== undefined)
    const p99s = of("p99")
    loop.push({
      contender: c.name,
      strategy: c.strategy,
      p50: median(of("p50")),
      p99: median(p99s),
      p99Low: Math.min(...p99s),
      p99High: Math.max(...p99s),
      max: Math.max(...of("max")),
      reads: median(of("reads")),
      ...(of("turnCpuP99").length ? { turnCpuP99: median(of("turnCpuP99")), turnCpuMax: Math.max(...of("turnCpuMax")) } : {})
    })
  }
  const memOps = quick ? 50_000 : 1_000_000
  const pr = contenders.find((c) => c.name === "PinnedRoot" && c.strategy === "openat2")
  let memory
  if (pr && only === undefined) {
    globalThis.gc?.()
    const before = process.memoryUsage().rss
    await pool(memOps, 64, (i) => pr.readFile(manyFiles[i % 256]))
    globalThis.gc?.()
    const after = process.memoryUsage().rss
    memory = { operations: memOps, rssBeforeMB: before / 2 ** 20, rssAfterMB: after / 2 ** 20, growthMB: (after - before) / 2 ** 20 }
  }

  for (const c of contenders) await c.close()
  trees.cleanup()
  const confine =
    only !== undefined && !only.includes("confine")
      ? { lines: [] }
      : await confineBench({ quick }).catch((e) => {
          failures.push(`confinement preparation failed: ${e.message}`)
          return { lines: [] }
        })
  const mcp = only !== undefined && !only.includes("mcp") ? { lines: [], rows: [] } : await mcpBench({ quick, log })
  failures.push(...(mcp.failures ?? []))
  // Scale rows: a full run, or `--only scale` (they take minutes, and are left out of --quick).
  /** @type {{ lines: Array<string>, rows: Array<unknown>, failures?: Array<string>, seconds?: number }} */
  let scale = { lines: [], rows: [] }
  if (only === undefined ? !quick : only.includes("scale")) {
    scale = await scaleBench({ quick, log })
    failures.push(...scale.failures)
    scale.lines.push("", `Scale rows took ${scale.seconds.toFixed(0)} s, trees made and removed included.`)
  }
  // The fixers' 50,000-file row against lint-staged: a full run, or `--only fixers`.
  let fixers = { lines: [] }
  if (only === undefined ? !quick : only.includes("fixers")) {
    fixers = await fixersBench({ quick, log })
    failures.push(...fixers.failures)
  }
  report({
    loop,
    memory,
    confine,
    mcp,
    scale: { ...scale, lines: [...scale.lines, ...(fixers.lines.length ? ["", ...fixers.lines] : [])] },
    targets: targets(loop),
    goals: goals({ rows, loop, memory })
  })
}

// The speed targets (docs/performance.md, "Targets", says why each is set where it is), each a
// ratio of rows of this run.
const targets = (loop) => {
  const at = (scenario, contender, strategy) =>
    rows.find((r) => r.scenario === scenario && r.contender === contender && (strategy === undefined || r.strategy === strategy))
  const out = []
  const ratio = (label, a, b, goal) => {
    if (!a || !b) return
    const x = a.opsPerSec / b.opsPerSec
    // CPU time per operation (all threads) beside wall time: on a shared machine it swings less.
    const cpu = a.cpuUsPerOp && b.cpuUsPerOp ? b.cpuUsPerOp / a.cpuUsPerOp : undefined
    out.push({ label, ratio: x, cpu, goal, holds: x >= goal })
  }
  for (const strategy of ["openat2", "walk"]) {
    const ext = "NodeAtomicFileSystem"
    ratio(
      `extension readFile awaited / PinnedRoot, depth 8 (${strategy})`,
      at("read-4k-d8", ext, strategy),
      at("read-4k-d8", "PinnedRoot", strategy),
      0.9
    )
    ratio(
      `extension readFile 256 in flight / PinnedRoot, depth 8 (${strategy})`,
      at("read-4k-d8-256", ext, strategy),
      at("read-4k-d8-256", "PinnedRoot", strategy),
      0.9
    )
    ratio(
      `client protocol read awaited / fs.promises.readFile (${strategy})`,
      at("protocol-read-d8", ext, strategy),
      at("protocol-read-d8", "node:fs/promises"),
      1.0
    )
    ratio(
      `client protocol read 256 in flight / fs.promises.readFile (${strategy})`,
      at("protocol-read-d8-256", ext, strategy),
      at("protocol-read-d8-256", "node:fs/promises"),
      1.0
    )
    for (const c of ["PinnedRoot", ext]) {
      ratio(`${c} stat / fs.promises.lstat (${strategy})`, at("stat", c, strategy), at("stat", "node:fs/promises"), 1.0)
      ratio(`${c} exists / fs.promises.access (${strategy})`, at("exists", c, strategy), at("exists", "node:fs/promises"), 1.0)
    }
  }
  for (const strategy of ["openat2", "walk"]) {
    const kernel = "kernel over NodeAtomicFileSystem"
    const ext = "NodeAtomicFileSystem"
    ratio(
      `kernel readFileString awaited / fs.promises.readFile, depth 8 (${strategy})`,
      at("read-string-4k-d8", kernel, strategy),
      at("read-string-4k-d8", "node:fs/promises"),
      1.5
    )
    ratio(
      `kernel 256-member batch / 256 concurrent fs.promises.readFile (${strategy})`,
      at("reads-256-batch", kernel, strategy),
      at("reads-256-concurrent", "node:fs/promises"),
      3.0
    )
    ratio(`kernel stat / fs.promises.lstat (${strategy})`, at("stat", kernel, strategy), at("stat", "node:fs/promises"), 1.0)
    ratio(`kernel exists / fs.promises.access (${strategy})`, at("exists", kernel, strategy), at("exists", "node:fs/promises"), 1.0)
    // The grant filter may cost at most half the listing: the kernel's listing against the same
    // executor listing unfiltered, at least 1 / 1.5.
    ratio(
      `kernel glob / extension glob, filter cost (${strategy})`,
      at("glob-10k", kernel, strategy),
      at("glob-10k", ext, strategy),
      1 / 1.5
    )
    ratio(
      `kernel readDirectory / extension readDirectory, filter cost (${strategy})`,
      at("readdir-1000", kernel, strategy),
      at("readdir-1000", ext, strategy),
      1 / 1.5
    )
  }
  const node = loop.find((l) => l.contender === "node:fs/promises")
  for (const l of loop) {
    if (l.contender !== "PinnedRoot" && l.contender !== "NodeAtomicFileSystem" && l.contender !== "kernel over NodeAtomicFileSystem")
      continue
    out.push({
      label: `event-loop p99 during the flood, ${l.contender} (${l.strategy}), ms (p50 ${fmt(l.p50)}, node:fs ${node ? fmt(node.p99) : "n/a"})`,
      value: l.p99,
      goal: 5,
      holds: l.p99 < 5
    })
  }
  return out
}

const fmt = (n, d = 2) => (n === null || n === undefined ? "n/a" : Number(n).toFixed(d))
const fmtOps = (n) =>
  n >= 1e6 ? `${(n / 1e6).toFixed(2)} M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)} k` : n >= 10 ? n.toFixed(0) : n.toFixed(2)

const report = ({ loop, memory, confine, mcp, scale, targets, goals }) => {
  const out = []
  out.push(
    `pinnedfs benchmark (${quick ? "quick" : "full"}), node ${process.version}, ${process.platform}-${process.arch}, ${new Date().toISOString()}, load average ${os
      .loadavg()
      .map((x) => x.toFixed(2))
      .join(" ")} at the end, ${((performance.now() - benchStarted) / 1000).toFixed(0)} s in all`
  )
  out.push("")
  out.push("| scenario | contender | strategy | ops/s | vs node:fs | vs fallback | CPU µs/op | fs syscalls/op |")
  out.push("|---|---|---|---:|---:|---:|---:|---:|")
  for (const r of rows) {
    out.push(
      `| ${r.title} | ${r.contender} | ${r.strategy} | ${fmtOps(r.opsPerSec)} | ${fmt(r.ratioVsNode)}× | ${r.ratioVsFallback === null ? "n/a" : `${fmt(r.ratioVsFallback)}×`} | ${r.cpuUsPerOp === undefined ? "" : fmt(r.cpuUsPerOp, 1)} | ${r.syscallsPerOp ?? ""} |`
    )
  }
  // The per-call bound on a directory program, as time: what one call may hold a pool thread for.
  const held = rows.filter((r) => r.scenario === "mkdirs-largest" && r.contender === "PinnedRoot" && r.opsPerSec > 0)
  if (held.length > 0) {
    out.push("")
    out.push(
      `Longest one mkdirs call may hold a thread of the pool (the largest plan it accepts, 4,093 directories; median wall): ${held.map((r) => `${fmt(1000 / r.opsPerSec, 0)} ms (${r.strategy})`).join(", ")}.`
    )
  }
  out.push("")
  out.push(
    `Event-loop delay during a flood of reads, 256 in flight, each flood at least ${quick ? "2,000" : "10,000"} reads and ${quick ? "250 ms" : "1 s"} long, ${quick ? 3 : 5} floods per contender: median p50 and p99 (lowest–highest p99), worst max, and the median flood's reads:`
  )
  out.push("")
  out.push("| contender | strategy | p50 ms | p99 ms | p99 range ms | max ms | JS-thread CPU a turn, p99 / max ms | reads a flood |")
  out.push("|---|---|---:|---:|---:|---:|---:|---:|")
  for (const l of loop)
    out.push(
      `| ${l.contender} | ${l.strategy} | ${fmt(l.p50)} | ${fmt(l.p99)} | ${fmt(l.p99Low)}–${fmt(l.p99High)} | ${fmt(l.max)} | ${l.turnCpuP99 === undefined ? "n/a (Node < 23.9)" : `${fmt(l.turnCpuP99)} / ${fmt(l.turnCpuMax)}`} | ${Math.round(l.reads).toLocaleString("en")} |`
    )
  if (memory) {
    out.push("")
    out.push(
      `Memory: RSS ${fmt(memory.rssBeforeMB, 1)} MB before, ${fmt(memory.rssAfterMB, 1)} MB after ${memory.operations.toLocaleString("en")} PinnedRoot reads (growth ${fmt(memory.growthMB, 1)} MB).`
    )
  }
  if (targets.length) {
    out.push("", "Targets, ratios within this run:", "")
    for (const t of targets) {
      const figure = t.ratio === undefined ? fmt(t.value) : `${fmt(t.ratio)}× wall, ${fmt(t.cpu)}× CPU (target ≥ ${fmt(t.goal, 1)}×)`
      out.push(`- ${t.label}: ${figure}${t.ratio === undefined ? ` (target < ${t.goal})` : ""} ${t.holds ? "holds" : "does not hold"}`)
    }
  }
  out.push("", ...goalLines(goals))
  if (notes.length) {
    out.push("")
    for (const n of notes) out.push(`- ${n}`)
  }
  out.push("", ...confine.lines)
  if (mcp.lines.length) out.push("", ...mcp.lines)
  if (scale.lines.length) out.push("", ...scale.lines)
  if (failures.length) {
    out.push("")
    out.push(`FAILED (${failures.length}):`)
    for (const f of failures) out.push(`- ${f}`)
  }
  console.log(out.join("\n"))
  if (jsonFile) {
    const json = rows.map((r) => ({
      scenario: r.scenario,
      contender: r.contender,
      strategy: r.strategy,
      opsPerSec: r.opsPerSec,
      cpuUsPerOp: r.cpuUsPerOp ?? null,
      ratioVsNode: r.ratioVsNode,
      ratioVsFallback: r.ratioVsFallback,
      syscallsPerOp: r.syscallsPerOp ?? null
    }))
    fs.writeFileSync(
      jsonFile,
      JSON.stringify(
        {
          rows: json,
          eventLoop: loop,
          memory: memory ?? null,
          targets,
          goals,
          notes,
          failures,
          confine: { rows: confine.rows ?? [], eventLoop: confine.eventLoop ?? null },
          mcp: mcp.rows,
          scale: scale.rows
        },
        null,
        2
      )
    )
  }
}

await main()
if (failures.length) {
  console.error(`bench: ${failures.length} measurement(s) failed; see FAILED above`)
  process.exit(1)
}
