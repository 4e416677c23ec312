/**
 * A bounded attacker for race tests in round form: the native attacker of the race suite
 * (test/race/attacker.c) exchanges name pairs with renameat2(RENAME_EXCHANGE) while one round of
 * the program under test runs, and is parked (every pair put back) between rounds, so each round
 * starts from a tree the test rebuilt and ends in a tree the test can inspect.
 *
 * Exchanges are atomic (no name is ever missing, as it would be between two plain renames), and
 * the attacker counts only the exchanges the kernel did while a round ran: a failed exchange (the
 * program removed one side) is counted apart, and the exchanges that park makes are not counted.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { buildAttacker, startAttacker } from "../../scripts/race/run.mjs"

export interface RaceRounds<A> {
  /** Rounds run. */
  readonly rounds: number
  /** Exchanges the kernel did while the rounds ran. */
  readonly swaps: number
  /** Exchanges the kernel refused while the rounds ran. */
  readonly failures: number
  /** What `inspect` made of each round, in order. */
  readonly answers: ReadonlyArray<A>
}

/**
 * Runs `round` until `maxRounds` or `maxMs`, whichever comes first, with the attacker exchanging
 * `pairs` meanwhile. Before each round, with the pairs at home and the attacker parked, `reset`
 * rebuilds the tree; after it, still parked, `inspect` turns the round's result into an answer.
 * `until`, when given, ends the rounds at the first answer it accepts: a control that only has to
 * show the attack is live stops at its first escape, and on a loaded machine (where the attacker
 * wakes late after a resume and most rounds miss the window) it may use a long bound for that.
 */
export const raceRounds = async <R, A>(options: {
  readonly pairs: ReadonlyArray<readonly [string, string]>
  readonly maxRounds: number
  readonly maxMs: number
  readonly reset: () => void
  readonly round: () => Promise<R>
  readonly inspect: (result: R) => A
  readonly until?: (answer: A) => boolean
}): Promise<RaceRounds<A>> => {
  options.reset()
  const attacker = startAttacker(buildAttacker(), options.pairs)
  const answers: Array<A> = []
  try {
    let timer: NodeJS.Timeout | undefined
    await Promise.race([
      attacker.started,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("the attacker made no exchange in 10 s")), 10_000)
      })
    ]).finally(() => clearTimeout(timer))
    const first = await attacker.park()
    const deadline = Date.now() + options.maxMs
    while (answers.length < options.maxRounds && Date.now() < deadline) {
      options.reset()
      attacker.resume()
      const result = await options.round()
      await attacker.park()
      const answer = options.inspect(result)
      answers.push(answer)
      if (options.until?.(answer) === true) break
    }
    const last = await attacker.park()
    return { rounds: answers.length, swaps: last.swaps - first.swaps, failures: last.failures - first.failures, answers }
  } finally {
    await attacker.stop()
  }
}

/** How often each answer came, for assertions and messages. */
export const tally = (answers: ReadonlyArray<string>): Record<string, number> => {
  const out: Record<string, number> = {}
  for (const a of answers) out[a] = (out[a] ?? 0) + 1
  return out
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
