/**
 * Hostile input against the addon's other entries (`readMany`, `call`, `identify`, `trips`,
 * `close`): wrong shapes, members behind getters that throw, close the handle, detach the typed
 * arrays already handed over or grow the paths array, wrong receivers, a closed handle. Each call
 * must hand back a promise that settles with a value or a native error; descriptors come back to
 * their baseline; the outside is untouched. In a child process: a crash in the marshalling code
 * (readMany once segfaulted on a member getter that closed the handle) fails this test instead of
 * killing the runner.
 */
import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { expect, it } from "vitest"

const child = fileURLToPath(new URL("./native-entries.child.mjs", import.meta.url))
const seed = Number(process.env.PINNEDFS_SEED ?? 20261130)
const numRuns = Number(process.env.PINNEDFS_RUNS ?? 300)

it("readMany, call and identify survive arbitrary arguments", () => {
  const out = spawnSync(process.execPath, ["--expose-gc", child, String(seed), String(numRuns)], {
    encoding: "utf8",
    timeout: 120_000
  })
  const summary = out.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`native-entries property: ${summary}`)
  expect(out.signal, `child killed by ${out.signal}; stderr:\n${out.stderr}`).toBeNull()
  expect(out.status, out.stderr).toBe(0)
  const figures = JSON.parse(summary) as {
    readMany: number
    call: number
    resolved: number
    memberErrors: number
    badArgument: number
    fdBase: number
    fdAfter: number
  }
  expect(figures.fdAfter).toBe(figures.fdBase)
  // The generators reached the runs, not only the easy rejections.
  expect(figures.readMany).toBe(numRuns)
  expect(figures.call).toBeGreaterThan(0)
  expect(figures.resolved).toBeGreaterThan(numRuns / 4)
  expect(figures.memberErrors).toBeGreaterThan(0)
  expect(figures.badArgument).toBeGreaterThan(0)
}, 150_000)
