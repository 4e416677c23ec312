// Confinement preparation (pinnedfs/confine): discovery of protected paths over a checkout-shaped
// tree with ~300 protected candidates, beside GNU find on the same tree (NUL-framed, -prune); the
// event-loop delay while discovery runs; a whole launch preparation; a preparation over 20,000
// protected candidates (nested repositories under one protected tree); and preparation + cleanup
// of a fresh 5-directory state scratch. Figures are medians of repeated runs; trips are counted by the
// addon (one trip = one hop off the JavaScript thread).
import { createHook } from "node:async_hooks"
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { monitorEventLoopDelay, performance } from "node:perf_hooks"
import { Anchors } from "../../dist/confine/anchors.js"
import { discoverProtected } from "../../dist/confine/discovery.js"
import { compilePolicy, Confinement } from "../../dist/confine/index.js"
import { rawOf } from "../../dist/confine/raw.js"
import { native } from "../../dist/internal/native.js"
import { PinnedRoot } from "../../dist/PinnedRoot.js"

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}
const now = () => Number(process.hrtime.bigint()) / 1e6

// A checkout: sources, a dependency tree, the repository's own .git, and fixture repositories
// (most of them under a scratch directory, as in the design's measured checkout).
const makeCheckout = (root, { fixtures = 285, nested = 29, sourceFiles = 3_000, depFiles = 12_000 }) => {
  const w = (rel, data = "x\n") => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true })
    fs.writeFileSync(path.join(root, rel), data)
  }
  const repo = (dir) => {
    for (const f of ["HEAD", "config", "index", "objects/ab/cdef", "objects/12/3456", "refs/heads/main", "hooks/pre-commit.sample"])
      w(`${dir}/.git/${f}`)
  }
  repo(".")
  for (let i = 0; i < sourceFiles; i++) w(`src/m${i % 60}/d${i % 7}/f${i}.ts`, "export {}\n")
  for (let i = 0; i < depFiles; i++) w(`node_modules/p${i % 400}/lib/s${i % 5}/f${i}.js`)
  for (let i = 0; i < fixtures; i++) {
    repo(`.scratch/fixture-${i}`)
    w(`.scratch/fixture-${i}/README.md`)
  }
  for (let i = 0; i < nested; i++) repo(`test/fixtures/repo-${i}`)
  return 1 + fixtures + nested
}

// find's own CPU time comes from the shell's `times` (children's user and system time).
const gnuFind = (root) =>
  new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", 'find "$1" -name .git -prune -print0; s=$?; times >&2; exit $s', "find", root], {
      stdio: ["ignore", "pipe", "pipe"]
    })
    const chunks = []
    let err = ""
    child.stdout.on("data", (c) => chunks.push(c))
    child.stderr.setEncoding("utf8").on("data", (d) => (err += d))
    child.once("error", reject)
    child.once("close", (code) => {
      if (code !== 0) return reject(new Error(`find exited ${code}`))
      const out = Buffer.concat(chunks)
      let n = 0
      for (const b of out) if (b === 0) n++
      const seconds = (t) => {
        const m = /(\d+)m([\d.]+)s/.exec(t)
        return m ? Number(m[1]) * 60 + Number(m[2]) : NaN
      }
      const children = err.trim().split("\n")[1] ?? ""
      const [user, sys] = children.split(/\s+/)
      resolve({ value: n, cpuMs: (seconds(user) + seconds(sys)) * 1000 })
    })
  })

// Wall time, and CPU time of this process (every thread: the walk runs on libuv's pool) unless the
// work reports its own (`{ value, cpuMs }`): steadier than wall time on a shared machine.
const timeRuns = async (rounds, fn) => {
  const times = []
  const cpus = []
  let last
  for (let i = 0; i < rounds; i++) {
    const c0 = process.cpuUsage()
    const t0 = now()
    const out = await fn()
    times.push(now() - t0)
    const c = process.cpuUsage(c0)
    if (out && typeof out === "object" && "cpuMs" in out) {
      cpus.push(out.cpuMs)
      last = out.value
    } else {
      cpus.push((c.user + c.system) / 1000)
      last = out
    }
  }
  return { ms: median(times), cpuMs: median(cpus), last }
}

/**
 * Event-loop delay (max and p99, ms) while `fn` runs `rounds` times in a row, and the time the loop
 * spent running JavaScript per run (event-loop utilization): on a loaded machine the delay also
 * counts the time the process waited for a CPU, the active time only what the loop itself did.
 */
const loopDelay = async (rounds, fn) => {
  const turns = longestTurns()
  const h = monitorEventLoopDelay({ resolution: 1 })
  // A timer that wakes every millisecond makes sure the loop is sampled while the work is off-thread.
  const tick = setInterval(() => undefined, 1)
  const e0 = performance.eventLoopUtilization()
  // This thread's own CPU time where Node reports it (23.9+): unlike the loop's active time, it
  // does not grow while the process waits for a CPU on a loaded machine.
  const threadCpu = typeof process.threadCpuUsage === "function" ? () => process.threadCpuUsage() : undefined
  const c0 = threadCpu?.()
  h.enable()
  for (let i = 0; i < rounds; i++) await fn()
  h.disable()
  const longest = turns.stop()
  const e = performance.eventLoopUtilization(e0)
  const c = c0 ? process.threadCpuUsage(c0) : undefined
  clearInterval(tick)
  return {
    max: h.max / 1e6,
    p99: h.percentile(99) / 1e6,
    activeMsPerRun: e.active / rounds,
    threadCpuMsPerRun: c ? (c.user + c.system) / 1000 / rounds : null,
    longestTurnMs: longest
  }
}

/**
 * The longest turn of the event loop in JavaScript-thread CPU time: from the start of one callback
 * the loop runs (I/O, timer, immediate, a settled native trip) to the start of the next, which
 * counts the microtasks it ran too, while the time the loop slept costs no CPU. Measured where Node
 * reports this thread's CPU time (23.9+), else null. Unlike the loop delay it does not grow while
 * the process waits for a CPU on a loaded machine: it is the turn the work itself made.
 */
const longestTurns = () => {
  if (typeof process.threadCpuUsage !== "function") return { stop: () => null }
  const cpu = () => {
    const c = process.threadCpuUsage()
    return (c.user + c.system) / 1000
  }
  const promises = new Set()
  let depth = 0
  let start
  let longest = 0
  const hook = createHook({
    init(id, type) {
      if (type === "PROMISE") promises.add(id)
    },
    destroy(id) {
      promises.delete(id)
    },
    promiseResolve(id) {
      promises.delete(id)
    },
    before(id) {
      if (promises.has(id) || depth++ > 0) return
      const now = cpu()
      if (start !== undefined) longest = Math.max(longest, now - start)
      start = now
    },
    after(id) {
      if (!promises.has(id)) depth = Math.max(0, depth - 1)
    }
  }).enable()
  return {
    stop: () => {
      hook.disable()
      if (start !== undefined) longest = Math.max(longest, cpu() - start)
      return longest
    }
  }
}

export const confineBench = async ({ quick = false } = {}) => {
  const rounds = quick ? 5 : 15
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-bench-confine-"))
  const rows = []
  const notes = []
  try {
    const ws = path.join(base, "checkout")
    const candidates = makeCheckout(ws, quick ? { sourceFiles: 1_000, depFiles: 4_000 } : {})
    const canonical = rawOf(fs.realpathSync(ws))
    // The workspace's rules only, as GNU find below looks in the checkout only (the agents' sockets
    // and the credential stores are looked for in the whole preparation further down).
    const rules = compilePolicy().rules.filter((r) => r.base === "workspace")

    const discoverOnce = async () => {
      const anchors = new Anchors("auto")
      try {
        return await discoverProtected({ rules, workspaces: [canonical], home: null, tempRoot: null, anchors })
      } finally {
        await anchors.close()
      }
    }
    await discoverOnce()
    const discovered = await timeRuns(rounds, discoverOnce)
    const report = discovered.last.reports[0]
    rows.push({
      what: `discovery, ${discovered.last.candidates.length} protected candidates (${report.directories} directories, ${report.entries} entries read)`,
      contender: "pinnedfs/confine (native walk, off-thread)",
      ms: discovered.ms,
      cpuMs: discovered.cpuMs
    })
    try {
      await gnuFind(ws)
      const found = await timeRuns(rounds, () => gnuFind(ws))
      rows.push({
        what: `discovery, ${found.last} protected candidates`,
        contender: "GNU find -name .git -prune -print0 (spawned; CPU: find's own)",
        ms: found.ms,
        cpuMs: found.cpuMs
      })
    } catch (e) {
      notes.push(`GNU find not measured: ${e.message}`)
    }
    const delay = await loopDelay(rounds, discoverOnce)
    // The same histogram over the same time with nothing to do: on a shared machine the loop also
    // waits for a CPU, and that part of the delay is the machine's, not discovery's.
    const idle = await loopDelay(rounds, () => new Promise((resolve) => setTimeout(resolve, discovered.ms)))

    const session = new Confinement({ target: { workspace: ws, home: path.join(base, "home"), tempRoot: base } })
    const prepareOnce = async () => {
      const launch = await session.prepare()
      await launch.cleanup()
      return launch.plan.restrictions.length
    }
    await prepareOnce()
    const prepared = await timeRuns(rounds, prepareOnce)
    rows.push({
      what: `launch preparation + cleanup, ${prepared.last} restrictions`,
      contender: "prepare() + cleanup()",
      ms: prepared.ms,
      cpuMs: prepared.cpuMs
    })
    const prepDelay = await loopDelay(Math.max(3, rounds >> 1), prepareOnce)

    // 20,000 protected candidates: nested repositories under one protected tree (a monorepo's
    // vendored dependencies with --protect vendor=read-only). Discovery finds every one; only the
    // tree itself is held and mounted.
    const big = path.join(base, "monorepo")
    for (let i = 0; i < 20_000; i++) fs.mkdirSync(path.join(big, "vendor", `r${i}`, ".git"), { recursive: true })
    fs.mkdirSync(path.join(big, ".git"))
    const monorepo = new Confinement({
      target: { workspace: big, home: path.join(base, "home"), tempRoot: base },
      policy: { protected: [{ glob: "vendor", access: "read-only" }] }
    })
    const bigOnce = async () => {
      const launch = await monorepo.prepare()
      await launch.cleanup()
      return launch.plan.discovery.reduce((n, d) => n + d.matches, 0)
    }
    await bigOnce()
    const bigRun = await timeRuns(quick ? 2 : 5, bigOnce)
    rows.push({
      what: `launch preparation + cleanup, ${bigRun.last} protected candidates under one protected tree`,
      contender: "prepare() + cleanup() (one mount for the tree)",
      ms: bigRun.ms,
      cpuMs: bigRun.cpuMs
    })
    // Discovery is off-thread, but the plan over 20,000 candidates is computed on the loop: its
    // delay says whether that part holds the loop up.
    const bigDelay = await loopDelay(quick ? 2 : 3, bigOnce)
    // Removing 40,000 directories is slow on some file systems; rm -rf at least needs no JavaScript.
    spawnSync("rm", ["-rf", big])

    // A fresh 5-directory state scratch: the two directory programs alone, on a pinned anchor.
    const stateParent = path.join(base, "state")
    fs.mkdirSync(stateParent)
    const anchor = await PinnedRoot.open(stateParent)
    let n = 0
    const scratchOnce = async () => {
      const dir = `helper-${n++}`
      const t0 = native.trips()
      const made = await anchor.mkdirs(
        [dir, `${dir}/tmp`, `${dir}/cache`, `${dir}/config`, `${dir}/data`].map((p) => ({ path: p, mode: 0o700 }))
      )
      const removed = await anchor.rmdirs(made.created.map((c) => ({ path: c.path, identity: c.identity, optional: true })))
      if (made.created.length !== 5 || removed.members.some((m) => m.status !== "removed"))
        throw new Error("state scratch not made and removed whole")
      return native.trips() - t0
    }
    await scratchOnce()
    const scratch = await timeRuns(rounds * 4, scratchOnce)
    rows.push({
      what: "fresh 5-directory state scratch: create + clean up",
      contender: `mkdirs + rmdirs programs (${scratch.last} native trips)`,
      ms: scratch.ms,
      cpuMs: scratch.cpuMs
    })
    anchor.close()

    // The same scratch as a launch's state roots, through the whole preparation (an empty workspace).
    const small = path.join(base, "small")
    fs.mkdirSync(small)
    const helper = new Confinement({
      target: {
        workspace: small,
        home: path.join(base, "home"),
        tempRoot: base,
        state: ["", "/tmp", "/cache", "/config", "/data"].map((s) => ({ path: path.join(stateParent, "launch") + s }))
      },
      policy: { defaults: false }
    })
    const helperOnce = async () => {
      const t0 = native.trips()
      const launch = await helper.prepare()
      await launch.cleanup()
      if (fs.existsSync(path.join(stateParent, "launch"))) throw new Error("state scratch left behind")
      return native.trips() - t0
    }
    await helperOnce()
    const helperRun = await timeRuns(rounds * 2, helperOnce)
    rows.push({
      what: "fresh 5-directory state scratch: whole launch preparation + cleanup",
      contender: `prepare() + cleanup() (${helperRun.last} native trips: the prepare and cleanup programs)`,
      ms: helperRun.ms,
      cpuMs: helperRun.cpuMs
    })

    const lines = []
    const load = os.loadavg()[0].toFixed(1)
    lines.push(
      `Confinement preparation (checkout: ${candidates} repositories; medians of ${rounds} runs; load average ${load} on ${os.cpus().length} CPUs):`
    )
    lines.push("")
    lines.push("| measurement | contender | median wall ms | median CPU ms |")
    lines.push("|---|---|---:|---:|")
    for (const r of rows) lines.push(`| ${r.what} | ${r.contender} | ${r.ms.toFixed(2)} | ${r.cpuMs.toFixed(2)} |`)
    lines.push("")
    const js = (d) =>
      `loop active ${d.activeMsPerRun.toFixed(2)} ms${d.threadCpuMsPerRun === null ? "" : `, JavaScript-thread CPU ${d.threadCpuMsPerRun.toFixed(2)} ms`} per run` +
      (d.longestTurnMs === null ? "" : `, longest turn ${d.longestTurnMs.toFixed(2)} ms of JavaScript-thread CPU`)
    lines.push(
      `Event loop while discovery runs: delay max ${delay.max.toFixed(2)} ms, p99 ${delay.p99.toFixed(2)} ms; ${js(delay)}. ` +
        `While whole preparations run: delay max ${prepDelay.max.toFixed(2)} ms, p99 ${prepDelay.p99.toFixed(2)} ms; ${js(prepDelay)}. ` +
        `While preparations over ${bigRun.last} candidates run: delay max ${bigDelay.max.toFixed(2)} ms, p99 ${bigDelay.p99.toFixed(2)} ms; ${js(bigDelay)}. ` +
        `An idle loop over the same time as the discovery runs (the machine's own delay): max ${idle.max.toFixed(2)} ms, p99 ${idle.p99.toFixed(2)} ms.`
    )
    for (const n of notes) lines.push(`- ${n}`)
    return { lines, rows, eventLoop: { discovery: delay, preparation: prepDelay, large: bigDelay, idle }, notes }
  } finally {
    fs.rmSync(base, { recursive: true, force: true })
  }
}
