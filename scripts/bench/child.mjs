// Runs one scenario through one contender a fixed number of times (after one warm-up unit), for
// syscalls.mjs to trace.
import { makeContender } from "./registry.mjs"
import { scenarios } from "./scenarios.mjs"

const args = JSON.parse(process.argv[2])
const c = await makeContender(args.contender, args.root, args.strategy)
const s = scenarios.find((x) => x.id === args.scenario)
const u = s.unit(c, null)
const run = typeof u === "function" ? u : u.run
await run()
for (let i = 0; i < args.units; i++) await run()
await c.close()
