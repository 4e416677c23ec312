/**
 * The addon in worker threads: 8 workers at a time load it, pin roots, work, and exit, for 10
 * rounds. Half are terminated with `worker.terminate()` while operations are in flight, half end on
 * their own with their roots still open. No crash, and afterwards this process holds exactly the
 * descriptors it held before: each environment's teardown dropped its roots.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { afterAll, expect, it } from "vitest"
import { openDescriptorCount } from "../support/tree.ts"

const script = new URL("./worker.mjs", import.meta.url)
const rounds = 10
const perRound = 8

const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-workers-"))
afterAll(() => fs.rmSync(base, { recursive: true, force: true }))

const tree = () => {
  const root = path.join(base, "root")
  const outside = path.join(base, "outside")
  fs.mkdirSync(path.join(root, "dir", "sub"), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, "secret.txt"), "TOP SECRET")
  fs.writeFileSync(path.join(root, "file.txt"), "hello")
  for (let i = 0; i < 200; i++) fs.writeFileSync(path.join(root, "dir", "sub", `f${i}.txt`), "x")
  fs.writeFileSync(path.join(root, "dir", "sub", "deep.txt"), "deep")
  fs.symlinkSync(outside, path.join(root, "out"))
  return { root, outside }
}

/** Runs one worker to its end; resolves with its exit code. */
const life = (root: string, id: number, terminate: boolean): Promise<number> =>
  new Promise((resolve, reject) => {
    const w = new Worker(script, { workerData: { root, id, endless: terminate } })
    w.on("error", reject)
    w.on("exit", resolve)
    w.on("message", () => {
      if (terminate) void w.terminate()
    })
  })

it("leaks no root handle across worker lifetimes", async () => {
  const { root, outside } = tree()
  // Load the addon here too, so its own one-time descriptors are in the baseline.
  const { native } = await import("../../src/internal/native.ts")
  expect(typeof native.pin).toBe("function")
  const before = openDescriptorCount()
  const codes: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const lives = Array.from({ length: perRound }, (_, i) => life(root, round * perRound + i, i % 2 === 0))
    codes.push(...(await Promise.all(lives)))
  }
  const after = openDescriptorCount()
  console.log(`workers: ${rounds} rounds x ${perRound}, descriptors ${before} before, ${after} after; exit codes ${[...new Set(codes)].join(",")}`)
  // terminate() ends a worker with exit code 1; one that ends on its own exits 0.
  expect(codes.filter((c) => c === 1)).toHaveLength((rounds * perRound) / 2)
  expect(codes.filter((c) => c === 0)).toHaveLength((rounds * perRound) / 2)
  expect(after).toBe(before)
  expect(fs.readdirSync(outside)).toEqual(["secret.txt"])
}, 120_000)
