// One cell of the race matrix: one target, one attack, one operation, run a bounded number of
// times (iterations AND seconds) while the attacker swaps, counting escapes.
//
// An escape is either a successful answer carrying the canary (its token, a canary-only name, a
// canary inode) or a change to the canary tree (content, modes, owners, entries). The canary is
// checked after every try of an operation that writes, and at the end of every cell.
import { attacks, leaks, makeArena } from "./arena.mjs"
import { buildAttacker, buildHelper, startAttacker } from "./attacker.mjs"

export { attacks, buildAttacker, buildHelper, leaks, makeArena }
export { raceOps } from "./ops.mjs"
export { openNaive } from "./naive.mjs"

/** How an operation ended, in one short word: "ok", a refusal kind, or an error code/reason. */
const outcomeOf = (e) => {
  if (e && typeof e === "object") {
    if (typeof e.refusal === "string" && e.refusal !== "") return e.refusal
    if (typeof e.code === "string" && e.code !== "") return e.code
    if (typeof e.reason === "string") return e.reason
    // Effect's PlatformError: the reason is a tagged SystemError or BadArgument.
    if (typeof e.reason?._tag === "string") return e.reason.description?.includes("symbolic link") ? "symlink" : e.reason._tag
    if (typeof e._tag === "string") return e._tag
  }
  return "thrown"
}

/**
 * @param {{ attackerBin: string, open: (root: string) => Promise<any>, attack: string,
 *   op: import("./ops.mjs").RaceOp, iterations: number, seconds: number,
 *   untilEscape?: boolean, parent?: string }} options
 * untilEscape: stop at the first escape (the harness's own self-test against a target that has them).
 * parent: where the arena is made (default os.tmpdir()).
 */
export const runCell = async ({ attackerBin, open, attack, op, iterations, seconds, untilEscape = false, parent }) => {
  const arena = makeArena(parent)
  const result = { tried: 0, swaps: 0, escapes: 0, leaked: 0, canaryChanged: 0, outcomes: {}, examples: [] }
  const note = (what) => {
    result.escapes++
    if (result.examples.length < 3) result.examples.push(what)
  }
  const target = await open(arena.root)
  const attacker = startAttacker(attackerBin, attacks[attack](arena))
  const leak = op.leak ?? leaks
  // Rebuilt (with the attacker parked) before every try of a shape-changing operation, and now and
  // then for the others so appends and the like stay small on long runs.
  try {
    let timer
    await Promise.race([
      attacker.started,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the ${attack} attacker made no swap in 10 s`)), 10_000)
      })
    ]).finally(() => clearTimeout(timer))
    const deadline = Date.now() + seconds * 1000
    for (let i = 0; i < iterations && Date.now() < deadline && !(untilEscape && result.escapes > 0); i++) {
      let ctx
      if (op.mutates || (i > 0 && i % 256 === 0)) {
        await attacker.park()
        arena.restore()
        ctx = op.prepare?.(arena)
        attacker.resume()
      } else if (i === 0) {
        ctx = op.prepare?.(arena)
      }
      let outcome = "ok"
      try {
        const value = await op.run(target, attack, ctx)
        if (leak(arena, value)) {
          result.leaked++
          note(`${op.name} answered canary data: ${describe(value)}`)
        }
      } catch (e) {
        outcome = outcomeOf(e)
      }
      result.tried++
      result.outcomes[outcome] = (result.outcomes[outcome] ?? 0) + 1
      // An operation that has not landed answers ENOSYS every time: nothing to race.
      if (result.tried >= 3 && result.outcomes.ENOSYS === result.tried) break
      if (op.writes && arena.canaryChanged()) {
        result.canaryChanged++
        note(`${op.name} changed the canary tree (outcome ${outcome})`)
        await attacker.park()
        arena.resetCanary()
        attacker.resume()
      }
    }
  } finally {
    const stopped = await attacker.stop()
    result.swaps = stopped.swaps
    if (arena.canaryChanged()) {
      result.canaryChanged++
      note(`${op.name}: canary tree changed by the end of the cell`)
    }
    await target.close?.()
    arena.dispose()
  }
  return result
}

const describe = (v) => {
  const s = (() => {
    try {
      return JSON.stringify(v, (_k, x) =>
        typeof x === "bigint" ? `${x}n` : x?.type === "Buffer" ? Buffer.from(x.data).toString() : x
      )
    } catch {
      return String(v)
    }
  })()
  return s.length > 160 ? `${s.slice(0, 160)}...` : s
}
