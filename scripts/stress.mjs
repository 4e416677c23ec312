#!/usr/bin/env node
// npm run stress [-- --seconds N] [-- --ops readFile,stat] [-- --attacks symlink] [-- --json FILE]
//
// The race cells of test/race run long: every operation through the contested path, under every
// attack, against PinnedRoot with each strategy and against the path-based fallback, while the
// native attacker swaps. --seconds is the whole run, shared evenly between cells (default 60).
// Prints, per target, operations tried, swaps made and escapes seen; exits 1 if PinnedRoot escaped
// or gave an answer that is neither right nor a refusal the attack explains.
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { option as optionOf, secondsOption } from "./options.mjs"
import { distStale, ensureDist } from "./package/dist.mjs"
import { buildAttacker, raceOps, runCell } from "./race/run.mjs"
import { raceTargets } from "./race/targets.mjs"

const argv = process.argv.slice(2)
const option = (name, fallback) => optionOf(argv, name, fallback)
const seconds = secondsOption(argv, "60")
const onlyOps = option("ops", "")?.split(",").filter(Boolean) ?? []
const onlyAttacks = option("attacks", "")?.split(",").filter(Boolean) ?? []
const jsonFile = option("json", undefined)

const repo = path.resolve(fileURLToPath(new URL("..", import.meta.url)))
// The race targets load the compiled package: dist/ built first when missing or stale, as the
// demo and the bench do (npm install does not build it).
try {
  if (distStale()) process.stderr.write("pinnedfs stress: building dist/ from the sources first (tsc, under a minute)\n")
  ensureDist()
} catch (e) {
  console.error(`pinnedfs stress: ${e.message}`)
  process.exit(1)
}

const log = (...a) => process.stderr.write(`${a.join(" ")}\n`)
const attackerBin = buildAttacker()
const targets = await raceTargets(repo)
const ops = raceOps.filter((op) => onlyOps.length === 0 || onlyOps.includes(op.name))
const cells = ops.flatMap((op) =>
  op.attacks.filter((a) => onlyAttacks.length === 0 || onlyAttacks.includes(a)).map((attack) => ({ op, attack }))
)
log(`stress: ${cells.length} cells x ${targets.length} targets in ${seconds} s`)

const rows = []
const deadline = Date.now() + seconds * 1000
let left = cells.length * targets.length
for (const target of targets) {
  for (const { op, attack } of cells) {
    // Time left shared by the cells left: a cell whose operation has not landed ends at once and
    // hands its share on.
    const perCell = Math.max(0.05, (deadline - Date.now()) / 1000 / left--)
    const r = await runCell({ attackerBin, open: target.open, attack, op, iterations: Infinity, seconds: perCell })
    const pending = r.outcomes.ENOSYS === r.tried
    rows.push({ target: target.name, op: op.name, attack, pending, ...r })
    log(
      `${target.name.padEnd(28)} ${`${op.name}/${attack}`.padEnd(34)} tried ${String(r.tried).padStart(7)}` +
        ` swaps ${String(r.swaps).padStart(9)} refused ${String(r.refused).padStart(6)} escapes ${String(r.escapes).padStart(5)}` +
        ` unexpected ${String(r.unexpected).padStart(5)}${pending ? "  (not implemented: ENOSYS)" : ""}` +
        (r.examples[0] ? `\n    e.g. ${r.examples[0]}` : "") +
        (r.unexpectedExamples[0] ? `\n    unexpected: ${r.unexpectedExamples[0]}` : "")
    )
  }
}

const sum = (list, key) => list.reduce((n, r) => n + r[key], 0)
console.log(
  "\n| target | operations tried | swaps made | refusals the attack caused | escapes seen | unexpected answers | cells with escapes | cells not implemented |"
)
console.log("|---|---:|---:|---:|---:|---:|---:|---:|")
for (const target of targets) {
  const mine = rows.filter((r) => r.target === target.name)
  const live = mine.filter((r) => !r.pending)
  console.log(
    `| ${target.name} | ${sum(live, "tried")} | ${sum(live, "swaps")} | ${sum(live, "refused")} | ${sum(live, "escapes")} | ${sum(live, "unexpected")} | ` +
      `${live.filter((r) => r.escapes > 0).length}/${live.length} | ${mine.length - live.length} |`
  )
}
console.log("\nEscapes by operation and attack (live cells only):\n")
console.log(`| operation / attack | ${targets.map((t) => t.name).join(" | ")} |`)
console.log(`|---|${targets.map(() => "---:").join("|")}|`)
for (const { op, attack } of cells) {
  const cellsRow = targets.map((t) => {
    const r = rows.find((x) => x.target === t.name && x.op === op.name && x.attack === attack)
    return r.pending ? "n/a" : `${r.escapes}/${r.tried}`
  })
  console.log(`| ${op.name} / ${attack} | ${cellsRow.join(" | ")} |`)
}
if (jsonFile) fs.writeFileSync(jsonFile, JSON.stringify(rows, null, 2))

const pinned = rows.filter((r) => r.target.startsWith("PinnedRoot"))
const pinnedEscapes = sum(pinned, "escapes")
const pinnedUnexpected = sum(pinned, "unexpected")
if (pinnedEscapes > 0 || pinnedUnexpected > 0) {
  console.error(`\nPinnedRoot escaped ${pinnedEscapes} times and answered ${pinnedUnexpected} times what the attack does not explain`)
  process.exit(1)
}
