/**
 * A directory moved out of the allowed directory while a call works in it, by the race suite's
 * inotify mover (test/race/mover.c): it waits for the call's own system call in the directory, then
 * renames the directory (or its parent) outside and moves an outside file into the departed tree.
 * Through `pinnedfs mcp`, under each strategy:
 * - write_file of 8 MiB: the file is never published in the departed directory (outside). The
 *   server runs with --sync here, so that the fsync holds the write long enough for the mover's
 *   rename to land before the publish; without it the write can finish, inside, before the mover
 *   acts, and the mover then carries the published file out with the directory (the publish is
 *   proven beneath the root the same way either way: write_atomic.cc's publish);
 * - directory_tree and search_files: the planted outside file is never listed.
 * The reference holds no descriptor across its steps, so a move-out only makes its next path miss;
 * these cells are pinnedfs's own, with the attack shown live (the mover's renames done).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { startMover } from "../support/mover.ts"
import { type Server, startOurs, textOf } from "./support/servers.ts"
import { type Twins, twins } from "./support/twins.ts"

describe.each(strategies)("a directory moved out mid-call (%s)", (strategy) => {
  let t: Twins
  let ours: Server
  beforeAll(async () => {
    t = twins()
    ours = await startOurs(["--strategy", strategy, t.ours])
  }, 60_000)
  afterAll(async () => {
    await ours?.close()
    t?.cleanup()
  })

  it("write_file never publishes in the departed directory", async () => {
    const synced = await startOurs(["--strategy", strategy, "--sync", t.ours])
    // A round is won when the rename landed while the write held the directory and the write was
    // refused: then nothing may be outside. A write that finished first published inside, and the
    // mover carried the file out with the directory: no round of that kind proves anything, as in
    // test/race/moved-out.test.ts.
    let won = 0
    for (let round = 0; round < 6 && won < 2; round++) {
      const dir = path.join(t.ours, `w${round}`)
      fs.mkdirSync(dir)
      const away = path.join(t.outside, `w${round}`)
      const mover = startMover({ watch: dir, on: "open", renames: [[dir, away]] })
      await mover.ready
      const r = await synced.call("write_file", { path: path.join(dir, "big.txt"), content: "x".repeat(8 * 1024 * 1024) })
      const m = await mover.finish()
      expect(
        m.fired && m.renamed === 1,
        JSON.stringify(m, (_k, v) => (typeof v === "bigint" ? String(v) : v))
      ).toBe(true)
      expect(m.after, "at most the one act already past its proof").toBeLessThanOrEqual(1)
      if (r.isError !== true) {
        expect(textOf(r)).toBe(`Successfully wrote to ${dir}/big.txt`)
        continue
      }
      expect(textOf(r)).toMatch(
        /^Access denied - path outside allowed directories: .* \(pinnedfs: '.*' was moved out of the root while this operation held it/
      )
      expect(fs.readdirSync(away)).toEqual([])
      won++
    }
    await synced.close()
    expect(won).toBeGreaterThan(0)
  }, 180_000)

  it("directory_tree and search_files never list what was moved into the departed tree", async () => {
    for (const tool of ["directory_tree", "search_files"] as const) {
      for (let round = 0; round < 3; round++) {
        const top = path.join(t.ours, `${tool}-${round}`)
        let deepest = top
        for (let i = 0; i < 30; i++) {
          deepest = path.join(deepest, `d${i}`)
          fs.mkdirSync(deepest, { recursive: true })
          fs.writeFileSync(path.join(deepest, "f.txt"), "")
        }
        const leak = path.join(t.outside, `planted-${tool}-${round}.txt`)
        fs.writeFileSync(leak, "outside")
        const departed = path.join(t.outside, `${tool}-${round}`)
        const mover = startMover({
          watch: path.join(top, "d0"),
          on: "open",
          renames: [
            [top, departed],
            [leak, path.join(departed, path.relative(top, deepest), path.basename(leak))]
          ]
        })
        await mover.ready
        const text = textOf(await ours.call(tool, tool === "search_files" ? { path: top, pattern: "**/*.txt" } : { path: top }))
        const m = await mover.finish()
        expect(
          m.fired && m.renamed === 2,
          JSON.stringify(m, (_k, v) => (typeof v === "bigint" ? String(v) : v))
        ).toBe(true)
        expect(text).not.toContain("planted")
      }
    }
  }, 120_000)
})
