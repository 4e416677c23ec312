/**
 * The addon in worker threads: 8 workers at a time load it, pin roots, work, and exit, for 10
 * rounds. Half are terminated with `worker.terminate()` while operations are in flight, half end on
 * their own with their roots still open. No crash (the rounds run in a child process, so a crash
 * fails this test), and afterwards that process holds exactly the descriptors it held before: each
 * environment's teardown dropped its roots.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const child = fileURLToPath(new URL("./workers.child.mjs", import.meta.url))
const rounds = 10

it("leaks no root handle and never crashes across worker lifetimes", () => {
  const out = spawnSync(process.execPath, [child, String(rounds)], { encoding: "utf8", timeout: 240_000 })
  const line = out.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`workers: ${line}`)
  expect(out.signal, `child killed by ${out.signal}; stderr:\n${out.stderr}`).toBeNull()
  expect(out.status, out.stderr).toBe(0)
  const m = JSON.parse(line) as { terminated: number; ended: number; fdBefore: number; fdAfter: number; secretIntact: boolean }
  // terminate() ends a worker with exit code 1; one that ends on its own exits 0.
  expect(m.terminated).toBe(rounds * 4)
  expect(m.ended).toBe(rounds * 4)
  expect(m.fdAfter).toBe(m.fdBefore)
  expect(m.secretIntact).toBe(true)
}, 250_000)
