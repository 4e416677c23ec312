/**
 * Crash safety and durability are separate promises (docs/write-semantics.md): every whole-file
 * write is crash-safe (a rename), and only a durable one is fsynced. Checked where it shows, in the
 * system calls: each entry's write in a child under strace, by default and with its `durable`
 * option. By default no fsync at all; durable, the data before the rename and the directory after.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"
import { scratch } from "../support/tree.ts"

const strace = spawnSync("strace", ["-V"]).status === 0
let transpiled = ""
beforeAll(() => {
  transpiled = transpileSources("durable")
})
afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

// One write of f.txt (existing) through one entry, then one of new.txt.
const child = `
const path = require("node:path")
const [lib, entry, strategy, root, durable] = process.argv.slice(1)
const on = durable === "durable"
const load = (p) => import(path.join(lib, p))
;(async () => {
  const { Effect } = await import("effect")
  const viaWire = async (atomic) => {
    const rootIdentity = await Effect.runPromise(atomic.identifyRoot(root))
    for (const name of ["f.txt", "new.txt"]) {
      await Effect.runPromise(atomic.execute({ boundaryRoot: root, logicalRoot: root, rootIdentity, operation: "writeFileString", path: path.join(root, name), data: "new" }))
    }
  }
  if (entry === "PinnedRoot") {
    const { PinnedRoot } = await load("index.js")
    const r = await PinnedRoot.open(root, { strategy })
    for (const name of ["f.txt", "new.txt"]) await r.writeFileString(name, "new", on ? { durable: true } : undefined)
    r.close()
  } else if (entry === "NodeAtomicFileSystem") {
    const { NodeAtomicFileSystem } = await load("effect/index.js")
    const ext = NodeAtomicFileSystem.make({ strategy, durable: on })
    await viaWire(ext)
    ext.close()
  } else {
    const { PathAtomicFileSystem } = await load("fallback/index.js")
    await viaWire(PathAtomicFileSystem.make({ durable: on }))
  }
})().catch((e) => { console.error(e); process.exit(1) })
`

/** The sync calls a write made, as strace saw them: "fsync(N) = 0" and the like, descriptors elided. */
const syncsOf = (entry: string, strategy: string, durable: boolean): ReadonlyArray<string> => {
  const s = scratch()
  s.make({ "f.txt": "old" })
  const trace = path.join(path.dirname(s.root), "trace")
  const out = spawnSync(
    "strace",
    [
      "-f",
      "-qq",
      "-o",
      trace,
      "-e",
      "trace=fsync,fdatasync,syncfs,sync",
      process.execPath,
      "-e",
      child,
      transpiled,
      entry,
      strategy,
      s.root,
      durable ? "durable" : "plain"
    ],
    { encoding: "utf8", timeout: 120_000 }
  )
  expect(out.stderr).toBe("")
  expect(out.status).toBe(0)
  expect(fs.readFileSync(s.abs("f.txt"), "utf8")).toBe("new")
  expect(fs.readFileSync(s.abs("new.txt"), "utf8")).toBe("new")
  expect(fs.readdirSync(s.root).sort()).toEqual(["f.txt", "new.txt"])
  return fs
    .readFileSync(trace, "utf8")
    .split("\n")
    .filter((l) => /(fsync|fdatasync|syncfs|sync)\(/.test(l))
    .map((l) =>
      l
        .replace(/^\d+\s+/, "")
        .replace(/\(\d+\)/, "(N)")
        .replace(/\s+/g, " ")
    )
}

const entries = [
  ...strategies.flatMap((strategy) => [["PinnedRoot", strategy] as const, ["NodeAtomicFileSystem", strategy] as const]),
  ["PathAtomicFileSystem", "-"] as const
]

describe.each(entries)("%s (%s): crash-safe by default, durable when asked", (entry, strategy) => {
  it("fsyncs nothing by default, and the data and the directory of each write when durable", (ctx) => {
    skipUnless(ctx, strace, "strace is not installed (apt-get install strace): nothing to watch the system calls with")
    expect(syncsOf(entry, strategy, false)).toEqual([])
    // Two writes: each fsyncs its data, then (after the rename or link) its directory.
    expect(syncsOf(entry, strategy, true)).toEqual(["fsync(N) = 0", "fsync(N) = 0", "fsync(N) = 0", "fsync(N) = 0"])
  }, 120_000)
})
