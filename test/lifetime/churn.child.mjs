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
const request = (i) => {
  const slot = `w${i % 64}`
  switch (i % 24) {
    case 0:
      return { op: ops.readFile, path: "file.txt" }
    case 1:
      return { op: ops.stat, path: "dir/sub/deep.txt" }
    case 2:
      return { op: ops.exists, path: "missing/nothing" }
    case 3:
      return { op: ops.readFile, path: "out/secret.txt" } // link on the way
    case 4:
      return { op: ops.readFile, path: "hard.txt" } // hard link
    case 5:
      return { op: ops.readFile, path: "../outside/secret.txt" } // escape
    case 6:
      return { op: ops.readFile, path: "no/such/file" } // ENOENT
    case 7:
      return { op: ops.readDirectory, path: "dir", recursive: true }
    case 8:
      return { op: ops.writeFile, path: `${slot}.txt`, data: payload, flag: flags.w }
    case 9:
      return { op: ops.writeFile, path: `${slot}.atomic`, data: payload, flag: flags.w, atomic: true }
    case 10:
      return { op: ops.mkdirs, plan: [{ path: `m/${slot}` }, { path: `m/${slot}/a`, mode: 0o755 }] }
    case 11:
      return { op: ops.remove, path: `m/${slot}`, recursive: true, force: true }
    case 12:
      return { op: ops.realPath, path: "dir/sub" }
    case 13:
      return { op: ops.resolve, path: "inner-link/x" }
    case 14:
      return { op: ops.readLink, path: "out" }
    case 15:
      return { op: ops.glob, path: "", to: "", pattern: "**/*.txt", exclude: [], dot: false }
    case 16:
      return { op: ops.readFile, path: "a\0b" } // bad input
    case 17:
      return { op: 999, path: "x" } // unknown operation
    case 18:
      return { op: ops.chmod, path: `${slot}.txt`, mode: 0o644 }
    case 19:
      return { op: ops.rename, path: `${slot}.txt`, to: `${slot}.moved` }
    case 20:
      return { op: ops.makeDirectory, path: `d${slot}` } // EEXIST after the first
    case 21:
      return { op: ops.rmdirs, owned: [{ path: `d${slot}`, identity: "1:1", optional: true }] }
    case 22:
      return { op: ops.writeFile, path: "out/evil.txt", data: "x", flag: flags.w } // refused
    default:
      return "batch"
  }
}

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
