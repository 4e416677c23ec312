/**
 * A writer killed mid-write (SIGKILL, as `kill -9`), through every entry a whole-file write takes:
 * `PinnedRoot.writeFile` with no options, the extension's `writeFile` and `writeFileString` (every
 * write of the client's kernel and of ours is one of these), our kernel itself, and the path-based
 * fallback. The kill lands at a random byte of the payload (seeded, printed, so a failure replays):
 * the interposer (native/test/interpose.c) sends SIGKILL from inside the very write(2) that crosses
 * that byte, so every kill is known to fall inside a write. After each, the file holds the version
 * before the killed write or the version it was writing, whole, and nothing else is in the
 * directory: no temporary file, no prefix.
 *
 * The moments around the rename (the temporary named, the rename done) are reproduced one by one in
 * the last suite: what each leaves is the documented residual, not luck.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildHelper } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"
import { scratch } from "../support/tree.ts"
// @ts-expect-error: a plain ES module shared with the child, no declaration file
import { bytesThrough, versionOf } from "./killed-write.versions.mjs"

const child = fileURLToPath(new URL("./killed-write.child.mjs", import.meta.url))
let transpiled = ""
let interposer = ""
beforeAll(() => {
  transpiled = transpileSources("killed-write")
  interposer = buildHelper("native/test/interpose.c", "interpose.so", { shared: true })
})
afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

/** A small, seeded generator: the kill points of a run are reproducible from the seed it prints. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

interface Killed {
  readonly signal: NodeJS.Signals | null
  readonly status: number | null
  readonly started: number
  readonly done: number
  readonly stderr: string
  readonly fired: string
}

/** Runs the writer until the interposer acts at `at` (`PINNEDFS_DO=kill`), and says what it had done. */
const runKilled = (entry: string, strategy: string, root: string, at: string, extra: Record<string, string> = {}): Killed => {
  const report = path.join(path.dirname(root), "report")
  const out = spawnSync(process.execPath, [child, transpiled, entry, strategy, root, "f.bin"], {
    encoding: "utf8",
    timeout: 120_000,
    env: { ...process.env, LD_PRELOAD: interposer, PINNEDFS_AT: at, PINNEDFS_DO: "kill", PINNEDFS_REPORT: report, ...extra }
  })
  const lines = out.stdout.split("\n")
  const last = (tag: string) => Math.max(0, ...lines.filter((l) => l.startsWith(`${tag} `)).map((l) => Number(l.slice(2))))
  const fired = fs.existsSync(report) ? fs.readFileSync(report, "utf8") : ""
  fs.rmSync(report, { force: true })
  return { signal: out.signal, status: out.status, started: last("S"), done: last("D"), stderr: out.stderr, fired }
}

/**
 * Which version `f.bin` holds, whole (or what is wrong with it), and what else the directory holds:
 * nothing, or where `temporaries` allows it, one temporary of the named path (removed here, so the
 * next kill starts clean).
 */
const versionOnDisk = (root: string, temporaries: "none" | "named"): number | string => {
  const names = fs.readdirSync(root).sort()
  const others = names.filter((n) => n !== "f.bin")
  const leftover = temporaries === "named" && others.length === 1 && /^\.pinnedfs-[0-9a-f]{16}\.tmp$/.test(others[0]!)
  if (!names.includes("f.bin") || (others.length > 0 && !leftover)) return `directory holds ${JSON.stringify(names)}`
  if (leftover) fs.rmSync(path.join(root, others[0]!))
  const content = fs.readFileSync(path.join(root, "f.bin"))
  const match = /^<v(\d+)>/.exec(content.subarray(0, 16).toString("latin1"))
  if (match === null) return `content starts ${JSON.stringify(content.subarray(0, 16).toString("latin1"))}`
  const k = Number(match[1])
  return content.equals(versionOf(k)) ? k : `version ${k} torn: ${content.length} of ${versionOf(k).length} bytes`
}

/**
 * `kills` kills at random payload bytes of the first three versions: each must leave the version
 * before the killed write, or the one it wrote, whole, and no other entry (`temporaries: "named"`:
 * at most the one temporary a named-temporary write had open).
 */
const killMidWrite = (
  entry: string,
  strategy: string,
  kills: number,
  temporaries: "none" | "named" = "none",
  env: Record<string, string> = {}
) => {
  const seed = Math.floor(Math.random() * 2 ** 31)
  const next = random(seed)
  const s = scratch()
  fs.writeFileSync(s.abs("f.bin"), versionOf(0))
  for (let i = 0; i < kills; i++) {
    const byte = 1 + Math.floor(next() * (bytesThrough(3) - 1))
    const killed = runKilled(entry, strategy, s.root, `bytes:${byte}`, env)
    // The kill happened inside a write of this run, which started and had not settled.
    expect({ seed, byte, signal: killed.signal, stderr: killed.stderr }).toEqual({ seed, byte, signal: "SIGKILL", stderr: "" })
    expect(killed.fired).toMatch(/^fired bytes /)
    expect(killed.started).toBe(killed.done + 1)
    const onDisk = versionOnDisk(s.root, temporaries)
    const oldOrNew = onDisk === killed.done || onDisk === killed.started
    expect({ seed, byte, onDisk: oldOrNew ? "old or new" : onDisk }).toEqual({ seed, byte, onDisk: "old or new" })
    // Every run starts from version 0 again, so the versions it may leave are known.
    fs.writeFileSync(s.abs("f.bin"), versionOf(0))
  }
}

describe.each(strategies)("a whole-file write killed mid-write (%s)", (strategy) => {
  it("PinnedRoot.writeFile with no options: old or new, whole, and no temporary file (12 kills)", () => {
    killMidWrite("pinned", strategy, 12)
  }, 300_000)

  it("the extension's writeFile and writeFileString, every kernel's write: old or new, no temporary file (2 x 5 kills)", () => {
    killMidWrite("extension", strategy, 5)
    killMidWrite("extension-string", strategy, 5)
  }, 300_000)

  it("pinnedfs/kernel's writeFile over the extension: old or new, no temporary file (3 kills)", () => {
    killMidWrite("kernel", strategy, 3)
  }, 300_000)

  // macOS, and file systems without O_TMPFILE: the temporary has a name while it is written.
  it("without O_TMPFILE (the named temporary, macOS's path): old or new, whole; the killed write's temporary is all it leaves (5 kills)", () => {
    killMidWrite("pinned", strategy, 5, "named", { PINNEDFS_NO_TMPFILE: "1" })
  }, 300_000)
})

describe("a whole-file write killed mid-write (path-based fallback)", () => {
  // Node has no O_TMPFILE with a following linkat, so the fallback's temporary is named throughout.
  it("PathAtomicFileSystem's writeFile: old or new, whole; the killed write's temporary is all it leaves (5 kills)", () => {
    killMidWrite("fallback", "walk", 5, "named")
  }, 300_000)
})

describe.each(strategies)("a whole-file write killed at each step of its publication (%s)", (strategy) => {
  /** Kills the first write (version 1, over version 0 unless `fresh`) where `at` says; answers what the directory holds. */
  const killAt = (at: string, fresh = false): Record<string, string> => {
    const s = scratch()
    if (!fresh) fs.writeFileSync(s.abs("f.bin"), versionOf(0))
    const killed = runKilled("pinned", strategy, s.root, at)
    expect({ at, signal: killed.signal, fired: killed.fired.split(" ").slice(0, 3).join(" ") }).toEqual({
      at,
      signal: "SIGKILL",
      fired: `fired ${at.split(":").slice(0, 2).join(":")} none`
    })
    expect(killed.started).toBe(1)
    const out: Record<string, string> = {}
    for (const name of fs.readdirSync(s.root).sort()) {
      const content = fs.readFileSync(path.join(s.root, name))
      const k = [0, 1].find((v) => content.equals(versionOf(v)))
      out[name.startsWith(".pinnedfs-") ? "temporary" : name] = k === undefined ? `${content.length} other bytes` : `v${k}`
    }
    return out
  }

  it("a new file: nothing, or the whole new file once linked", () => {
    expect(killAt("before:linkat:f.bin", true)).toEqual({})
    expect(killAt("after:linkat:f.bin", true)).toEqual({ "f.bin": "v1" })
  }, 120_000)

  it("a replacement: the old file until the rename, the new one after it; killed between the temporary's name and the rename, the complete temporary beside the old file", () => {
    // The one moment a replacement leaves a temporary: linkat has named it and renameat has not
    // moved it yet (one proof and one rename apart). It is complete, and the target is untouched.
    expect(killAt("after:linkat:.pinnedfs-*")).toEqual({ "f.bin": "v0", temporary: "v1" })
    expect(killAt("before:renameat:f.bin")).toEqual({ "f.bin": "v0", temporary: "v1" })
    expect(killAt("after:renameat:f.bin")).toEqual({ "f.bin": "v1" })
  }, 120_000)
})
