/**
 * `{ signal }` on readFile, writeFile, readDirectory, glob and remove, and unknown options refused on
 * every method that takes options. Each outcome is compared with node:fs/promises on a twin tree
 * where Node has the option (readFile, writeFile, readdir, rm has none: there the tree is compared).
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { rejection } from "../support/rejection.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { twinOf } from "./twin.ts"

const aborted = (): AbortSignal => {
  const c = new AbortController()
  c.abort(new Error("stop"))
  return c.signal
}

/** The rejection of an aborted call: Node's AbortError shape. */
const abortRejection = async (p: Promise<unknown>): Promise<Error & { code?: string }> => {
  const e = await p.then(
    () => undefined,
    (u: unknown) => u
  )
  expect(e).toBeInstanceOf(Error)
  expect((e as Error).name).toBe("AbortError")
  expect((e as { code?: string }).code).toBe("ABORT_ERR")
  return e as Error & { code?: string }
}

/** A tree of `n` files in nested directories, at `base`. */
const wide = (base: string, dirs: number, files: number): void => {
  for (let d = 0; d < dirs; d++) {
    fs.mkdirSync(`${base}/d${d}`, { recursive: true })
    for (let f = 0; f < files; f++) fs.writeFileSync(`${base}/d${d}/f${f}`, "x")
  }
}

const count = (dir: string): number => (fs.existsSync(dir) ? fs.readdirSync(dir, { recursive: true }).length : -1)

describe.each(strategies)("abort (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/file.txt": "hello", "keep.txt": "old", "tree/x/y.txt": "y" })
    // The twin: the same tree beside, for node:fs/promises.
    const twin = twinOf(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, twin, root }
  }

  it("a pre-aborted remove({ recursive: true }) removes nothing", async () => {
    const { s, root } = await setup()
    const e = await abortRejection(root.remove("tree", { recursive: true, signal: aborted() }))
    expect((e.cause as Error).message).toBe("stop")
    expect(fs.existsSync(s.abs("tree/x/y.txt"))).toBe(true)
    root.close()
  })

  it("a pre-aborted writeFile leaves the old content, as Node's does", async () => {
    const { s, twin, root } = await setup()
    await abortRejection(root.writeFile("keep.txt", Buffer.from("new"), { signal: aborted() }))
    await abortRejection(root.writeFileString("keep.txt", "new", { signal: aborted() }))
    await abortRejection(fsp.writeFile(`${twin}/keep.txt`, "new", { signal: aborted() }))
    expect(fs.readFileSync(s.abs("keep.txt"), "utf8")).toBe("old")
    expect(fs.readFileSync(`${twin}/keep.txt`, "utf8")).toBe("old")
    // A pre-aborted write of a new file creates nothing.
    await abortRejection(root.writeFile("new.txt", Buffer.from("n"), { signal: aborted() }))
    expect(fs.existsSync(s.abs("new.txt"))).toBe(false)
    root.close()
  })

  it("pre-aborted reads reject as Node's readFile and readdir do", async () => {
    const { twin, root } = await setup()
    await abortRejection(root.readFile("a/b/file.txt", { signal: aborted() }))
    await abortRejection(root.readFileString("a/b/file.txt", { signal: aborted() }))
    await abortRejection(fsp.readFile(`${twin}/a/b/file.txt`, { signal: aborted() }))
    await abortRejection(root.readDirectory("", { recursive: true, signal: aborted() }))
    await abortRejection(root.glob("**", { signal: aborted() }))
    await abortRejection(root.globListing("**", { signal: aborted() }))
    root.close()
  })

  it("a signal that never fires changes nothing: the same answers as without one", async () => {
    const { s, twin, root } = await setup()
    const signal = new AbortController().signal
    expect((await root.readFile("a/b/file.txt", { signal })).toString()).toBe(await fsp.readFile(`${twin}/a/b/file.txt`, "utf8"))
    expect(await root.readDirectory("", { recursive: true, signal })).toEqual(await root.readDirectory("", { recursive: true }))
    expect(await root.glob("**/*.txt", { signal })).toEqual(await root.glob("**/*.txt"))
    await root.writeFileString("keep.txt", "new", { signal })
    await fsp.writeFile(`${twin}/keep.txt`, "new", { signal })
    expect(fs.readFileSync(s.abs("keep.txt"), "utf8")).toBe(fs.readFileSync(`${twin}/keep.txt`, "utf8"))
    await root.remove("tree", { recursive: true, signal })
    expect(fs.existsSync(s.abs("tree"))).toBe(false)
    // Refusals still come through the signal's path typed as before.
    expect((await rejection(root.readFile("../outside/secret.txt", { signal }))).reason).toBe("PermissionDenied")
    expect((await rejection(root.readFile("nope", { signal }))).code).toBe("ENOENT")
    root.close()
  })

  it("an abort during a recursive remove stops it between unlinks (bounded, asserted on disk)", async () => {
    const { s, root } = await setup()
    // Each round checks on disk whether the abort came in time (some of the tree left) or too late
    // (all gone, and then the call resolved); at least one round must have stopped midway. The
    // abort follows the first unlink the JavaScript thread sees, which on a loaded machine (a
    // shared test process, two cores) can be most of the tree later: each round that came too late
    // doubles the tree, up to 32,000 files.
    let stoppedMidway = 0
    for (let round = 0; round < 8 && stoppedMidway === 0; round++) {
      const dir = `big${round}`
      wide(s.abs(dir), 40, 100 << Math.min(round, 3))
      const before = count(s.abs(dir))
      // The remover takes each directory's entries in the order getdents gives them, as
      // readdirSync does: each directory's first entry is the first of it to go.
      const firsts = fs.readdirSync(s.abs(dir)).map((d) => s.abs(`${dir}/${d}/${fs.readdirSync(s.abs(`${dir}/${d}`))[0]}`))
      const c = new AbortController()
      const p = root.remove(dir, { recursive: true, signal: c.signal })
      // Abort once the worker has demonstrably started: some directory's first file is gone.
      for (let spin = 0; spin < 100_000 && firsts.every((f) => fs.existsSync(f)); spin++) {
        await new Promise((r) => setImmediate(r))
      }
      c.abort()
      const outcome = await p.then(
        () => "done" as const,
        (e: unknown) => e
      )
      const left = count(s.abs(dir))
      if (outcome === "done") {
        expect(left).toBe(-1)
      } else {
        expect((outcome as Error).name, String(outcome)).toBe("AbortError")
        // Stopped between acts: something was removed and the directory stays. An abort that
        // lands after the last entry went and before the directory itself leaves it empty; only a
        // round with entries left counts as stopped midway.
        expect(left).toBeGreaterThanOrEqual(0)
        expect(left).toBeLessThan(before)
        if (left > 0) stoppedMidway++
      }
    }
    expect(stoppedMidway).toBeGreaterThan(0)
    root.close()
  })

  it("a signal that is not an AbortSignal is a BadArgument", async () => {
    const { root } = await setup()
    const bad = { aborted: true } as unknown as AbortSignal
    for (const p of [
      root.readFile("keep.txt", { signal: bad }),
      root.writeFile("keep.txt", Buffer.from("x"), { signal: bad }),
      root.readDirectory("", { signal: bad }),
      root.glob("*", { signal: bad }),
      root.remove("tree", { recursive: true, signal: bad })
    ]) {
      expect((await rejection(p)).reason).toBe("BadArgument")
    }
    expect(fs.readFileSync(`${root.path}/keep.txt`, "utf8")).toBe("old")
    root.close()
  })
})

describe.each(strategies)("unknown options are refused (%s)", (strategy) => {
  it("on every method that takes options, before anything is done", async () => {
    const s = scratch()
    s.make({ "keep.txt": "old", "tree/x.txt": "x" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const bogus = { bogus: true } as never
    const calls: Array<[string, () => Promise<unknown>]> = [
      ["open", () => PinnedRoot.open(s.root, { strategy, bogus } as never)],
      ["stat", () => root.stat("keep.txt", bogus)],
      ["readFile", () => root.readFile("keep.txt", bogus)],
      ["readFileString", () => root.readFileString("keep.txt", bogus)],
      ["readDirectory", () => root.readDirectory("", { recursive: true, recurse: true } as never)],
      ["glob", () => root.glob("*", bogus)],
      ["globListing", () => root.globListing("*", bogus)],
      ["makeDirectory", () => root.makeDirectory("made", bogus)],
      ["remove", () => root.remove("tree", { recursive: true, recursiv: true } as never)],
      ["rename", () => root.rename("keep.txt", "moved.txt", bogus)],
      ["writeFile", () => root.writeFile("keep.txt", Buffer.from("new"), bogus)],
      ["writeFileString", () => root.writeFileString("keep.txt", "new", { flags: "a" } as never)],
      ["batch", () => root.batch([], bogus)]
    ]
    for (const [name, call] of calls) {
      const e = await rejection(call())
      expect(e.reason, name).toBe("BadArgument")
      expect(e.message, name).toMatch(/unknown option/)
    }
    // A non-object where options go is refused too.
    expect((await rejection(root.readDirectory("", "yes" as never))).reason).toBe("BadArgument")
    expect((await rejection(root.stat("keep.txt", 1 as never))).reason).toBe("BadArgument")
    // Nothing was done.
    expect(fs.readFileSync(s.abs("keep.txt"), "utf8")).toBe("old")
    expect(fs.existsSync(s.abs("tree/x.txt"))).toBe(true)
    expect(fs.existsSync(s.abs("made"))).toBe(false)
    root.close()
  })
})
