// Huge and growing files, read through every reading entry: PinnedRoot (readFile, readFileString,
// batch), the Effect extension (execute, a readMany-backed batch, a batch with a glob member that
// takes the general path) and the raw addon (call, execute, readMany, batch with no limit given,
// where the native ceiling applies). In a child process: before the read limit existed, each of
// these aborted the whole process with std::bad_alloc, and a regression must fail the test, not
// kill the runner. Arguments: transpiled-sources-dir strategy scenario [padding]. Prints one JSON
// line: per entry, "ok:<bytes>" or "<reason>/<refusal>: <description>".
//
//   sparse   a 1 TiB sparse file: refused from fstat's size, before anything is allocated
//   grows    /proc/self/cmdline (fstat says 0 bytes; the read delivers more): a file that grows
//            past the limit while being read, deterministically
//   race     a 16-byte file another thread keeps growing to 1 TiB and shrinking back with
//            ftruncate while reads run: every answer is the content (at most the limit) or toolarge
//   string   a 520 MiB sparse file read as text with a limit raised above it: V8 cannot hold the
//            string, and the answer is toolarge, not ERR_STRING_TOO_LONG or a defect
import { Cause, Effect, Exit } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { makeTree } from "../lifetime/tree.mjs"

const [transpiled, strategy, scenario] = process.argv.slice(2)
const { PinnedRoot } = await import(path.join(transpiled, "index.js"))
const { NodeAtomicFileSystem } = await import(path.join(transpiled, "effect", "index.js"))
const { native } = await import(path.join(transpiled, "internal", "native.js"))

const describe = (e) =>
  e && typeof e === "object" && "reason" in e && typeof e.reason === "string"
    ? `${e.reason}/${e.refusal}: ${e.description}` // PinnedFsError
    : e && typeof e === "object" && typeof e.refusal === "string"
      ? `native/${e.refusal}: ${e.description}` // the raw addon's error object
      : e && typeof e === "object" && e.reason && typeof e.reason._tag === "string"
        ? `${e.reason._tag}/${e.reason.cause?.refusal ?? e.cause?.refusal ?? ""}: ${e.reason.description ?? e.message}` // PlatformError
        : `untyped: ${String(e)}`
const bytesOf = (v) => (typeof v === "string" ? v.length : (v?.byteLength ?? v?.length))
const answer = (v) => `ok:${bytesOf(v)}`

/** Every reading entry over `rel` inside `root`, with a read limit of `limit` where one is settable. */
const everyEntry = async (root, rel, limit, { text = false, raw = true, perCall = true } = {}) => {
  const out = {}
  const settle = async (name, f) => {
    try {
      out[name] = answer(await f())
    } catch (e) {
      out[name] = describe(e)
    }
  }
  const pinned = await PinnedRoot.open(root, { strategy, readLimit: limit })
  const read = text ? (p) => pinned.readFileString(p) : (p) => pinned.readFile(p)
  await settle("PinnedRoot.read", () => read(rel))
  if (perCall)
    await settle("PinnedRoot.readPerCall", () => (text ? pinned.readFileString(rel, { limit }) : pinned.readFile(rel, { limit })))
  await settle("PinnedRoot.batch", async () => {
    const [m] = await pinned.batch([{ operation: text ? "readFileString" : "readFile", path: rel }], { response: 2 ** 31 })
    if (!m.ok) throw m.error
    return m.value
  })
  if (raw) {
    const h = pinned.handle
    await settle("addon.call", () => h.call(native.ops.readFile, rel))
    await settle("addon.execute", () => h.execute({ op: native.ops.readFile, path: rel }))
    await settle("addon.readMany", async () => {
      const [failed, values] = await h.readMany(new Uint8Array([native.ops.readFile]), [rel], new Uint8Array(1), 1, 2 ** 53)
      if (failed[0]) throw values[0]
      return values[0]
    })
    await settle("addon.batch", async () => {
      const [m] = await h.batch([{ op: native.ops.readFile, path: rel }], { size: 1, response: 2 ** 53 })
      if (!m.ok) throw m.error
      return m.value
    })
  }
  pinned.close()
  const boundaryRoot = fs.realpathSync(root)
  const roots = { boundaryRoot, logicalRoot: boundaryRoot, rootIdentity: await native.identifyRoot(boundaryRoot) }
  const extension = NodeAtomicFileSystem.make({
    strategy,
    contentLimit: limit,
    batchLimits: { response: 2 ** 31 }
  })
  const operation = text ? "readFileString" : "readFile"
  const abs = `${boundaryRoot}/${rel}`
  const run = async (name, request, pick) => {
    const exit = await Effect.runPromiseExit(extension.execute({ ...roots, ...request }))
    if (Exit.isSuccess(exit)) {
      try {
        out[name] = answer(pick(exit.value))
      } catch (e) {
        out[name] = describe(e)
      }
      return
    }
    const failure = Cause.findErrorOption(exit.cause)
    out[name] = failure._tag === "Some" ? describe(failure.value) : `defect: ${Cause.pretty(exit.cause).slice(0, 300)}`
  }
  const member = (v) => {
    const r = v.entries[0].result
    if (r._tag === "Failure") throw r.failure
    return r.success.value
  }
  await run("extension.execute", { operation, path: abs }, (v) => v)
  await run("extension.batch(readMany)", { operation: "batch", requests: [{ operation, path: abs }] }, member)
  await run(
    "extension.batch(general)",
    {
      operation: "batch",
      requests: [
        { operation, path: abs },
        { operation: "glob", path: `${boundaryRoot}/nothing-*`, root: boundaryRoot }
      ]
    },
    member
  )
  extension.close()
  return out
}

const tree = makeTree()
process.on("exit", () => tree.dispose())
let result
if (scenario === "sparse") {
  fs.writeFileSync(path.join(tree.root, "huge.bin"), "")
  fs.truncateSync(path.join(tree.root, "huge.bin"), 2 ** 40)
  result = await everyEntry(tree.root, "huge.bin", PinnedRoot.defaultReadLimit)
  result.text = await everyEntry(tree.root, "huge.bin", PinnedRoot.defaultReadLimit, { text: true, raw: false })
} else if (scenario === "grows") {
  // The padding argument makes this process's command line far longer than the limit.
  const cmdline = fs.readFileSync("/proc/self/cmdline").length
  result = { cmdline, over: await everyEntry(`/proc/${process.pid}`, "cmdline", 4096, { raw: false }) }
  result.within = await everyEntry(`/proc/${process.pid}`, "cmdline", cmdline + 1, { raw: false })
} else if (scenario === "race") {
  const file = path.join(tree.root, "growing.bin")
  fs.writeFileSync(file, "sixteen bytes!!\n")
  const shared = new Int32Array(new SharedArrayBuffer(8))
  // A thread of its own, so the growing goes on while the main thread waits on the reads.
  const grower = new Worker(
    `
    const { workerData } = require("node:worker_threads")
    const fs = require("node:fs")
    const flag = new Int32Array(workerData.shared)
    const fd = fs.openSync(workerData.file, "r+")
    const deadline = Date.now() + 90_000
    while (Atomics.load(flag, 0) === 0 && Date.now() < deadline) {
      fs.ftruncateSync(fd, 2 ** 40)
      fs.ftruncateSync(fd, 16)
      Atomics.add(flag, 1, 1)
    }
    fs.closeSync(fd)
  `,
    { eval: true, workerData: { shared: shared.buffer, file } }
  )
  const pinned = await PinnedRoot.open(tree.root, { strategy, readLimit: 1 << 20 })
  const outcomes = {}
  const count = (k) => {
    outcomes[k] = (outcomes[k] ?? 0) + 1
  }
  while (Atomics.load(shared, 1) === 0) await new Promise((r) => setImmediate(r))
  // 100 rounds of 16 reads, and more while no read has met the file large: the file is 1 TiB only
  // between two ftruncates, and on a loaded machine 1,600 reads can all miss that window. Bounded
  // by rounds and by time; the test fails if the window was never met.
  const until = Date.now() + 60_000
  let made = 0
  for (let round = 0; round < 100 || (outcomes.toolarge === undefined && round < 4000 && Date.now() < until); round++) {
    made += 16
    const reads = Array.from({ length: 16 }, (_, i) =>
      (i % 4 === 3
        ? pinned.batch([{ operation: "readFile", path: "growing.bin" }]).then(([m]) => {
            if (!m.ok) throw m.error
            return m.value
          })
        : pinned.readFile("growing.bin")
      ).then(
        (b) => count(b.length <= 1 << 20 ? "content" : `content over the limit: ${b.length}`),
        (e) => count(e?.refusal === "toolarge" ? "toolarge" : describe(e))
      )
    )
    await Promise.all(reads)
  }
  Atomics.store(shared, 0, 1)
  await new Promise((r) => grower.on("exit", r))
  pinned.close()
  result = { outcomes, reads: made, truncations: Atomics.load(shared, 1) }
} else if (scenario === "string") {
  // Just over V8's string ceiling (2^29 - 24 UTF-16 units): 520 MiB of NUL bytes, one unit each.
  const size = 520 * 1024 * 1024
  fs.writeFileSync(path.join(tree.root, "text.bin"), "")
  fs.truncateSync(path.join(tree.root, "text.bin"), size)
  result = await everyEntry(tree.root, "text.bin", 600 * 1024 * 1024, { text: true, raw: false, perCall: false })
} else {
  console.error(`unknown scenario '${scenario}'`)
  process.exit(2)
}
console.log(JSON.stringify(result))
