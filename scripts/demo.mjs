// npm run demo: a symlink planted in a workspace, read three ways.
//
//   1. On a quiet tree: pinnedfs refuses the planted link with a typed error (both strategies, the
//      promise API and the Effect extension); the path-based fallback refuses it too, since its
//      lstat check sees the link; plain node:fs reads the secret.
//   2. While another thread swaps a workspace directory for a link: the fallback's lstat-then-use
//      is defeated and some of its reads return the secret; pinnedfs's never do.
//   3. What each read costs, per operation, on a quiet tree.
//
// Imports the compiled package from ../dist (built by `npm install` through `prepare`); builds
// nothing itself.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { race, plantSwap } from "./demo/race.mjs"
import { describeError, distMissing, fallbackReader, nativeExtensionReaders, nodeReader, pinnedReaders } from "./demo/readers.mjs"
import { table } from "./demo/table.mjs"
import { time } from "./demo/timing.mjs"

if (distMissing()) {
  console.error(
    "pinnedfs demo: dist/ is missing. Run `npm install` (its `prepare` step compiles the TypeScript\n" +
      "into dist/ and builds the native addon), or `npm run build` in a checkout, then `npm run demo`."
  )
  process.exit(1)
}

const RACE_READS = Number(process.env.DEMO_RACE_READS ?? 3000)
const RACE_SECONDS = Number(process.env.DEMO_RACE_SECONDS ?? 4)
const TIMING_ITERATIONS = Number(process.env.DEMO_ITERATIONS ?? 3000)
const SECRET = "TOP SECRET: the production database password is hunter2"

const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-demo-"))
const workspace = path.join(base, "workspace")
const outside = path.join(base, "outside")
fs.mkdirSync(path.join(workspace, "src/lib/util"), { recursive: true })
fs.mkdirSync(outside)
fs.writeFileSync(path.join(outside, "secret.txt"), SECRET)
fs.writeFileSync(path.join(workspace, "src/lib/util/file.txt"), "export const answer = 42\n")
fs.symlinkSync("../outside", path.join(workspace, "notes")) // the planted link

const closeAll = []
try {
  const pinned = await pinnedReaders(workspace)
  const nativeExt = await nativeExtensionReaders(workspace)
  const fallback = await fallbackReader(workspace)
  const plain = nodeReader(workspace)
  for (const r of [...pinned, ...nativeExt]) if (r.close) closeAll.push(r.close)
  const confined = [...pinned, ...nativeExt]

  const load = os.loadavg()[0].toFixed(1)
  console.log(
    `pinnedfs demo: ${os.type()} ${os.release()}, Node ${process.version}, ` +
      `${os.cpus().length} CPUs, load average ${load} (timings below move with it)`
  )
  console.log(`workspace  ${workspace}`)
  console.log(`secret     ${path.join(outside, "secret.txt")}  (outside the workspace)`)
  console.log(`planted    workspace/notes -> ../outside  (a symlink someone left in the workspace)`)

  // 1 ------------------------------------------------------------------------------------------
  console.log("\n1. Read workspace/notes/secret.txt, nothing else happening\n")
  const rows = []
  for (const reader of [plain, ...confined, fallback]) {
    if (reader.unavailable) {
      rows.push([reader.name, `(skipped: ${reader.unavailable})`])
      continue
    }
    try {
      const text = await reader.read("notes/secret.txt")
      rows.push([reader.name, text === SECRET ? "READ THE SECRET" : `read: ${text}`])
    } catch (e) {
      rows.push([reader.name, `refused: ${describeError(e)}`])
    }
  }
  console.log(table(["reader", "outcome"], rows))

  // 2 ------------------------------------------------------------------------------------------
  const layout = plantSwap(workspace, outside)
  console.log(
    `\n2. Read workspace/docs/secret.txt while another thread swaps docs/ (a real directory holding a\n` +
      `   harmless decoy) for a link to the outside and back. Up to ${RACE_READS} reads or ${RACE_SECONDS} s per reader.\n`
  )
  const raceRows = []
  let fallbackTally
  for (const reader of [fallback, ...confined]) {
    if (reader.unavailable) continue
    const t = await race(reader, layout, SECRET, { reads: RACE_READS, seconds: RACE_SECONDS })
    if (reader === fallback) fallbackTally = t
    raceRows.push([reader.name, String(t.reads), String(t.decoy), String(t.refused), String(t.missing), String(t.escaped)])
  }
  console.log(table(["reader", "reads", "decoy", "refused", "gone mid-swap", "READ THE SECRET"], raceRows))
  if (fallbackTally.escaped > 0) {
    console.log(
      `\n   The fallback lstat'ed docs/ and docs/secret.txt, saw a directory and a single-link file, then\n` +
        `   handed the path to fs.readFile, which resolved it again after the swap: ${fallbackTally.escaped} of its\n` +
        `   ${fallbackTally.reads} reads returned the file outside. pinnedfs opens beneath a pinned directory handle\n` +
        `   with no link followed at use time, so the swap can only make its read fail, never escape.`
    )
  } else {
    console.log(
      `\n   This run caught no escape (the swap has to land between the fallback's lstat and its read;\n` +
        `   on a busy machine the timing may not line up). The window is real: lstat-then-use checks\n` +
        `   one resolution of the path and reads through another. Run again or raise DEMO_RACE_READS.`
    )
  }

  // 3 ------------------------------------------------------------------------------------------
  console.log(
    `\n3. Time per read of workspace/src/lib/util/file.txt (quiet tree, depth 4,\n` +
      `   ${TIMING_ITERATIONS} sequential reads after warm-up; lower is better)\n`
  )
  const timed = []
  for (const reader of [plain, ...confined, fallback]) {
    if (reader.unavailable) continue
    timed.push({ reader, ...(await time(reader, "src/lib/util/file.txt", TIMING_ITERATIONS)) })
  }
  const baseline = timed[0].median
  console.log(
    table(
      ["reader", "µs/op (median)", "µs/op (mean)", "vs node:fs"],
      timed.map((t) => [t.reader.name, t.median.toFixed(1), t.mean.toFixed(1), `${(t.median / baseline).toFixed(2)}×`])
    )
  )
  console.log(
    "\n   The extension rows include running an Effect per call, as the kernel does. `npm run bench`\n" +
      "   measures more operations, syscall counts and event-loop delay."
  )
} catch (e) {
  // Most likely the native addon is missing for this platform: its loader says how to build it.
  console.error(`\npinnedfs demo failed: ${e?.message ?? e}`)
  process.exitCode = 1
} finally {
  for (const close of closeAll) close()
  fs.rmSync(base, { recursive: true, force: true })
}
