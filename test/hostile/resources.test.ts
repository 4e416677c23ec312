/**
 * Resource exhaustion under real limits: each scenario runs in a child process that prlimit(1) gives
 * a low RLIMIT_NOFILE or RLIMIT_AS once it has loaded, so the kernel itself says no (EMFILE, ENOMEM)
 * where an attacker would make it. The child must live (no SIGABRT from std::bad_alloc, no
 * SIGSEGV), and every failure must be typed: a resource error is never reported as an escape, and
 * an allocation that cannot be made is never an abort. See resources.child.mjs for the scenarios.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { strategies } from "../support/strategies.ts"
import { transpileSources } from "../support/transpile.ts"

const child = fileURLToPath(new URL("./resources.child.mjs", import.meta.url))
let transpiled = ""
beforeAll(() => {
  transpiled = transpileSources("resources")
})
afterAll(() => fs.rmSync(transpiled, { recursive: true, force: true }))

const workspaces: Array<string> = []
const workspace = (): string => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-resources-"))
  workspaces.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of workspaces.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

/** Runs a scenario in a child under `limit` (a prlimit option such as "--nofile=64"). */
const runLimited = (limit: string, strategy: string, scenario: string, dir: string, extra: ReadonlyArray<string> = []): any => {
  const out = spawnSync(process.execPath, [child, transpiled, strategy, limit, scenario, dir, ...extra], {
    encoding: "utf8",
    timeout: 240_000,
    maxBuffer: 1 << 24
  })
  expect(out.error).toBeUndefined()
  expect(out.signal, `child killed by ${out.signal}; stderr:\n${out.stderr}`).toBeNull()
  expect(out.status, out.stderr).toBe(0)
  const line = out.stdout.trim().split("\n").at(-1) ?? ""
  console.log(`resources ${scenario} ${extra.join(" ").slice(0, 40)} (${strategy}, ${limit}): ${line.slice(0, 600)}`)
  return JSON.parse(line)
}

/** A tree of `dirs` subdirectories of `t`, `files` empty files each. */
const wideTree = (root: string, dirs: number, files: number): void => {
  for (let d = 1; d <= dirs; d++) {
    const dir = path.join(root, "t", `d${d}`)
    fs.mkdirSync(dir, { recursive: true })
    for (let f = 0; f < files; f++) fs.closeSync(fs.openSync(path.join(dir, `f${f}`), "w"))
  }
}

describe.each(strategies)("descriptor exhaustion (%s)", (strategy) => {
  it.each(["PinnedRoot", "extension"])(
    "removes 6,000 files under `ulimit -n 64` through %s, never answering a false escape",
    (entry) => {
      const dir = workspace()
      // The descriptors a removal holds go with its directories, not its files: four directories
      // of 1,500 names each keep it listing and unlinking long after the limit was reached.
      wideTree(dir, 4, 1500)
      const r = runLimited("--nofile=64", strategy, "remove", dir, [entry])
      // Under the limit the remover keeps within the descriptors it has: the tree is gone.
      expect(r.first, JSON.stringify(r.first)).toEqual(expect.objectContaining({ ok: true }))
      expect(r.left).toBe(false)
    },
    300_000
  )
})

describe.each(strategies)("glob without a depth bound (%s)", (strategy) => {
  it("refuses `a/../` x 19,000 as toolarge with 200 MB of address space to spare, through PinnedRoot and the extension", () => {
    const dir = workspace()
    fs.mkdirSync(path.join(dir, "a"))
    const patternFile = path.join(workspace(), "pattern")
    fs.writeFileSync(patternFile, `${"a/../".repeat(19000)}a`)
    // 200 MB more than the child holds once loaded: a little more room than the absolute limit this
    // once set (1,228,800,000 bytes) left on Node 22, and still far less than frames growing with
    // the square of the pattern take. On Node 24 and 26 that absolute limit is below what Node
    // itself reserves at start, and the child aborted before the glob ran.
    const r = runLimited("--as=+200000000", strategy, "glob", dir, [patternFile])
    for (const entry of ["PinnedRoot", "extension"]) {
      expect(r[entry].ok, JSON.stringify(r[entry])).toBe(false)
      expect(r[entry].error.refusal).toBe("toolarge")
      expect(r[entry].error.reason).toBe("BadArgument")
      expect(r[entry].error.description).toMatch(/deeper than .*256 levels/)
    }
  }, 300_000)
})

/** `count` sparse files big-0… of `bytes` each: they cost the disk nothing, and a read the whole size. */
const sparseFiles = (dir: string, count: number, bytes: number): void => {
  for (let i = 0; i < count; i++) {
    const file = path.join(dir, `big-${i}`)
    fs.writeFileSync(file, "")
    fs.truncateSync(file, bytes)
  }
}

/** Every answer is the whole content or a typed ENOMEM: out of memory, or over the content budget. */
const contentOrTyped = (answers: ReadonlyArray<any>, bytes: number): { read: number; refused: number } => {
  let read = 0
  let refused = 0
  for (const a of answers) {
    if (a.ok) {
      expect(a.value).toBe(bytes)
      read++
    } else {
      expect(a.error.code, JSON.stringify(a)).toBe("ENOMEM")
      expect(a.error.description).toMatch(/out of memory|content budget/)
      refused++
    }
  }
  return { read, refused }
}

const MiB = 1024 * 1024

describe.each(strategies)("concurrent reads past memory (%s)", (strategy) => {
  // `ulimit -v 2500000`: KiB. 8 GiB of budget leaves the address space alone to say no.
  for (const budget of ["default", String(8 * 1024 * MiB)]) {
    it.each([
      { scenario: "reads", files: 8, what: "eight 400 MiB readFiles at once under `ulimit -v 2500000` live, each typed" },
      { scenario: "batch", files: 6, what: "a batch answering 2.4 GiB under `ulimit -v 2500000` lives, each member typed" }
    ])(
      `$what (budget ${budget})`,
      ({ scenario, files }) => {
        const dir = workspace()
        sparseFiles(dir, files, 400 * MiB)
        const r = runLimited("--as=2560000000", strategy, scenario, dir, [budget])
        let refused = 0
        for (const entry of ["PinnedRoot", "extension"]) {
          const counts = contentOrTyped(r[entry], 400 * MiB)
          expect(counts.read + counts.refused).toBe(files)
          refused += counts.refused
        }
        // The limit was live: not every read could be had at once.
        expect(refused).toBeGreaterThan(0)
        // Nothing stays charged once every answer has settled.
        expect(r.inFlight).toBe(0)
      },
      300_000
    )
  }
})
