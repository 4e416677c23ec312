/**
 * A directory moved out of the root while an operation works in it. The attacker (test/race/mover.c)
 * waits with inotify until the operation touches the directory (opens it, deletes or creates in
 * it), then renames that directory (or an ancestor) out of the root and, where the attack needs
 * it, moves something from outside into the departed tree. Each case says how the operation keeps
 * working there: the windows are its own (an fsync, a long listing, thousands of unlinks), so the
 * attacker, woken by the kernel, wins them every time. A case counts only when the attacker's
 * renames really happened; the outcome is then checked on disk: nothing outside the root created,
 * deleted or listed, and the refusal typed (PermissionDenied, "moved out of the root").
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { startMover, type MoverOutcome } from "../support/mover.ts"
import { strategies } from "../support/strategies.ts"
import { scratch, type Scratch } from "../support/tree.ts"

const settle = async <A>(p: Promise<A>): Promise<{ ok: true; value: A } | { ok: false; error: unknown }> =>
  p.then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error })
  )

/**
 * The attack was live (the event came and every rename was done), and the operation did at most
 * one more watched act in the departed directory after the move: the one already past its proof
 * when the rename landed (the residual window), never a second.
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

/**
 * Runs one attack until the attacker wins its window, at most `attempts` times. The operation's
 * window (thousands of acts, an fsync) is long next to the mover's wake-up, but on a loaded machine
 * the scheduler can keep the mover off the CPU until the operation is done: that attempt is a lost
 * race, not a pass. Every attempt must be safe (`run` checks the disk and, when refused, the typed
 * refusal) and at least one must see the operation refused.
 */
const untilWon = async (name: string, attempts: number, run: () => Promise<boolean>): Promise<void> => {
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (await run()) return
    console.warn(
      `moved-out: "${name}": attempt ${attempt} finished before the mover's rename landed (a lost race, machine busy); trying again`
    )
  }
  expect.fail(`the mover never landed its rename inside the operation in ${attempts} attempts`)
}

/** The refusal check for a settled result: refused means moved out (and the attacker won). */
const refusedMovedOut = (r: { ok: boolean; error?: unknown }): boolean => {
  if (r.ok) return false
  movedOut(r)
  return true
}

describe.each(strategies)("a directory moved out of the root mid-operation (%s)", (strategy) => {
  it("an atomic write never publishes its file into the departed directory", async () => {
    await untilWon("atomic write", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      // The write opens `a` (to create, rename and fsync in it); the mover then takes `a` outside
      // while the 8 MiB are written and synced.
      const mover = startMover({ watch: s.abs("a"), on: "open", renames: [[s.abs("a"), path.join(s.outside, "a")]] })
      await mover.ready
      const result = await settle(root.writeFile("a/published.bin", new Uint8Array(8 * 1024 * 1024), { atomic: true }))
      live(await mover.finish(), 1)
      root.close()
      if (!result.ok) expect(fs.existsSync(path.join(s.outside, "a/published.bin"))).toBe(false)
      return refusedMovedOut(result)
    })
  })

  it("a recursive remove never deletes what was moved into the departed tree", async () => {
    await untilWon("recursive remove", 3, async () => {
      const s = scratch()
      for (let i = 0; i < 3000; i++) s.make({ [`p/a/f${i}`]: "" })
      const secret = path.join(s.outside, "secret.txt")
      const root = await PinnedRoot.open(s.root, { strategy })
      // At the first unlink in `a`, its parent goes outside and an outside file goes into `a`: the
      // remove, emptying `a` through the handle it holds, would find it on its next pass.
      const mover = startMover({
        watch: s.abs("p/a"),
        on: "delete",
        renames: [
          [s.abs("p"), path.join(s.outside, "p")],
          [secret, path.join(s.outside, "p/a/secret.txt")]
        ]
      })
      await mover.ready
      const result = await settle(root.remove("p/a", { recursive: true }))
      live(await mover.finish(), 2)
      root.close()
      expect(fs.readFileSync(path.join(s.outside, "p/a/secret.txt"), "utf8")).toBe("TOP SECRET")
      return refusedMovedOut(result)
    })
  })

  // A listing of "a" while the mover takes "a" out of the root at its first open and plants a leak
  // in its deepest directory: nothing from outside may ever be listed, and a round counts as won
  // when the listing was refused as moved out.
  const listsNothingDeparted = (label: string, list: (root: PinnedRoot) => Promise<ReadonlyArray<string>>) =>
    untilWon(label, 3, async () => {
      const s = scratch()
      const deepest = chain(s, "a", 120, 40)
      const leak = leakDir(s)
      const root = await PinnedRoot.open(s.root, { strategy })
      const mover = startMover({
        watch: s.abs("a"),
        on: "open",
        renames: [
          [s.abs("a"), path.join(s.outside, "a")],
          [leak, path.join(s.outside, deepest, "leak")]
        ]
      })
      await mover.ready
      const result = await settle(list(root))
      live(await mover.finish(), 2)
      root.close()
      if (result.ok) expect(result.value.filter((n) => n.includes("outside-only"))).toEqual([])
      return refusedMovedOut(result)
    })

  it("a recursive readDirectory never lists the departed tree", async () => {
    await listsNothingDeparted("recursive readDirectory", (root) => root.readDirectory("a", { recursive: true }))
  })

  it("glob never descends into the departed tree", async () => {
    await listsNothingDeparted("glob", (root) => root.glob("a/**"))
  })

  it("mkdirs creates nothing in the departed directory", async () => {
    await untilWon("mkdirs", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      // Every directory of the plan goes straight into `a`, so the mover, watching `a`, sees each
      // creation, in order with the move: at most one of them lands after it.
      const plan = Array.from({ length: 1000 }, (_, i) => ({ path: `a/c${String(i).padStart(4, "0")}`, mode: 0o755 }))
      const mover = startMover({ watch: s.abs("a"), on: "create", renames: [[s.abs("a"), path.join(s.outside, "a")]] })
      await mover.ready
      const result = await root.mkdirs(plan)
      live(await mover.finish(), 1)
      root.close()
      if (result.error === null) {
        expect(result.created.length).toBe(plan.length)
        return false
      }
      expect(result.created.length).toBeLessThan(plan.length)
      return refusedMovedOut({ ok: false, error: result.error })
    })
  })

  it("makeDirectory({ recursive: true }) stops at the first level it would create in the departed tree", async () => {
    await untilWon("makeDirectory recursive", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      // 1,000 levels below `a`: the mover, woken by the first, moves `a` while the rest are made.
      const mover = startMover({ watch: s.abs("a"), on: "create", renames: [[s.abs("a"), path.join(s.outside, "a")]] })
      await mover.ready
      const result = await settle(root.makeDirectory(`a/${"c/".repeat(1000)}c`, { recursive: true }))
      live(await mover.finish(), 1)
      root.close()
      return refusedMovedOut(result)
    })
  })

  it("rmdirs removes nothing from the departed directory", async () => {
    await untilWon("rmdirs", 3, async () => {
      const s = scratch()
      s.make({ "a/": "" })
      const root = await PinnedRoot.open(s.root, { strategy })
      const made = await root.mkdirs(Array.from({ length: 1000 }, (_, i) => ({ path: `a/c${String(i).padStart(4, "0")}`, mode: 0o755 })))
      expect(made.error).toBeNull()
      // At the first removal in `a`, `a` goes outside; every later member is still there, untouched.
      const mover = startMover({ watch: s.abs("a"), on: "delete", renames: [[s.abs("a"), path.join(s.outside, "a")]] })
      await mover.ready
      const result = await root.rmdirs(made.created.map((c) => ({ path: c.path, identity: c.identity })))
      live(await mover.finish(), 1)
      root.close()
      if (!result.stopped) return false
      expect(result.members.some((m) => m.status === "refused")).toBe(true)
      expect(fs.readdirSync(path.join(s.outside, "a")).length).toBeGreaterThan(0)
      return true
    })
  })
})
