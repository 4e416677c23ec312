// Timing: warm-up first, then rounds, medians. Ops/s counts individual file operations (a batch of
// 256 reads counts 256).
import { monitorEventLoopDelay } from "node:perf_hooks"

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b)
  const m = s.length >> 1
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2
}

/**
 * Runs `unit` (an async function doing `opsPerUnit` operations) repeatedly: a warm-up, then
 * `rounds` rounds each at least `minMs` long, and answers the median ops/s and the median CPU time
 * per operation in microseconds (process.cpuUsage: every thread of the process, the JS thread and
 * libuv's pool alike; steadier than wall time on a shared machine).
 */
export const measure = async (unit, options = {}) => {
  const [only] = await measureSideBySide([{ unit, before: options.before }], options)
  if (only.error) throw only.error
  return only
}

/**
 * `measure` for several contenders of one scenario at once, their rounds interleaved (round 1 of
 * each, then round 2 of each, ...), so a neighbour's burst on a shared machine falls on all of them
 * alike rather than on whichever ran at that moment. Answers one `{ opsPerSec, cpuUsPerOp }` or
 * `{ error }` per entry, in order; a contender that throws is dropped from later rounds.
 */
export const measureSideBySide = async (entries, { opsPerUnit = 1, rounds = 5, minMs = 200, warmupMs = 100 } = {}) => {
  const runFor = async ({ unit, before }, ms) => (before ? runForEach({ unit, before }, ms) : runForRound(unit, ms))
  // Without a `before`, CPU time is read once around the whole round: reading it around each unit
  // (a getrusage each side) cost about as much as a 2 µs unit itself, and added that to every
  // contender's CPU time per operation alike, which pulled every ratio towards 1.
  const runForRound = async (unit, ms) => {
    let units = 0
    const c0 = process.cpuUsage()
    const t0 = process.hrtime.bigint()
    let elapsed = 0
    while (elapsed < ms || units === 0) {
      await unit()
      units++
      elapsed = Number(process.hrtime.bigint() - t0) / 1e6
    }
    const c = process.cpuUsage(c0)
    return { rate: (units * opsPerUnit) / (elapsed / 1000), cpu: (c.user + c.system) / (units * opsPerUnit) }
  }
  const runForEach = async ({ unit, before }, ms) => {
    let units = 0
    let elapsed = 0
    let cpu = 0
    while (elapsed < ms || units === 0) {
      if (before) await before()
      const c0 = process.cpuUsage()
      const t0 = process.hrtime.bigint()
      await unit()
      elapsed += Number(process.hrtime.bigint() - t0) / 1e6
      const c = process.cpuUsage(c0)
      cpu += c.user + c.system
      units++
    }
    return { rate: (units * opsPerUnit) / (elapsed / 1000), cpu: cpu / (units * opsPerUnit) }
  }
  const state = entries.map(() => ({ rates: [], cpus: [], error: undefined }))
  const each = async (f) => {
    for (let i = 0; i < entries.length; i++) {
      if (state[i].error) continue
      try {
        await f(entries[i], state[i])
      } catch (e) {
        state[i].error = e
      }
    }
  }
  await each((entry) => runFor(entry, warmupMs))
  for (let r = 0; r < rounds; r++) {
    await each(async (entry, st) => {
      const x = await runFor(entry, minMs)
      st.rates.push(x.rate)
      st.cpus.push(x.cpu)
    })
  }
  return state.map((st) => (st.error ? { error: st.error } : { opsPerSec: median(st.rates), cpuUsPerOp: median(st.cpus) }))
}

/**
 * Event-loop delay (ms, p50 and p99) while `flood` runs. Where Node can tell a thread's own CPU
 * time (process.threadCpuUsage, Node 23.9 and later) also the JavaScript thread's CPU time per turn
 * of the loop (p99, max): unlike the delay, it leaves out time the thread spent preempted by other
 * processes, so on a shared machine it shows what the flood itself costs a turn.
 */
export const eventLoopDelay = async (flood) => {
  const h = monitorEventLoopDelay({ resolution: 1 })
  const threadCpu =
    typeof process.threadCpuUsage === "function"
      ? () => {
          const u = process.threadCpuUsage()
          return (u.user + u.system) / 1000
        }
      : undefined
  const turns = []
  let running = threadCpu !== undefined
  let last = threadCpu?.()
  const turn = () => {
    const now = threadCpu()
    turns.push(now - last)
    last = now
    if (running) setImmediate(turn)
  }
  if (running) setImmediate(turn)
  h.enable()
  await flood()
  h.disable()
  running = false
  turns.sort((a, b) => a - b)
  const cpu = turns.length
    ? { turnCpuP99: turns[Math.min(turns.length - 1, Math.floor(0.99 * turns.length))], turnCpuMax: turns[turns.length - 1] }
    : {}
  return { p50: h.percentile(50) / 1e6, p99: h.percentile(99) / 1e6, max: h.max / 1e6, ...cpu }
}

/**
 * Runs operations with `concurrency` in flight until at least `count` were started and `ms` have
 * passed since the first, whichever comes later; answers how many ran. A flood measured by a fixed
 * count lasts as long as its contender is slow: the fastest one's event-loop histogram then holds
 * a few dozen samples, and its p99 is its worst turn.
 */
export const poolFor = async (count, ms, concurrency, op) => {
  const until = performance.now() + ms
  let next = 0
  const lane = async () => {
    while (next < count || performance.now() < until) {
      const i = next++
      await op(i)
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
  return next
}

/** Runs `count` operations with at most `concurrency` in flight. */
export const pool = async (count, concurrency, op) => {
  let next = 0
  const lane = async () => {
    while (next < count) {
      const i = next++
      await op(i)
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane))
}
