/**
 * A directory moved out of the root while an operation works in it. The attacker (test/race/mover.c)
 * waits with inotify until the operation touches the directory (opens it, deletes or creates in
 * it), then renames that directory (or an ancestor) out of the root and, where the attack needs
 * it, moves something from outside into the departed tree. Each case says how the operation keeps
 * working there: the windows are its own (8 MiB of data, a long listing, thousands of unlinks), so the
 * attacker, woken by the kernel, wins them every time. A case counts only when the attacker's
 * renames really happened; the outcome is then checked on disk: nothing outside the root created,
 * deleted or listed, and the refusal typed (PermissionDenied, "moved out of the root").
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { type MoverEvent, type MoverOutcome, startMover } from "../support/mover.ts"
import { strategies, type TestStrategy } from "../support/strategies.ts"
import { scratch, type Scratch } from "../support/tree.ts"

/** An operation's outcome, and when it settled on the monotonic clock the mover's times are read from. */
type Settled<A> = ({ ok: true; value: A } | { ok: false; error: unknown }) & { readonly settledAt: bigint }

const settle = async <A>(p: Promise<A>): Promise<Settled<A>> =>
  p.then(
    (value) => ({ ok: true as const, value, settledAt: process.hrtime.bigint() }),
    (error: unknown) => ({ ok: false as const, error, settledAt: process.hrtime.bigint() })
  )

/**
 * The mover's order in every cell: at the first `on` event in `dir` (with `deep`, in it or below
 * it), take `dir` out of the root to the same name outside; then make the `plant` rename, when
 * given (something from outside moved into the departed tree).
 */
const takeOut = (
  s: Scratch,
  dir: string,
  on: MoverEvent,
  more: { readonly deep?: true; readonly acts?: ReadonlyArray<MoverEvent>; readonly plant?: readonly [string, string] } = {}
): Parameters<typeof startMover>[0] => ({
  watch: s.abs(dir),
  on,
  ...(more.deep ? { deep: true } : {}),
  ...(more.acts ? { acts: more.acts } : {}),
  renames: [[s.abs(dir), path.join(s.outside, dir)], ...(more.plant ? [more.plant] : [])]
})

/** Starts the mover, runs `act` under it once it watches, and answers both when the mover is done; closes the root. */
const underMover = async <A>(root: PinnedRoot, options: Parameters<typeof startMover>[0], act: () => Promise<A>) => {
  const mover = startMover(options)
  await mover.ready
  const result = await settle(act())
  const m = await mover.finish()
  root.close()
  return { result, m }
}

/**
 * Why an attempt is a lost race, proven, or `undefined` when the attack was live. Proven one of two
 * ways: the rename began only after the operation settled (the mover's clock is the one
 * process.hrtime reads); or the operation succeeded and the kernel's own event order puts its
 * every act in the directory before the move (the mover counts the acts it queued after it: none).
 * The second is needed because the settle is seen on the JavaScript thread after the native work
 * is done: on a loaded machine a rename that came after the operation's last act has been seen to
 * land up to 2 ms before that. It proves something only where the mover sees every act the
 * operation makes (`everyActWatched`: all of them in the watched directory itself); a deep
 * operation's later acts lie below it, out of its sight. A success with an act after the move is
 * never a lost race.
 */
const lostRace = (a: Attempt): string | undefined => {
  if (a.mover.renameStarted > a.settledAt) return `the rename began ${ms(a.mover.renameStarted - a.settledAt)} after the operation settled`
  if (a.everyActWatched && a.result.ok && a.mover.after === 0) {
    return `the operation succeeded with its last act in the directory before the move, in the kernel's event order (the rename returned ${ms(a.settledAt - a.mover.renameEnded)} before the settle was seen)`
  }
  return undefined
}

const ms = (ns: bigint) => `${(Number(ns) / 1e6).toFixed(2)} ms`

/**
 * A live attack was live all the way (the event came and every rename was done), and the
 * operation did at most one more watched act in the departed directory after the move: the one
 * already past its proof when the rename landed (the residual window), never a second.
 */
const live = (m: MoverOutcome, renames: number) => {
  expect(m.fired).toBe(true)
  expect(m.renamed).toBe(renames)
  expect(m.failed).toBe(0)
  expect(m.after).toBeLessThanOrEqual(1)
}

/** A departed-tree refusal: PermissionDenied, ours, and saying why. */
const movedOut = (r: { ok: boolean; error?: unknown }) => {
  expect(r.ok).toBe(false)
  const e = (r as { error: unknown }).error
  expect(e).toBeInstanceOf(PinnedFsError)
  const err = e as PinnedFsError
  expect(err.reason).toBe("PermissionDenied")
  expect(err.refusal).toBe("escape")
  expect(err.description).toMatch(/moved out of the root/)
}

/** A chain `a/d/d/…` of `depth` directories under `top`, each holding `files` files, and its deepest path. */
const chain = (s: Scratch, top: string, depth: number, files: number): string => {
  let rel = top
  for (let level = 0; level < depth; level++) {
    fs.mkdirSync(s.abs(rel), { recursive: true })
    for (let i = 0; i < files; i++) fs.writeFileSync(s.abs(`${rel}/f${i}`), "")
    rel = `${rel}/d`
  }
  fs.mkdirSync(s.abs(rel))
  return rel
}

/** An outside directory whose entries no listing may ever show. */
const leakDir = (s: Scratch): string => {
  const dir = path.join(s.outside, "leak")
  fs.mkdirSync(dir)
  fs.writeFileSync(path.join(dir, "outside-only-name.txt"), "x")
  return dir
}

/** Where `a` is after an attempt: moved outside, or still in the root. */
const whereIs = (s: Scratch, rel = "a"): string => (fs.existsSync(path.join(s.outside, rel)) ? path.join(s.outside, rel) : s.abs(rel))

/**
 * One attempt of an attack: what the mover saw, when the operation settled, whether it was refused
 * as moved out. The attempt has already checked the disk (whatever its outcome).
 */
interface Attempt {
  readonly mover: MoverOutcome
  readonly settledAt: bigint
  readonly result: { ok: boolean; error?: unknown }
  readonly renames: number
  /** Every act of the operation is on the watched directory itself, so the mover counts them all. */
  readonly everyActWatched: boolean
}

/**
 * Runs an attack at most `attempts` times until one is live, and requires that one refused as
 * moved out. A lost race is proven (see {@link lostRace}) before it is tried again, and a refusal in
 * a lost race is a false refusal; anything else is a failure, never a retry. `run` is told the
 * attempt's number (from 1) so that an attack may grow its tree after a lost race: on a loaded
 * machine the mover is scheduled late, and an operation that outlasts its lateness gives it the
 * window back.
 */
const untilLive = async (name: string, attempts: number, run: (attempt: number) => Promise<Attempt>): Promise<void> => {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const a = await run(attempt)
    expect(a.mover.fired, `${name}: the operation never raised the event the mover waits for`).toBe(true)
    const lost = lostRace(a)
    if (lost === undefined) {
      live(a.mover, a.renames)
      movedOut(a.result)
      return
    }
    expect(a.result, `${name}: refused although ${lost}`).toMatchObject({ ok: true })
    console.warn(`moved-out: "${name}": attempt ${attempt} lost the race, proven: ${lost}; trying again`)
  }
  expect.fail(`the mover never landed its rename while the operation ran, in ${attempts} attempts`)
}

/**
 * Writes 8 MiB to `rel` (atomic, durable) in a fresh scratch made of `tree`, while the mover takes
 * `a` outside once the write opens its temporary there and names it.
 */
const writeWhileMovedOut = async (strategy: TestStrategy, tree: Record<string, string>, rel: string) => {
  const s = scratch()
  s.make(tree)
  const root = await PinnedRoot.open(s.root, { strategy })
  const { result, m } = await underMover(root, takeOut(s, "a", "open", { acts: ["create", "moved_to"] }), () =>
    root.writeFile(rel, new Uint8Array(8 * 1024 * 1024), { atomic: true, durable: true })
  )
  return { s, m, result }
}

describe.each(strategies)("a directory moved out of the root mid-operation (%s)", (strategy) => {
  it("an atomic write never publishes its file into the departed directory", async () => {
    await untilLive("atomic write", 3, async () => {
      const { s, m, result } = await writeWhileMovedOut(strategy, { "a/": "" }, "a/published.bin")
      // On disk, whatever the outcome: nothing but `a` and the secret outside; in `a`, nothing
      // published unless the write succeeded, and then the whole file; no temporary anywhere.
      expect(fs.readdirSync(s.outside).sort()).toEqual(m.renamed > 0 ? ["a", "secret.txt"] : ["secret.txt"])
      const a = whereIs(s)
      expect(fs.readdirSync(a)).toEqual(result.ok ? ["published.bin"] : [])
      if (result.ok) expect(fs.statSync(path.join(a, "published.bin")).size).toBe(8 * 1024 * 1024)
      return { mover: m, settledAt: result.settledAt, result, renames: 1, everyActWatched: true }
    })
  })

  it("an atomic replacement never renames over the target in the departed directory", async () => {
    await untilLive("atomic replacement", 3, async () => {
      const { s, m, result } = await writeWhileMovedOut(strategy, { "a/target.bin": "old" }, "a/target.bin")
      const a = whereIs(s)
      // Refused: the target is untouched (a temporary already named in `a` stays there, ours);
      // succeeded: it was replaced whole before `a` left.
      if (result.ok) {
        expect(fs.readdirSync(a)).toEqual(["target.bin"])
        expect(fs.statSync(path.join(a, "target.bin")).size).toBe(8 * 1024 * 1024)
      } else {
        expect(fs.readFileSync(path.join(a, "target.bin"), "utf8")).toBe("old")
        for (const n of fs.readdirSync(a).filter((n) => n !== "target.bin")) expect(n).toMatch(/^\.pinnedfs-[0-9a-f]{16}\.tmp$/)
      }
      return { mover: m, settledAt: result.settledAt, result, renames: 1, everyActWatched: true }
    })
  })

  it("a recursive remove never deletes what was moved into the departed tree", async () => {
    await untilLive("recursive remove", 3, async () => {
      const s = scratch()
      for (let i = 0; i < 3000; i++) s.make({ [`p/a/f${i}`]: "" })
      const secret = path.join(s.outside, "secret.txt")
      const root = await PinnedRoot.open(s.root, { strategy })
      // At the first unlink in `a`, its parent goes outside and an outside file goes into `a`: the
      // remove, emptying `a` through the handle it holds, would find it on its next pass.
      // `p` and `a` are both watched, so every act of the remove (the unlinks in `a`, then `a` in
      // `p`) is in the mover's sight.
      const { result, m } = await underMover(
        root,
        takeOut(s, "p", "delete", { deep: true, plant: [secret, path.join(s.outside, "p/a/secret.txt")] }),
        () => root.remove("p/a", { recursive: true })
      )
      // The secret survives wherever it is: moved into the departed tree, or where it was when
      // the tree was already gone.
      const moved = path.join(s.outside, "p/a/secret.txt")
      expect(fs.readFileSync(fs.existsSync(moved) ? moved : secret, "utf8")).toBe("TOP SECRET")
      return { mover: m, settledAt: result.settledAt, result, renames: 2, everyActWatched: true }
    })
  })

  // A listing of "a" while the mover takes "a" out of the root at its first open and plants a leak
  // in its deepest directory: nothing from outside may ever be listed.
  // The listing finishes in a few milliseconds on a quiet machine; under CI load the mover has been
  // seen to wake after it three times in a row, so each lost attempt doubles the files per level
  // (40, 80, 160, 320, 640: at most 76,800 files, a few seconds to make).
  const listingBudget = 120_000
  const listsNothingDeparted = (label: string, list: (root: PinnedRoot) => Promise<ReadonlyArray<string>>) =>
    untilLive(label, 5, async (attempt) => {
      const s = scratch()
      const deepest = chain(s, "a", 120, 40 * 2 ** (attempt - 1))
      const leak = leakDir(s)
      const root = await PinnedRoot.open(s.root, { strategy })
      // Every directory of the chain is watched: each open the listing makes is in sight.
      const { result, m } = await underMover(
        root,
        takeOut(s, "a", "open", { deep: true, plant: [leak, path.join(s.outside, deepest, "leak")] }),
        () => list(root)
      )
      if (result.ok) expect(result.value.filter((n) => n.includes("outside-only"))).toEqual([])
      return { mover: m, settledAt: result.settledAt, result, renames: 2, everyActWatched: true }
    })

  it(
    "a recursive readDirectory never lists the departed tree",
    async () => {
      await listsNothingDeparted("recursive readDirectory", (root) => root.readDirectory("a", { recursive: true }))
    },
    listingBudget
  )

  it(
    "glob never descends into the departed tree",
    async () => {
      await listsNothingDeparted("glob", (root) => root.glob("a/**"))
    },
    listingBudget
  )

  it("mkdirs creates nothing in the departed directory", async () => {
    await untilLive("mkdirs", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      // Every directory of the plan goes straight into `a`, so the mover, watching `a`, sees each
      // creation, in order with the move: at most one of them lands after it.
      const plan = Array.from({ length: 1000 }, (_, i) => ({ path: `a/c${String(i).padStart(4, "0")}`, mode: 0o755 }))
      const mover = startMover(takeOut(s, "a", "create"))
      await mover.ready
      const out = await settle(root.mkdirs(plan))
      const m = await mover.finish()
      root.close()
      if (!out.ok) throw out.error
      const result = out.value
      // Exactly what it reports it created is there (wherever `a` went), nothing more.
      expect(fs.readdirSync(whereIs(s)).sort()).toEqual(result.created.map((c) => path.basename(c.path)))
      expect(result.created.length).toBe(result.error === null ? plan.length : result.created.length)
      return {
        mover: m,
        settledAt: out.settledAt,
        result: { ok: result.error === null, error: result.error ?? undefined },
        renames: 1,
        everyActWatched: true
      }
    })
  })

  it("makeDirectory({ recursive: true }) stops at the first level it would create in the departed tree", async () => {
    await untilLive("makeDirectory recursive", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      // 1,000 levels below `a`: the mover, woken by the first, moves `a` while the rest are made.
      const mover = startMover(takeOut(s, "a", "create"))
      await mover.ready
      const result = await settle(root.makeDirectory(`a/${"c/".repeat(1000)}c`, { recursive: true }))
      const m = await mover.finish()
      root.close()
      // One chain of "c" and nothing else, wherever `a` went: whole when the call succeeded.
      let depth = 0
      for (let at = whereIs(s); ; at = path.join(at, "c"), depth++) {
        const names = fs.readdirSync(at)
        if (names.length === 0) break
        expect(names).toEqual(["c"])
      }
      if (result.ok) expect(depth).toBe(1001)
      expect(fs.readdirSync(s.outside).sort()).toEqual(m.renamed > 0 ? ["a", "secret.txt"] : ["secret.txt"])
      return { mover: m, settledAt: result.settledAt, result, renames: 1, everyActWatched: false }
    })
  })

  it("rmdirs removes nothing from the departed directory", async () => {
    await untilLive("rmdirs", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      const made = await root.mkdirs(Array.from({ length: 1000 }, (_, i) => ({ path: `a/c${String(i).padStart(4, "0")}`, mode: 0o755 })))
      expect(made.error).toBeNull()
      // At the first removal in `a`, `a` goes outside; every later member is still there, untouched.
      const mover = startMover(takeOut(s, "a", "delete"))
      await mover.ready
      const out = await settle(root.rmdirs(made.created.map((c) => ({ path: c.path, identity: c.identity }))))
      const m = await mover.finish()
      root.close()
      if (!out.ok) throw out.error
      const result = out.value
      // What it says it removed is gone, and every other member is still there.
      const left = new Set(fs.readdirSync(whereIs(s)))
      for (const member of result.members) {
        expect({ member: member.path, there: left.has(path.basename(member.path)) }).toEqual({
          member: member.path,
          there: member.status !== "removed"
        })
      }
      const refused = result.members.find((x) => x.status === "refused")
      return {
        mover: m,
        settledAt: out.settledAt,
        result: { ok: !result.stopped, error: refused?.error ?? undefined },
        renames: 1,
        everyActWatched: true
      }
    })
  })

  it("copyFile never publishes its copy into the departed directory", async () => {
    const copied = 64 * 1024 * 1024
    await untilLive("copyFile", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      fs.writeFileSync(s.abs("src.bin"), Buffer.alloc(copied, 0x62))
      const root = await PinnedRoot.open(s.root, { strategy })
      // The copy makes its temporary in `a` and names it there once the data is in: the mover takes
      // `a` outside at the temporary's open. 64 MiB: copy_file_range copies in the kernel, so 8 MiB
      // was over before a mover on a loaded machine was scheduled.
      const { result, m } = await underMover(root, takeOut(s, "a", "open", { acts: ["create", "moved_to"] }), () =>
        root.copyFile("src.bin", "a/dst.bin")
      )
      expect(fs.readdirSync(s.outside).sort()).toEqual(m.renamed > 0 ? ["a", "secret.txt"] : ["secret.txt"])
      const a = whereIs(s)
      // Refused: nothing published (a temporary already named in `a` may stay there, ours);
      // succeeded: the whole copy, published before `a` left.
      const names = fs.readdirSync(a)
      if (result.ok) {
        expect(names).toEqual(["dst.bin"])
        expect(fs.statSync(path.join(a, "dst.bin")).size).toBe(copied)
      } else {
        for (const n of names) expect(n).toMatch(/^\.pinnedfs-[0-9a-f]{16}\.tmp$/)
      }
      expect(fs.statSync(s.abs("src.bin")).size).toBe(copied)
      return { mover: m, settledAt: result.settledAt, result, renames: 1, everyActWatched: true }
    })
  })

  it("cp -r stops at the first file it would make in the departed tree", async () => {
    await untilLive("cp recursive", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const names = Array.from({ length: 2000 }, (_, i) => `f${String(i).padStart(4, "0")}`)
      for (const n of names) s.make({ [`src/${n}`]: n })
      const root = await PinnedRoot.open(s.root, { strategy })
      // cp makes `a/dst` first, then its 2,000 files in it: the mover, woken by that mkdir, moves
      // `a` out while the files are still to come. The files land below the watched directory, out
      // of the mover's sight, so a success is never taken as a proven lost race.
      const mover = startMover(takeOut(s, "a", "create"))
      await mover.ready
      const result = await settle(root.cp("src", "a/dst", { recursive: true }))
      const m = await mover.finish()
      root.close()
      expect(fs.readdirSync(s.outside).sort()).toEqual(m.renamed > 0 ? ["a", "secret.txt"] : ["secret.txt"])
      const dst = path.join(whereIs(s), "dst")
      // Only the source's own names, each whole, wherever `a` went; all of them when it succeeded.
      const made = fs.existsSync(dst) ? fs.readdirSync(dst).sort() : []
      for (const n of made) expect(n.startsWith(".pinnedfs-") || fs.readFileSync(path.join(dst, n), "utf8") === n, n).toBe(true)
      if (result.ok) expect(made).toEqual(names)
      expect(fs.readdirSync(s.abs("src")).length).toBe(names.length)
      return { mover: m, settledAt: result.settledAt, result, renames: 1, everyActWatched: false }
    })
  })

  it("open: the only event it raises is its file's own open, so a move lands after the whole open", async () => {
    // Neither strategy opens a directory for reading on the way (one openat2, or the walk's O_PATH
    // steps, which inotify does not report), so the first event the attacker can wake on is the
    // open of the file itself, after the create. The cell shows that on every attempt, in the
    // kernel's own event order: the mover fired and moved `a`, and the open made no act after the
    // move. What a held directory would be exposed to mid-walk is pinned at an exact system call
    // by test/race/mid-walk.test.ts instead.
    for (let round = 0; round < 3; round++) {
      const s = scratch()
      const deepest = chain(s, "a", 40, 0)
      const root = await PinnedRoot.open(s.root, { strategy })
      const { result, m } = await underMover(root, takeOut(s, "a", "open", { deep: true, acts: ["create"] }), () =>
        root.open(`${deepest}/new.txt`, "wx").then((h) => h.close())
      )
      live(m, 1)
      expect(m.after).toBe(0)
      expect(result.ok).toBe(true)
      // Made before `a` left, and so found where `a` went; nothing else outside.
      expect(fs.existsSync(path.join(s.outside, deepest, "new.txt"))).toBe(true)
      expect(fs.readdirSync(s.outside).sort()).toEqual(["a", "secret.txt"])
    }
  })
})
