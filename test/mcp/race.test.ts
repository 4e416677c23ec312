/**
 * A bounded RENAME_EXCHANGE race per tool: the race suite's native attacker (test/race/attacker.c)
 * swaps names in the allowed directory while the SDK's `Client` calls one tool through the
 * contested path, over stdio. Each cell runs first against the reference server, the positive
 * control, which must escape (read, list or describe the canary, or change it); then against
 * `pinnedfs mcp` under each strategy, which must not escape once, must have met the attack (the
 * attacker's own count of the exchanges the kernel made while it ran, and at least one refusal only
 * the attack explains), and must answer every other call with the inside answer.
 *
 * Bounded in calls and seconds per cell; the figures of each cell are printed (`escapes/calls`,
 * swaps), and they are what docs/mcp.md reports.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Arena, attacks, buildAttacker, makeArena, startAttacker } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"
import { type Attack, cells, type Phase, phase } from "./support/race.ts"
import { type Server, startOurs, startReference } from "./support/servers.ts"

const bounds = (mutates: boolean | undefined) => ({ iterations: mutates ? 40 : 100, seconds: 8 })
// The reference may take more calls to escape where its window is narrow: up to 3,000, within 30 s.
const controlBounds = (mutates: boolean | undefined) => ({ ...bounds(mutates), seconds: 30, untilEscape: 3000 })

const rows: Array<string> = []
const totals: Record<string, { escapes: number; calls: number; swaps: number }> = {}
afterAll(() => {
  if (rows.length === 0) return
  const sum = Object.entries(totals).map(
    ([server, t]) => `| all cells | ${server} | ${t.escapes} / ${t.calls} (${((100 * t.escapes) / t.calls).toFixed(1)} %) | | ${t.swaps} |`
  )
  console.log(["| cell | server | escapes / calls | refused | swaps |", "|---|---|---:|---:|---:|", ...rows, ...sum].join("\n"))
})

describe.each(["symlink", "dirswap", "hardlink"] as const)("races under the %s attack", (attack: Attack) => {
  let arena: Arena
  let attacker: ReturnType<typeof startAttacker>
  const servers: Record<string, Server> = {}
  beforeAll(async () => {
    arena = makeArena()
    attacker = startAttacker(buildAttacker(), attacks[attack](arena))
    await attacker.started
    await attacker.park()
    const started = await Promise.all([
      startReference([arena.root]),
      ...strategies.map((strategy) => startOurs(["--strategy", strategy, arena.root]))
    ])
    servers["reference"] = started[0]!
    strategies.forEach((strategy, i) => {
      servers[`pinnedfs (${strategy})`] = started[i + 1]!
    })
  }, 60_000)
  afterAll(async () => {
    await attacker?.stop()
    await Promise.all(Object.values(servers).map((s) => s.close()))
    arena?.dispose()
  })

  const record = (cell: string, server: string, p: Phase) => {
    rows.push(`| ${cell} (${attack}) | ${server} | ${p.escapes} / ${p.tried} | ${p.refused} | ${p.swaps} |`)
    const t = (totals[server] ??= { escapes: 0, calls: 0, swaps: 0 })
    t.escapes += p.escapes
    t.calls += p.tried
    t.swaps += p.swaps
  }

  it.each(cells(attack).map((c) => [c.tool, c] as const))(
    "%s",
    async (name, cell) => {
      const run = (server: string, limits: ReturnType<typeof controlBounds> | ReturnType<typeof bounds>, untilRefused: boolean) =>
        phase({ arena, attacker, server: servers[server]!, cell, ...limits, untilRefused })
      const control = await run("reference", controlBounds(cell.mutates), false)
      record(name, "reference", control)
      expect(control.swaps, "the attack ran against the reference").toBeGreaterThan(0)
      expect(control.escapes, `the reference must escape: ${JSON.stringify(control.outcomes)}`).toBeGreaterThan(0)
      for (const strategy of strategies) {
        const server = `pinnedfs (${strategy})`
        const p = await run(server, bounds(cell.mutates), true)
        record(name, server, p)
        expect(p.escapes, `${server} escaped: ${p.examples.join(" | ")}`).toBe(0)
        expect(p.unexpected, `${server} answered unexpectedly: ${p.examples.join(" | ")}`).toBe(0)
        expect(p.swaps, `the attack ran against ${server}`).toBeGreaterThan(0)
        expect(p.refused, `the attack reached ${server}: ${JSON.stringify(p.outcomes)}`).toBeGreaterThan(0)
      }
    },
    120_000
  )
})
