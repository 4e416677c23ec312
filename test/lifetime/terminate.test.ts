/**
 * worker.terminate() on workers that are calling into the addon in a tight loop (readFile, stat,
 * readDirectory, refusals, batch, readMany, many in flight): rounds of six workers, each
 * terminated at a random moment up to 20 ms into its loop, on every Node line this machine has
 * (the running one, and /opt/node22, /opt/node24 where present). The process must never die, on
 * any line: a terminated environment stops running JavaScript at any instant, and every completion,
 * error or promise settled after that must bail out quietly (native/binding: `Out`, `PromiseJob`).
 * `npm test` runs 40 rounds, which catch a 1-in-40 crash with probability 1 - (39/40)^40 = 64 %;
 * CI's pass on each further Node line runs 200 (PINNEDFS_TERMINATE_ROUNDS), over 99 % each, so a
 * CI run's three lines miss such a crash with a probability under 1 in 10,000. Most of
 * a round's cost is Node starting six workers. The rounds run in child processes, so a crash is
 * counted here, not suffered by the runner.
 *
 * The second group aims at the instant the loop above hits only by chance: terminate() lands while
 * the addon is still reading a call's arguments. The parent thread flips the worker's environment
 * to "stopping" from outside, so between two reads of the same array its length read fails
 * (node-addon-api reports 0); batch() once sized one vector by one read and another by the next,
 * and walked both by the first: an empty vector indexed (SIGSEGV, seen about once in 200 rounds of
 * the loop above on Node 22 and 24). native/binding/args.cc `length_of` reads each length once.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
// @ts-expect-error: a plain ES module shared with the command line, typed by its use here.
import { runRounds } from "./terminate.rounds.mjs"
import { skipUnless } from "../support/skip.ts"

const rounds = Number(process.env.PINNEDFS_TERMINATE_ROUNDS ?? 40)
const midCallRounds = Number(process.env.PINNEDFS_MIDCALL_ROUNDS ?? 20)
const midCall = fileURLToPath(new URL("./mid-call.child.mjs", import.meta.url))
const nodes = [
  { line: `running (${process.version})`, path: process.execPath },
  // .ci/run names the Node binaries it fetched from the registry; a development machine has /opt's.
  { line: "22", path: process.env["PINNEDFS_TEST_NODE22"] ?? "/opt/node22/package/bin/node" },
  { line: "24", path: process.env["PINNEDFS_TEST_NODE24"] ?? "/opt/node24/package/bin/node" }
]

interface Figures {
  readonly rounds: number
  readonly crashes: number
  readonly signals: Record<string, number>
  readonly fatal: number
  readonly workers: number
  readonly looping: number
  readonly codes: ReadonlyArray<number>
  readonly seconds: number
}

describe("workers terminated while looping over the addon", () => {
  for (const node of nodes) {
    const present = fs.existsSync(node.path)
    it(`never kills the process (Node ${node.line}, ${rounds} rounds)`, (ctx) => {
      skipUnless(ctx, present, `no Node ${node.line} binary at ${node.path}`)
      const f = runRounds(node.path, rounds, { chunk: 50, seed: 1 }) as Figures
      console.log(`terminate rounds, Node ${node.line}: ${JSON.stringify(f)}`)
      expect(f.crashes, JSON.stringify(f.signals)).toBe(0)
      expect(f.rounds).toBe(rounds)
      // The attack was live: every worker had said it was looping before it was terminated, and
      // each ended by terminate() (exit code 1), none on its own.
      expect(f.workers).toBe(rounds * 6)
      expect(f.looping).toBe(rounds * 6)
      expect(f.codes).toEqual([1])
    }, 1_800_000)
  }
})

describe("workers terminated inside a long call, while its arguments are read", () => {
  for (const node of nodes) {
    const present = fs.existsSync(node.path)
    it(`never kills the process (Node ${node.line}, ${midCallRounds} rounds)`, (ctx) => {
      skipUnless(ctx, present, `no Node ${node.line} binary at ${node.path}`)
      const out = spawnSync(node.path, [midCall, String(midCallRounds), "200000", "1"], {
        encoding: "utf8",
        timeout: 600_000
      })
      const summary = out.stdout.trim().split("\n").at(-1) ?? ""
      console.log(`mid-call rounds, Node ${node.line}: ${summary}`)
      expect(out.signal, `child killed by ${out.signal}; stderr:\n${out.stderr}`).toBeNull()
      expect(out.status, out.stderr).toBe(0)
      const m = JSON.parse(summary) as { rounds: number; signalled: number; codes: number[]; secretIntact: boolean }
      // Live: every worker had said it was calling before it was terminated, and each ended by
      // terminate() (exit code 1).
      expect(m.rounds).toBe(midCallRounds)
      expect(m.signalled).toBe(midCallRounds)
      expect(m.codes).toEqual([1])
      expect(m.secretIntact).toBe(true)
    }, 660_000)
  }
})
