// npm run demo: what pinnedfs does, in the order a user meets it, on a throwaway workspace in the
// temporary directory that holds a symlink someone planted (notes -> ../outside).
//
//   1. The library: pinnedfs refuses the planted link with a typed error (both strategies, the
//      promise API and the Effect extension); the path-based fallback refuses it too, since its
//      lstat sees the link; plain node:fs reads the secret.
//   2. `pinnedfs run`: a command confined to the workspace writes there, and is refused `.git` and
//      the outside (bubblewrap; where there is none, or it cannot build a sandbox, says why).
//   3. `pinnedfs fix`: a fixer rewrites files in place, and pinnedfs re-reads what it did.
//   4. While another thread swaps a workspace directory for a link: the fallback's lstat-then-use
//      is defeated and some of its reads return the secret; pinnedfs's never do.
//   5. What each read costs, per operation, on a quiet tree.
//
// Every line it prints fits in 100 columns. It uses the compiled package in ../dist and builds it
// first when it is missing or older than the sources. On a Node older than the package supports it
// runs itself again on a supported one (scripts/node-lines.mjs).
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bubblewrapDirectory } from "./bubblewrap.mjs"
import { belowFloor, supportedNode } from "./node-lines.mjs"

if (belowFloor()) {
  const node = supportedNode("npm run demo")
  const r = spawnSync(node, [fileURLToPath(import.meta.url), ...process.argv.slice(2)], { stdio: "inherit" })
  process.exit(r.status ?? 1)
}

const { distStale, ensureDist } = await import("./package/dist.mjs")
try {
  if (distStale()) process.stderr.write("pinnedfs demo: building dist/ from the sources first (tsc, under a minute)\n")
  ensureDist()
} catch (e) {
  console.error(`pinnedfs demo: ${e.message}`)
  process.exit(1)
}

const { race, plantSwap } = await import("./demo/race.mjs")
const { describeError, fallbackReader, nativeExtensionReaders, nodeReader, pinnedReaders } = await import("./demo/readers.mjs")
const { fixSection, runSection } = await import("./demo/cli.mjs")
const { say, table } = await import("./demo/table.mjs")
const { time } = await import("./demo/timing.mjs")

const RACE_READS = Number(process.env.DEMO_RACE_READS ?? 3000)
const RACE_SECONDS = Number(process.env.DEMO_RACE_SECONDS ?? 4)
const TIMING_ITERATIONS = Number(process.env.DEMO_ITERATIONS ?? 3000)
const SECRET = "TOP SECRET: the production database password is hunter2"

const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-demo-"))
const workspace = path.join(base, "workspace")
const outside = path.join(base, "outside")
fs.mkdirSync(path.join(workspace, "src/lib/util"), { recursive: true })
fs.mkdirSync(path.join(workspace, ".git"))
fs.writeFileSync(path.join(workspace, ".git/config"), "[core]\n\tbare = false\n")
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
  // pinnedfs run needs bubblewrap; a machine without it gets Debian's, fetched into a cache for the
  // demo (scripts/bubblewrap.mjs), or section 2 says why it cannot run.
  const bwrap = bubblewrapDirectory("npm run demo")
  if (typeof bwrap === "string" && bwrap !== "") process.env.PATH = `${bwrap}${path.delimiter}${process.env.PATH ?? ""}`
  const { sandboxAvailable } = await import("../dist/confine/index.js")
  const sandbox = await sandboxAvailable()

  const load = os.loadavg()[0].toFixed(1)
  say(
    `pinnedfs demo: ${os.type()} ${os.release()}, Node ${process.version}, ${os.cpus().length} CPUs, ` +
      `load ${load} (timings move with it)`
  )
  say(`workspace  ${workspace}`)
  say(`secret     ${path.join(outside, "secret.txt")}  (outside the workspace)`)
  say("planted    workspace/notes -> ../outside  (a symlink someone left in the workspace)")

  // 1 ------------------------------------------------------------------------------------------
  say("\n1. The library: read workspace/notes/secret.txt, nothing else happening\n")
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
  say(table(["reader", "outcome"], rows))

  // 2 ------------------------------------------------------------------------------------------
  say("\n2. pinnedfs run: a command confined to the workspace\n")
  runSection(say, { workspace, outside, sandbox })

  // 3 ------------------------------------------------------------------------------------------
  say("\n3. pinnedfs fix: an in-place fixer rewrites src/, and pinnedfs re-reads what it did\n")
  fixSection(say, { workspace, base })

  // 4 ------------------------------------------------------------------------------------------
  const layout = plantSwap(workspace, outside)
  say(
    "\n4. Read workspace/docs/secret.txt while another thread swaps docs/ (a real directory holding a\n" +
      "   harmless decoy) for a link to the outside and back. Up to " +
      `${RACE_READS} reads or ${RACE_SECONDS} s per reader.\n`
  )
  const raceRows = []
  let fallbackTally
  for (const reader of [fallback, ...confined]) {
    if (reader.unavailable) continue
    const t = await race(reader, layout, SECRET, { reads: RACE_READS, seconds: RACE_SECONDS })
    if (reader === fallback) fallbackTally = t
    raceRows.push([reader.name, String(t.reads), String(t.decoy), String(t.refused), String(t.missing), String(t.escaped)])
  }
  say(table(["reader", "reads", "decoy", "refused", "gone mid-swap", "READ THE SECRET"], raceRows))
  if (fallbackTally.escaped > 0) {
    say(
      "\n   The fallback lstat'ed docs/ and docs/secret.txt, saw a directory and a single-link file, then\n" +
        `   handed the path to fs.readFile, which resolved it again after the swap: ${fallbackTally.escaped} of its\n` +
        `   ${fallbackTally.reads} reads returned the file outside. pinnedfs opens beneath a pinned directory\n` +
        "   handle with no link followed at use time, so the swap can only make its read fail, never escape."
    )
  } else {
    say(
      "\n   This run caught no escape (the swap has to land between the fallback's lstat and its read;\n" +
        "   on a busy machine the timing may not line up). The window is real: lstat-then-use checks\n" +
        "   one resolution of the path and reads through another. Run again or raise DEMO_RACE_READS."
    )
  }

  // 5 ------------------------------------------------------------------------------------------
  say(
    "\n5. Time per read of workspace/src/lib/util/file.txt (quiet tree, depth 4,\n" +
      `   ${TIMING_ITERATIONS} sequential reads after warm-up; lower is better)\n`
  )
  const timed = []
  for (const reader of [plain, ...confined, fallback]) {
    if (reader.unavailable) continue
    timed.push({ reader, ...(await time(reader, "src/lib/util/file.txt", TIMING_ITERATIONS)) })
  }
  const baseline = timed[0].median
  say(
    table(
      ["reader", "µs/op (median)", "µs/op (mean)", "vs node:fs"],
      timed.map((t) => [t.reader.name, t.median.toFixed(1), t.mean.toFixed(1), `${(t.median / baseline).toFixed(2)}×`])
    )
  )
  say(
    "\n   The extension rows include running an Effect per call, as the kernel does. `npm run bench`\n" +
      "   measures more operations, syscall counts and event-loop delay (docs/performance.md)."
  )
} catch (e) {
  // Most likely the native addon is missing for this platform: its loader says how to build it.
  console.error(`\npinnedfs demo failed: ${e?.message ?? e}`)
  process.exitCode = 1
} finally {
  for (const close of closeAll) close()
  fs.rmSync(base, { recursive: true, force: true })
}
