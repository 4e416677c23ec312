// node scripts/bench/layers.mjs [stat|exists|read] [--client-kernel FILE] [--rounds N]
//
// Where the microseconds go, layer by layer: one operation (an awaited stat or exists of the
// depth-1 file, or an awaited 4 KiB read at depth 8) through each layer a program may call, from
// node:fs up to a permission kernel, side by side in one process (rounds interleaved, each
// contender warmed first). Prints CPU µs per operation (every thread: the JavaScript thread and
// the pool) and wall µs, and each layer's cost over the one beneath it. CPU time is the figure to
// compare on a shared machine: another process's burst lengthens wall time, not our CPU time.
import { measureSideBySide } from "./measure.mjs"
import { makeContender } from "./registry.mjs"
import { DEEP, makeTrees, SHALLOW } from "./trees.mjs"

const argv = process.argv.slice(2)
const op = argv[0] !== undefined && !argv[0].startsWith("--") ? argv[0] : "stat"
const roundsAt = argv.indexOf("--rounds")
const rounds = roundsAt >= 0 ? Number(argv[roundsAt + 1]) : 7

// Each layer's call for the operation, and the layer it sits on (its cost is measured over that one).
const layers = [
  ["node:fs/promises", "-", undefined],
  ["PinnedRoot", "openat2", "node:fs/promises"],
  ["NodeAtomicFileSystem", "openat2", "PinnedRoot"],
  ["Effect NodeFileSystem", "-", "node:fs/promises"],
  ["kernel over NodeAtomicFileSystem", "openat2", "NodeAtomicFileSystem"],
  ["client kernel over NodeAtomicFileSystem", "openat2", "NodeAtomicFileSystem"]
]
const call = {
  stat: (c) => () => c.stat(SHALLOW),
  exists: (c) => () => c.exists(SHALLOW),
  read: (c) => () => (c.readFileString ? c.readFileString(DEEP) : c.readFile(DEEP))
}[op]
if (call === undefined) throw new Error(`unknown operation ${op}: one of stat, exists, read`)

const trees = makeTrees({ globFiles: 0, dirEntries: 0, removeFiles: 0 })
const made = []
for (const [name, strategy, under] of layers) {
  try {
    made.push({ c: await makeContender(name, trees.root, strategy), under })
  } catch (e) {
    if (!e.notMeasured) throw e
    process.stderr.write(`${name}: ${e.message}\n`)
  }
}
const results = await measureSideBySide(
  made.map(({ c }) => ({ unit: call(c) })),
  { rounds, minMs: 300, warmupMs: 1500 }
)
const cpuOf = (name) => {
  const i = made.findIndex((m) => m.c.name === name)
  return i < 0 ? undefined : results[i].cpuUsPerOp
}
console.log(`${op}, awaited, ${rounds} rounds (median): CPU µs/op, wall µs/op, CPU over the layer beneath`)
made.forEach(({ c, under }, i) => {
  const r = results[i]
  if (r.error) return console.log(`${c.name} (${c.strategy}): failed: ${r.error.message}`)
  const base = under === undefined ? undefined : cpuOf(under)
  const over = base === undefined ? "" : `  +${(r.cpuUsPerOp - base).toFixed(1)} over ${under}`
  console.log(
    `${`${c.name} (${c.strategy})`.padEnd(48)} ${r.cpuUsPerOp.toFixed(1).padStart(7)} ${(1e6 / r.opsPerSec).toFixed(1).padStart(7)}${over}`
  )
})
for (const { c } of made) await c.close()
trees.cleanup()
