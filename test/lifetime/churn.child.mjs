// 100,000 mixed operations with bounded concurrency through the raw addon: reads, stats, listings,
// globs, refusals (links on the way, hard links, escapes), missing files, malformed requests,
// writes (plain and atomic), mkdirs/rmdirs programs, removes, renames, batches. Run with
// --expose-gc. Arguments: operations concurrency. Prints one JSON line with descriptor counts and
// RSS before and after; the parent test asserts them.
import { loadAddon } from "./addon.mjs"
import { fdCount, makeTree } from "./tree.mjs"

const total = Number(process.argv[2] ?? 100_000)
const concurrency = Number(process.argv[3] ?? 32)
const native = loadAddon()
const { ops, flags } = native
const tree = makeTree()
const gc = () => {
  globalThis.gc()
  globalThis.gc()
}
const rssMb = () => process.memoryUsage().rss / (1024 * 1024)

const payload = Buffer.alloc(4096, 0x61)
// One request per index: a deterministic cycle through every kind. Work that creates something
// uses a slot of its own (i % 64), so concurrent members never fight over a name in ways that
// make the answer depend on scheduling more than a real workload would.
const kinds = [
  () => ({ op: ops.readFile, path: "file.txt" }),
  () => ({ op: ops.stat, path: "dir/sub/deep.txt" }),
  () => ({ op: ops.exists, path: "missing/nothing" }),
  () => ({ op: ops.readFile, path: "out/secret.txt" }), // link on the way
  () => ({ op: ops.readFile, path: "hard.txt" }), // hard link
  () => ({ op: ops.readFile, path: "../outside/secret.txt" }), // escape
  () => ({ op: ops.readFile, path: "no/such/file" }), // ENOENT
  () => ({ op: ops.readDirectory, path: "dir", recursive: true }),
  (slot) => ({ op: ops.writeFile, path: `${slot}.txt`, data: payload, flag: flags.w }),
  (slot) => ({ op: ops.writeFile, path: `${slot}.atomic`, data: payload, flag: flags.w, atomic: true }),
  (slot) => ({ op: ops.mkdirs, plan: [{ path: `m/${slot}` }, { path: `m/${slot}/a`, mode: 0o755 }] }),
  (slot) => ({ op: ops.remove, path: `m/${slot}`, recursive: true, force: true }),
  () => ({ op: ops.realPath, path: "dir/sub" }),
  () => ({ op: ops.resolve, path: "inner-link/x" }),
  () => ({ op: ops.readLink, path: "out" }),
  () => ({ op: ops.glob, path: "", to: "", pattern: "**/*.txt", exclude: [], dot: false }),
  () => ({ op: ops.readFile, path: "a\0b" }), // bad input
  () => ({ op: 999, path: "x" }), // unknown operation
  (slot) => ({ op: ops.chmod, path: `${slot}.txt`, mode: 0o644 }),
  (slot) => ({ op: ops.rename, path: `${slot}.txt`, to: `${slot}.moved` }),
  (slot) => ({ op: ops.makeDirectory, path: `d${slot}` }), // EEXIST after the first
  (slot) => ({ op: ops.rmdirs, owned: [{ path: `d${slot}`, identity: "1:1", optional: true }] }),
  () => ({ op: ops.writeFile, path: "out/evil.txt", data: "x", flag: flags.w }), // refused
  () => "batch"
]
const request = (i) => kinds[i % kinds.length](`w${i % 64}`)

const batch = [
  { op: ops.readFile, path: "file.txt" },
  { op: ops.stat, path: "dir" },
  { op: ops.readFile, path: "out/secret.txt" },
  { op: ops.exists, path: "nope" },
  { op: "bad" },
  { op: ops.readDirectory, path: "dir" }
]

let done = 0
let failed = 0
const run = async (handle, from, to) => {
  let next = from
  const lane = async () => {
    while (next < to) {
      const r = request(next++)
      try {
        if (r === "batch") await handle.batch(batch, { size: 16, response: 1 << 20 })
        else await handle.execute(r)
      } catch {
        failed++
      }
      done++
    }
  }
  await Promise.all(Array.from({ length: concurrency }, lane))
}

// The first write to a piped stdout makes libuv open /dev/null (its spare descriptor): before the baseline.
process.stdout.write("")
process.stderr.write("")
const fdBefore = fdCount()
const started = process.hrtime.bigint()
const handles = [await native.pin(tree.root, "openat2"), await native.pin(tree.root, "walk")]
// Warm up (allocator arenas, libuv's pool, V8's code) before the baseline is taken.
const warm = Math.min(5_000, Math.floor(total / 10))
await run(handles[0], 0, warm)
await run(handles[1], 0, warm)
gc()
const rssBefore = rssMb()
const fdWarm = fdCount()
const half = Math.floor(total / 2)
await run(handles[0], 0, half)
await run(handles[1], half, total)
gc()
const rssAfter = rssMb()
const fdLoaded = fdCount()
for (const h of handles) h.close()
gc()
const fdAfter = fdCount()
const seconds = Number(process.hrtime.bigint() - started) / 1e9
const secretIntact = tree.secretIntact()
tree.dispose()
console.log(
  JSON.stringify({
    operations: total,
    warmup: 2 * warm,
    done,
    failed,
    concurrency,
    seconds: Number(seconds.toFixed(2)),
    fdBefore,
    fdWarm,
    fdLoaded,
    fdAfter,
    rssBeforeMb: Number(rssBefore.toFixed(1)),
    rssAfterMb: Number(rssAfter.toFixed(1)),
    rssGrowthMb: Number((rssAfter - rssBefore).toFixed(1)),
    secretIntact
  })
)
