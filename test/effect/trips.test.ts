/**
 * Reads submitted in one turn share one native trip (`trips.ts`). Sharing must change nothing a
 * caller can see: each read answers what it answers alone (a missing file, a link on the path, a
 * hard-linked file, a climb above the root, a FIFO, a file over the limit each fail alone, with the
 * same error), a root replaced after the reads were submitted refuses every one of them, an
 * interrupted read leaves the others to answer, and a defect in one member's continuation leaves
 * the rest settled.
 */
import { Cause, Effect, Exit, Fiber } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../../src/effect/index.ts"
import type { NativeRootHandle } from "../../src/internal/native.ts"
import { Trips } from "../../src/effect/trips.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo } from "../support/tree.ts"
import { type Host, host, rootIdentityOf, run, workspace } from "./support.ts"

const extensions: Array<{ close: () => void }> = []
afterEach(() => {
  for (const e of extensions.splice(0)) e.close()
})

/** An exit as comparable data: the value, or the failure's tag, message and reason. */
const shape = (exit: Exit.Exit<unknown, unknown>) => {
  if (Exit.isSuccess(exit)) return { ok: exit.value }
  const error = Cause.findErrorOption(exit.cause)
  if (error._tag === "None") return { defect: Cause.pretty(exit.cause) }
  const e = error.value as { message: string; reason: { _tag: string; description?: string } }
  return { failed: e.reason._tag, message: e.message, description: e.reason.description }
}

const make = (strategy: (typeof strategies)[number], options: Parameters<typeof NodeAtomicFileSystem.make>[0] = {}): Host => {
  const extension = NodeAtomicFileSystem.make({ strategy, ...options })
  extensions.push(extension)
  return host(extension)
}

describe.each(strategies)("reads of one turn on one trip (%s)", (strategy) => {
  const tree = () => {
    const w = workspace({
      "a.txt": "alpha",
      "d/b.txt": "beta",
      "big.txt": "x".repeat(5000),
      "d/e/": "",
      "h.txt": "linked",
      "s.txt": "only stat"
    })
    fs.symlinkSync("d", path.join(w.boundaryRoot, "link"))
    fs.symlinkSync(w.s.secret, path.join(w.boundaryRoot, "out"))
    fs.linkSync(path.join(w.boundaryRoot, "h.txt"), path.join(w.boundaryRoot, "hard.txt"))
    mkfifo(path.join(w.boundaryRoot, "fifo"))
    return w
  }

  it("answers each read as it answers alone, every refusal included", async () => {
    const w = tree()
    const h = make(strategy, { contentLimit: 4096 })
    const requests = [
      w.req("readFile", { path: w.b("a.txt") }),
      w.req("readFileString", { path: w.l("d/b.txt") }),
      w.req("readFile", { path: w.b("missing.txt") }),
      w.req("readFile", { path: w.b("link/b.txt") }),
      w.req("readFile", { path: w.b("out") }),
      w.req("readFile", { path: w.b("hard.txt") }),
      w.req("readFile", { path: w.b("d/../../outside/secret.txt") }),
      w.req("readFile", { path: w.b("fifo") }),
      w.req("readFile", { path: w.b("big.txt") }),
      w.req("stat", { path: w.b("s.txt") }),
      w.req("exists", { path: w.b("nothing") }),
      w.req("resolve", { path: w.b("link") }),
      w.req("readDirectory", { path: w.b("d"), options: { recursive: true } }),
      w.req("realPath", { path: w.b("d/e") }),
      w.req("readLink", { path: w.b("link") })
    ]
    const alone: Array<unknown> = []
    for (const r of requests) alone.push(shape(await run(h.execute(r))))
    // All submitted in one turn: one trip.
    const together = (await Promise.all(requests.map((r) => run(h.execute(r))))).map(shape)
    expect(together).toEqual(alone)
    // The refusals are refusals, not some other answer both ways.
    expect(alone.filter((a) => (a as { failed?: string }).failed !== undefined).length).toBeGreaterThanOrEqual(7)
    expect(fs.readFileSync(w.s.secret, "utf8")).not.toBe("")
  })

  it("refuses every read of the turn when the root is replaced after they were submitted", async () => {
    const w = tree()
    const h = make(strategy)
    // The root is cached and checked by a first read.
    expect(shape(await run(h.execute(w.req("readFileString", { path: w.b("a.txt") }))))).toEqual({ ok: "alpha" })
    const pending = Array.from({ length: 20 }, () => run(h.execute(w.req("readFileString", { path: w.b("a.txt") }))))
    // Still the same turn: nothing has reached the worker. The workspace is renamed away and a
    // stranger with the same names put at its path.
    const away = `${w.boundaryRoot}.away`
    fs.renameSync(w.boundaryRoot, away)
    fs.mkdirSync(w.boundaryRoot)
    fs.writeFileSync(path.join(w.boundaryRoot, "a.txt"), "stranger")
    try {
      expect(rootIdentityOf(w.boundaryRoot)).not.toBe(w.rootIdentity)
      const answers = (await Promise.all(pending)).map(shape)
      for (const a of answers) {
        expect(a).toMatchObject({ failed: "Busy" })
        expect((a as { description?: string }).description ?? "").toContain("workspace_identity_changed")
      }
    } finally {
      fs.rmSync(w.boundaryRoot, { recursive: true, force: true })
      fs.renameSync(away, w.boundaryRoot)
    }
  })

  it("carries a burst larger than one trip holds, each read answered in its own order", async () => {
    const names = Array.from({ length: 600 }, (_, i) => `f${i}.txt`)
    const w = workspace(Object.fromEntries(names.map((n) => [n, n])))
    const h = make(strategy)
    const answers = await Promise.all(names.map((n) => Effect.runPromise(h.execute(w.req("readFileString", { path: w.b(n) })))))
    expect(answers).toEqual(names)
  })

  it("an interrupted read leaves the others of its trip to answer", async () => {
    const w = tree()
    const h = make(strategy)
    const fibers = Array.from({ length: 8 }, () => Effect.runFork(h.execute(w.req("readFileString", { path: w.b("a.txt") }))))
    await Effect.runPromise(Fiber.interrupt(fibers[3]!))
    const exits = await Promise.all(fibers.map((f) => Effect.runPromise(Fiber.await(f))))
    exits.forEach((exit, i) => {
      if (i === 3) expect(Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)).toBe(true)
      else expect(shape(exit)).toEqual({ ok: "alpha" })
    })
  })
})

describe("Trips", () => {
  /** A handle that answers from a table, recording each trip. */
  const fake = (answers: Record<string, unknown>) => {
    const trips: Array<{ kind: "call" | "readMany"; paths: ReadonlyArray<string>; verify: unknown }> = []
    const handle = {
      call: (_op: number, p: string, _r: boolean, _l: number | undefined, verify: unknown) => {
        trips.push({ kind: "call", paths: [p], verify })
        return p in answers ? Promise.resolve(answers[p]) : Promise.reject({ code: "ENOENT", path: p })
      },
      readMany: (_ops: Uint8Array, paths: ReadonlyArray<string>, _r: Uint8Array, _s: number, _b: number, verify: unknown) => {
        trips.push({ kind: "readMany", paths, verify })
        return Promise.resolve([
          Uint8Array.from(paths, (p) => (p in answers ? 0 : 1)),
          paths.map((p) => answers[p] ?? { code: "ENOENT", path: p })
        ])
      }
    } as unknown as NativeRootHandle
    return { handle, trips }
  }

  it("sends one turn's reads in one trip per root check, and a read alone on its own", async () => {
    const { handle, trips } = fake({ a: 1, b: 2 })
    const t = new Trips(100)
    const got: Array<unknown> = []
    let finish: (tag: string) => (u: unknown) => void = () => () => undefined
    const all = new Promise<void>((resolve) => {
      let left = 4
      finish = (tag) => (u) => {
        got.push([tag, u])
        if (--left === 0) resolve()
      }
    })
    t.submit(handle, true, 2, "a", false, 100, finish("ok a"), finish("no a"))
    t.submit(handle, true, 2, "zz", false, 100, finish("ok zz"), finish("no zz"))
    t.submit(handle, "/alias", 2, "b", false, 100, finish("ok b"), finish("no b"))
    t.submit(handle, true, 2, "b", false, 100, finish("ok b2"), finish("no b2"))
    expect(trips).toEqual([])
    await all
    expect(trips).toEqual([
      { kind: "readMany", paths: ["a", "zz", "b"], verify: true },
      { kind: "call", paths: ["b"], verify: "/alias" }
    ])
    expect(got).toContainEqual(["ok a", 1])
    expect(got).toContainEqual(["no zz", { code: "ENOENT", path: "zz" }])
    expect(got).toContainEqual(["ok b", 2])
    expect(got).toContainEqual(["ok b2", 2])
  })

  it("settles the rest of a trip when one member's continuation throws, and reports the throw", async () => {
    const { handle } = fake({ a: 1, b: 2 })
    const thrown: Array<unknown> = []
    const t = new Trips(100, (defect) => thrown.push(defect))
    const second = new Promise((resolve) => {
      t.submit(
        handle,
        true,
        2,
        "a",
        false,
        100,
        () => {
          throw new Error("defect in a continuation")
        },
        () => undefined
      )
      t.submit(handle, true, 2, "b", false, 100, resolve, () => undefined)
    })
    expect(await second).toBe(2)
    expect(thrown.map((e) => (e as Error).message)).toEqual(["defect in a continuation"])
  })
})
