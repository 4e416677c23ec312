// One cell of the race matrix: one target, one attack, one operation, run a bounded number of
// times (iterations AND seconds) while the attacker swaps, counting escapes and judging answers.
//
// An escape is either a successful answer carrying the canary (its token, a canary-only name, a
// canary inode) or a change to the canary tree (content, modes, owners, entries). The canary is
// checked after every try of an operation that writes, and at the end of every phase.
//
// A cell may first run a control (the path-based executor, through naive.mjs) in the same arena, under
// the same attacker and the same detectors, until its first escape. If the race does not catch it
// within its bound, the harness forces the exposure: with the attacker parked, it makes one
// exchange from inside the control's check-then-use window. Either way the control must escape,
// or the cell has shown nothing about the target.
import { attacks, leaks, makeArena } from "./arena.mjs"
import { buildAttacker, buildHelper, startAttacker } from "./attacker.mjs"
import { outcomeOf, refusalsFor } from "./ops.mjs"

export { attacks, buildAttacker, buildHelper, leaks, makeArena, startAttacker }
export { raceOps, refusalsFor, refusalsUnder } from "./ops.mjs"
export { openPathBased } from "./naive.mjs"

const emptyPhase = () => ({
  tried: 0,
  swaps: 0,
  failures: 0,
  escapes: 0,
  leaked: 0,
  canaryChanged: 0,
  unexpected: 0,
  refused: 0,
  outcomes: {},
  examples: [],
  unexpectedExamples: []
})

/**
 * @param {{ attackerBin: string, open: (root: string) => Promise<any>, attack: string,
 *   op: import("./ops.mjs").RaceOp, iterations: number, seconds: number,
 *   untilEscape?: boolean, untilRefused?: number, parent?: string,
 *   control?: { open: (root: string, window: () => Promise<void>) => any, iterations: number, seconds: number } }} options
 * iterations, seconds: the tries planned and the time allowed; whichever ends first ends the phase.
 * untilEscape: stop at the first escape.
 * untilRefused: when the planned tries are done before the attack caused a single refusal, go on
 *   (at most this many times the tries planned, and never past `seconds`) until it has.
 * parent: where the arena is made (default os.tmpdir()).
 * control: run first, as described above; its figures come back as `control`.
 */
export const runCell = async ({
  attackerBin,
  open,
  attack,
  op,
  iterations,
  seconds,
  untilEscape = false,
  untilRefused = 1,
  parent,
  control
}) => {
  const arena = makeArena(parent)
  const attacker = startAttacker(attackerBin, attacks[attack](arena))
  const leak = op.leak ?? leaks
  const refusals = refusalsFor(op, attack)
  let truth
  let ctx

  // Rebuilds the inside with the attacker parked, so nothing is written through a swapped name.
  const rebuild = async () => {
    const parked = await attacker.park()
    arena.restore()
    truth = arena.truth()
    ctx = op.prepare?.(arena)
    return parked
  }

  const attempt = async (r, target, checkCanary) => {
    const note = (what) => {
      r.escapes++
      if (r.examples.length < 3) r.examples.push(what)
    }
    const odd = (what) => {
      r.unexpected++
      if (r.unexpectedExamples.length < 3) r.unexpectedExamples.push(what)
    }
    let outcome
    try {
      const value = await op.run(target, attack, ctx)
      const leaked = leak(arena, value)
      if (leaked) {
        r.leaked++
        note(`${op.name} answered canary data: ${describe(value)}`)
      }
      outcome = op.outcome ? op.outcome(value) : "ok"
      const wrong = leaked ? null : op.right(value, truth, attack)
      if (wrong !== null) odd(`${op.name} answered wrong: ${wrong}`)
      else if (outcome !== "ok" && !refusals.includes(outcome)) odd(`${op.name} reported ${outcome}: ${describe(value)}`)
    } catch (e) {
      outcome = outcomeOf(e)
      if (!refusals.includes(outcome)) odd(`${op.name} failed with ${outcome}: ${e?.message ?? describe(e)}`)
    }
    r.tried++
    if (refusals.includes(outcome)) r.refused++
    r.outcomes[outcome] = (r.outcomes[outcome] ?? 0) + 1
    if (checkCanary && arena.canaryChanged()) {
      r.canaryChanged++
      note(`${op.name} changed the canary tree (outcome ${outcome})`)
      await attacker.park()
      arena.resetCanary()
      truth = arena.truth()
      return true
    }
    return false
  }

  // Tries the operation while the attacker runs; the swaps counted are this phase's alone.
  const phase = async (target, { iterations, seconds, untilEscape, untilRefused = 1 }) => {
    const r = emptyPhase()
    const before = await rebuild()
    attacker.resume()
    const deadline = Date.now() + seconds * 1000
    const planned = (i) => i < iterations || (r.refused === 0 && i < iterations * untilRefused)
    for (let i = 0; planned(i) && Date.now() < deadline && !(untilEscape && r.escapes > 0); i++) {
      if (i > 0 && (op.mutates || i % 256 === 0)) {
        await rebuild()
        attacker.resume()
      }
      if (await attempt(r, target, op.writes === true)) attacker.resume()
      // An operation that has not landed answers ENOSYS every time: nothing to race.
      if (r.tried >= 3 && r.outcomes.ENOSYS === r.tried) break
    }
    const after = await attacker.park()
    r.swaps = after.swaps - before.swaps
    r.failures = after.failures - before.failures
    if (arena.canaryChanged()) {
      r.canaryChanged++
      r.escapes++
      if (r.examples.length < 3) r.examples.push(`${op.name}: canary tree changed by the end of the phase`)
      arena.resetCanary()
    }
    return r
  }

  let result
  const targets = []
  try {
    let timer
    await Promise.race([
      attacker.started,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the ${attack} attacker made no swap in 10 s`)), 10_000)
      })
    ]).finally(() => clearTimeout(timer))

    let controlResult
    if (control) {
      let armed = false
      const window = async () => {
        if (!armed) return
        armed = false
        if (!(await attacker.exchange())) throw new Error("the forced exchange failed")
      }
      const controlTarget = await control.open(arena.root, window)
      targets.push(controlTarget)
      // quiet, forcedEscapes and forcedOutcomes are set only when the window had to be forced.
      controlResult = {
        ...(await phase(controlTarget, { ...control, untilEscape: true })),
        forced: false,
        quiet: undefined,
        forcedEscapes: undefined,
        forcedOutcomes: undefined
      }
      if (controlResult.escapes === 0) {
        // The race did not find the window in time: open it. One try with the attacker parked and
        // the window left shut, which must come out clean (the detectors do not fire on a right
        // answer); then one try with the exchange made from inside the window, which must not.
        controlResult.forced = true
        await rebuild()
        const quiet = emptyPhase()
        await attempt(quiet, controlTarget, true)
        controlResult.quiet = {
          escapes: quiet.escapes,
          unexpected: quiet.unexpected,
          outcomes: quiet.outcomes,
          examples: [...quiet.examples, ...quiet.unexpectedExamples]
        }
        await rebuild()
        armed = true
        const forced = emptyPhase()
        await attempt(forced, controlTarget, true)
        armed = false
        await attacker.park()
        controlResult.forcedEscapes = forced.escapes
        controlResult.forcedOutcomes = forced.outcomes
        controlResult.examples.push(...forced.examples)
        if (arena.canaryChanged()) arena.resetCanary()
      }
    }

    const target = await open(arena.root)
    targets.push(target)
    result = await phase(target, { iterations, seconds, untilEscape, untilRefused })
    if (controlResult) result.control = controlResult
  } finally {
    await attacker.stop()
    for (const t of targets) await t.close?.()
    arena.dispose()
  }
  return result
}

const describe = (v) => {
  const s = (() => {
    try {
      return JSON.stringify(v, (_k, x) => (typeof x === "bigint" ? `${x}n` : x?.type === "Buffer" ? Buffer.from(x.data).toString() : x))
    } catch {
      return String(v)
    }
  })()
  return s.length > 160 ? `${s.slice(0, 160)}...` : s
}
