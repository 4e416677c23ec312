/**
 * The addon from worker threads: each environment loads its own instance, pins its own roots,
 * works, and exits; whatever it leaves open is closed by the environment's teardown. The process
 * (whose descriptor table the threads share) must come back to the descriptors it had before.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Worker } from "node:worker_threads"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"
import { openDescriptorCount } from "../support/tree.ts"
import { rootIdentityOf, workspace } from "./support.ts"

const here = path.dirname(fileURLToPath(import.meta.url))
const packageRoot = path.resolve(here, "..", "..")
const script = path.join(here, "fixtures", "worker.mjs")
const effectScript = path.join(here, "fixtures", "effectWorker.mjs")

let transpiled = ""
const transpile = (): void => {
  transpiled = transpileSources("effect")
}

interface Answer {
  readonly identity: string
  readonly strategy: string
  readonly answers: ReadonlyArray<unknown>
}

/** Waits for `worker` to exit, answering the last message it posted. */
const answerOf = <T>(worker: Worker): Promise<T> =>
  new Promise((resolve, reject) => {
    let answer: T | undefined
    worker.on("message", (m: T) => {
      answer = m
    })
    worker.on("error", reject)
    worker.on("exit", (code) => {
      if (code !== 0) reject(new Error(`worker exited with ${code}`))
      else if (answer === undefined) reject(new Error("worker exited without answering"))
      else resolve(answer)
    })
  })

/** Runs one worker to its exit, answering what it posted. */
const runWorker = (data: Record<string, unknown>): Promise<Answer> => answerOf(new Worker(script, { workerData: { packageRoot, ...data } }))

describe.each(strategies)("addon from worker threads (%s)", (strategy) => {
  const expectedRound = ["top", true, "ENOENT", "escape", "true,true"]

  it.each(["close", "leave", "hang"])("four workers at once, each pinning, working and exiting (%s)", async (mode) => {
    const w = workspace({ "top.txt": "top", "a/b/file.txt": "hello" })
    // Warm up what a first worker would otherwise open once for the whole process.
    await runWorker({ root: w.boundaryRoot, strategy, rounds: 1, mode: "close" })
    const baseline = openDescriptorCount()
    const rounds = 25
    const answers = await Promise.all(Array.from({ length: 4 }, () => runWorker({ root: w.boundaryRoot, strategy, rounds, mode })))
    for (const a of answers) {
      expect(a.identity).toBe(rootIdentityOf(w.boundaryRoot))
      expect(a.strategy).toBe(strategy)
      expect(a.answers).toEqual(Array.from({ length: rounds }, () => expectedRound).flat())
    }
    expect(openDescriptorCount()).toBe(baseline)
    expect(fs.readFileSync(w.s.secret, "utf8")).toBe("TOP SECRET")
  })
})

// Loading Effect in a worker is the slow part, and module state does not depend on the strategy:
// one run, with the strategy this machine picks.
describe("the Effect extension from worker threads", () => {
  const strategy = "auto"
  beforeAll(transpile)
  afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

  const runEffectWorker = (data: Record<string, unknown>): Promise<{ answers: Array<unknown> }> =>
    answerOf(new Worker(effectScript, { workerData: data }))

  it.each([true, false])(
    "four workers, each with its own extension (close: %s)",
    async (close) => {
      const w = workspace({ "top.txt": "top" })
      // One level below the package root, as dist/ is.
      const module = path.join(transpiled, "effect", "index.js")
      const data = { module, strategy, roots: w.roots, rounds: 10, close }
      await runEffectWorker({ ...data, rounds: 1 })
      const baseline = openDescriptorCount()
      const answers = await Promise.all(Array.from({ length: 4 }, () => runEffectWorker(data)))
      for (const a of answers) {
        expect(a.answers).toEqual(Array.from({ length: 10 }, () => ["top", "PermissionDenied", "Success,Success"]).flat())
      }
      expect(openDescriptorCount()).toBe(baseline)
    },
    120_000
  ) // five workers each loading Effect: seconds on a shared machine
})
