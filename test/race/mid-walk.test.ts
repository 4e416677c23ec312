/**
 * A directory moved out of the root at an exact system call of a write, every time: the
 * interposer (native/test/interpose.c, LD_PRELOAD in a child) renames it out right after the call
 * named, so the move lands where a planted bug would let the write follow it, not wherever a race
 * happens to put it. Two proofs are pinned down here, each the only thing between the move and a
 * write outside:
 *
 *  - the walk's proof of a parent before it creates or writes the leaf in it (core/walk.cc): the
 *    walk opens `a`, `a` goes outside, then the leaf would be opened in it;
 *  - the replacement's proof before `renameat` (ops/write_atomic.cc), on the path that replaces an
 *    existing file: the temporary is named in `a`, `a` goes outside with the target in it, then the
 *    rename would replace that target, now outside.
 *
 * Each case checks that the move really happened (the interposer's report), that the write was
 * refused as moved out, and that the departed directory's file is byte for byte what it was.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { buildHelper } from "../../scripts/race/run.mjs"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"

const packageRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "..")
let interposer = ""
beforeAll(() => {
  interposer = buildHelper("native/test/interpose.c", "interpose.so", { shared: true })
})

// One raw addon request in a child (the interposer acts in the process it is loaded into): pin,
// write, print the outcome.
const child = `
const b = require("node-gyp-build")(process.argv[1])
const [root, strategy, request] = process.argv.slice(2)
const r = JSON.parse(request)
b.pin(root, strategy).then((h) => h.execute({ ...r, op: b.ops.writeFile, data: Buffer.from(r.data), flag: b.flags[r.flag] }))
  .then(() => console.log(JSON.stringify({ ok: true })), (e) => console.log(JSON.stringify({ ok: false, refusal: e.refusal, code: e.code, description: e.description })))
`

interface Outcome {
  readonly ok: boolean
  readonly refusal?: string
  readonly code?: string
  readonly description?: string
  readonly fired: string
}

const writeWithMove = (
  root: string,
  strategy: string,
  request: Record<string, unknown>,
  at: string,
  from: string,
  to: string,
  env: Record<string, string> = {}
): Outcome => {
  const report = path.join(path.dirname(root), "report")
  const out = spawnSync(process.execPath, ["-e", child, packageRoot, root, strategy, JSON.stringify(request)], {
    encoding: "utf8",
    timeout: 60_000,
    env: {
      ...process.env,
      LD_PRELOAD: interposer,
      PINNEDFS_AT: at,
      PINNEDFS_DO: "rename",
      PINNEDFS_FROM: from,
      PINNEDFS_TO: to,
      PINNEDFS_REPORT: report,
      ...env
    }
  })
  expect(out.stderr).toBe("")
  const fired = fs.existsSync(report) ? fs.readFileSync(report, "utf8").trim() : ""
  fs.rmSync(report, { force: true })
  return { ...(JSON.parse(out.stdout) as Omit<Outcome, "fired">), fired }
}

const movedOut = (o: Outcome) => {
  expect(o.fired).toMatch(/ renamed /)
  expect({ ok: o.ok, refusal: o.refusal }).toEqual({ ok: false, refusal: "escape" })
  expect(o.description).toMatch(/moved out of the root/)
}

describe.each(strategies)("a write whose directory leaves the root at an exact system call (%s)", (strategy) => {
  const setup = () => {
    const s = scratch()
    s.make({ "a/f.txt": "old" })
    return { s, a: s.abs("a"), departed: path.join(s.outside, "a") }
  }

  // In place, the walk opens each directory of the path, then the leaf in the last one: a move
  // right after `a` is opened lands before the leaf's open, where only the walk's proof stands.
  // One openat2 resolves the whole path under the kernel strategy: there is no such moment.
  const inPlace = [
    { name: "an append", request: { path: "a/f.txt", data: "+PWNED", flag: "a" } },
    { name: "an r+ overwrite", request: { path: "a/f.txt", data: "PWNED", flag: "r+" } },
    { name: "an in-place w", request: { path: "a/f.txt", data: "PWNED", flag: "w", inPlace: true } },
    { name: "an in-place create", request: { path: "a/new.txt", data: "PWNED", flag: "w", inPlace: true } }
  ]
  for (const { name, request } of inPlace) {
    it(`${name}: the walk proves the parent it holds before opening the leaf in it`, () => {
      const { s, a, departed } = setup()
      const o = writeWithMove(s.root, strategy, request, "after:openat:a", a, departed)
      if (strategy === "walk") {
        movedOut(o)
      } else {
        expect({ fired: o.fired, ok: o.ok }).toEqual({ fired: "", ok: true })
        return
      }
      expect(fs.readdirSync(departed)).toEqual(["f.txt"])
      expect(fs.readFileSync(path.join(departed, "f.txt"), "utf8")).toBe("old")
    })
  }

  // The replacement of an existing file: the temporary is named in `a` (linkat of the anonymous
  // file; the named path's own create), then renamed over the target. A move between the two must
  // be caught by the proof before the rename, or the rename replaces the target outside.
  const replacements: ReadonlyArray<{ name: string; at: string; env: Record<string, string> }> = [
    { name: "O_TMPFILE, then linkat", at: "after:linkat:.pinnedfs-*", env: {} },
    { name: "the named temporary (macOS's path)", at: "after:openat:.pinnedfs-*", env: { PINNEDFS_NO_TMPFILE: "1" } }
  ]
  for (const { name, at, env } of replacements) {
    it(`replacing an existing file through ${name}: the proof before renameat refuses the departed directory`, () => {
      const { s, a, departed } = setup()
      const o = writeWithMove(s.root, strategy, { path: "a/f.txt", data: "PWNED", flag: "w" }, at, a, departed, env)
      movedOut(o)
      // The target, now outside, was not replaced; the temporary stays where it was named (a
      // directory that left the root is never written again), holding only our bytes.
      expect(fs.readFileSync(path.join(departed, "f.txt"), "utf8")).toBe("old")
      const others = fs.readdirSync(departed).filter((n) => n !== "f.txt")
      expect(others).toHaveLength(1)
      expect(others[0]).toMatch(/^\.pinnedfs-[0-9a-f]{16}\.tmp$/)
      expect(fs.readdirSync(s.root)).toEqual([])
    })

    it(`wx through ${name}: the create is refused in the departed directory too`, () => {
      const { s, a, departed } = setup()
      // wx publishes where nothing has the name: by linkat straight to it (anonymous), or by a
      // create-only rename of the named temporary; the move lands before either.
      const trigger = env["PINNEDFS_NO_TMPFILE"] ? at : "after:openat:."
      const o = writeWithMove(s.root, strategy, { path: "a/new.txt", data: "PWNED", flag: "wx" }, trigger, a, departed, env)
      movedOut(o)
      expect(fs.existsSync(path.join(departed, "new.txt"))).toBe(false)
    })
  }
})
