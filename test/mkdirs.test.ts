import * as fs from "node:fs"
import * as path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { PinnedRoot } from "../src/index.ts"
import { native, type NativeRequest } from "../src/internal/native.ts"
import { noTestHooks, testHooks, trips } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { raceRounds, snapshot } from "./support/attacker.ts"
import { asRoot, NOBODY, requestsAsNobody } from "./support/nobody.ts"
import { strategies } from "./support/strategies.ts"
import { scratch } from "./support/tree.ts"
import { rejection as refusal } from "./support/rejection.ts"

const identityOf = (abs: string) => {
  const st = fs.lstatSync(abs, { bigint: true })
  return `${st.dev}:${st.ino}`
}
const modeOf = (abs: string) => fs.lstatSync(abs).mode & 0o7777

// A restrictive umask makes "exact mode" observable: mkdirat alone would give 0700 at most.
let savedUmask = 0
beforeEach(() => {
  savedUmask = process.umask(0o077)
})
afterEach(() => {
  process.umask(savedUmask)
})

describe.each(strategies)("mkdirs (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }
  // Runs mkdirs through the native handle with the test hook between plan and run.
  const withHook = async (
    root: PinnedRoot,
    plan: Array<{ path: string; mode?: number }>,
    testAfterPlan: Array<{ kind: string; path: string; to?: string }>
  ) => {
    const out = (await root.handle.execute({ op: native.ops.mkdirs, plan, testAfterPlan } as NativeRequest)) as {
      created: Array<{ path: string; identity: string }>
      error: { code: string; refusal: string; description: string } | null
    }
    return out
  }

  it("orders an overlapping plan parent before child and skips what exists", async () => {
    const { s, root } = await setup()
    s.make({ "a/": "" })
    fs.chmodSync(s.abs("a"), 0o751)
    const before = identityOf(s.abs("a"))
    const r = await root.mkdirs([
      { path: "a/b/c", mode: 0o700 },
      { path: "a/d", mode: 0o755 },
      { path: "a/b", mode: 0o750 },
      { path: "a", mode: 0o777 },
      { path: "a/b/c/", mode: 0o700 } // the same directory again, same mode: one entry
    ])
    expect(r.error).toBeNull()
    expect(r.created.map((c) => c.path)).toEqual(["a/b", "a/b/c", "a/d"])
    for (const c of r.created) expect(c.identity).toBe(identityOf(s.abs(c.path)))
    expect(identityOf(s.abs("a"))).toBe(before)
    expect(modeOf(s.abs("a"))).toBe(0o751) // existing: never chmod'ed
    // Running the same plan again creates nothing.
    const again = await root.mkdirs([
      { path: "a/b/c", mode: 0o700 },
      { path: "a/d", mode: 0o755 }
    ])
    expect(again).toEqual({ created: [], error: null })
  })

  it("creates implied ancestors with the mode of the entry that implies them, and reports them", async () => {
    const { s, root } = await setup()
    const r = await root.mkdirs([{ path: "x/y/z", mode: 0o755 }])
    expect(r.error).toBeNull()
    expect(r.created.map((c) => c.path)).toEqual(["x", "x/y", "x/y/z"])
    for (const p of ["x", "x/y", "x/y/z"]) expect(modeOf(s.abs(p))).toBe(0o755)
  })

  it("gives every created directory exactly its mode under a restrictive umask", async () => {
    const { s, root } = await setup()
    const modes: Record<string, number> = { m1: 0o755, m2: 0o777, m3: 0o1777, m4: 0o711, m5: 0o2770, "m1/inner": 0o705 }
    const r = await root.mkdirs(Object.entries(modes).map(([p, mode]) => ({ path: p, mode })))
    expect(r.error).toBeNull()
    for (const [p, mode] of Object.entries(modes)) expect(modeOf(s.abs(p))).toBe(mode)
    // Default mode is 0777, exactly.
    const d = await root.mkdirs([{ path: "dflt" }])
    expect(d.error).toBeNull()
    expect(modeOf(s.abs("dflt"))).toBe(0o777)
  })

  it("is one trip off the JavaScript thread, whatever the plan's size", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { root } = await setup()
    const plan = ["p", "p/q", "p/q/r", "p/s", "t"].map((p) => ({ path: p, mode: 0o700 }))
    const t0 = trips()
    const r = await root.mkdirs(plan)
    expect(trips() - t0).toBe(1)
    expect(r.created).toHaveLength(5)
    const t1 = trips()
    const big = await root.mkdirs(Array.from({ length: 40 }, (_, i) => ({ path: `big/${i}/x` })))
    expect(trips() - t1).toBe(1)
    expect(big.created).toHaveLength(81)
    const t2 = trips()
    const gone = await root.rmdirs([...r.created, ...big.created])
    expect(trips() - t2).toBe(1)
    expect(gone.members.every((m) => m.status === "removed")).toBe(true)
  })

  it("refuses a symlink where a directory is wanted, first, in the middle or last, creating nothing", async () => {
    const { s, root } = await setup()
    s.make({ "d/": "" })
    fs.symlinkSync(s.outside, s.abs("ln"))
    fs.symlinkSync(s.outside, s.abs("d/ln"))
    fs.symlinkSync("..", s.abs("d/up")) // a link that stays inside is still a link
    const before = snapshot(s.outside)
    for (const p of ["ln", "ln/new", "d/ln/new/deeper", "d/up/x"]) {
      const r = await root.mkdirs([
        { path: "fresh", mode: 0o700 },
        { path: p, mode: 0o700 }
      ])
      expect(r.created).toEqual([])
      expect(r.error?.reason).toBe("PermissionDenied")
      expect(r.error?.refusal).toBe("symlink")
    }
    expect(fs.existsSync(s.abs("fresh"))).toBe(false)
    expect(snapshot(s.outside)).toEqual(before)
  })

  it("treats a file in the way as Node does: EEXIST for the entry, ENOTDIR on the way", async () => {
    const { s, root } = await setup()
    s.make({ f: "x" })
    const named = await root.mkdirs([{ path: "f" }])
    expect(named.error?.reason).toBe("AlreadyExists")
    const through = await root.mkdirs([{ path: "f/x/y" }])
    expect(through.error?.code).toBe("ENOTDIR")
    expect(through.error?.reason).toBe("BadResource")
  })

  it("resolves .. physically and refuses it above the root", async () => {
    const { s, root } = await setup()
    s.make({ "a/": "" })
    fs.symlinkSync(".", s.abs("self"))
    const r = await root.mkdirs([{ path: "a/../b", mode: 0o700 }])
    expect(r.created.map((c) => c.path)).toEqual(["b"])
    expect((await root.mkdirs([{ path: "self/../c" }])).error?.refusal).toBe("symlink")
    expect(fs.existsSync(s.abs("c"))).toBe(false)
    const e = await refusal(root.mkdirs([{ path: `../${path.basename(s.outside)}/x` }]))
    expect(e.refusal).toBe("escape")
    expect(fs.existsSync(path.join(s.outside, "x"))).toBe(false)
  })

  it("stops at a directory that appeared after planning: no chmod of it, created ones still returned", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root } = await setup()
    s.make({ "x/": "" })
    const out = await withHook(
      root,
      [
        { path: "x/a", mode: 0o755 },
        { path: "x/a/b", mode: 0o755 },
        { path: "x/c", mode: 0o777 },
        { path: "x/d", mode: 0o755 }
      ],
      [{ kind: "mkdir", path: "x/c" }]
    )
    expect(out.error?.code).toBe("EEXIST")
    expect(out.created.map((c) => c.path)).toEqual(["x/a", "x/a/b"])
    for (const c of out.created) expect(c.identity).toBe(identityOf(s.abs(c.path)))
    expect(modeOf(s.abs("x/a"))).toBe(0o755)
    // The newcomer is not ours: created by the hook with 0755 under umask 077, never chmod'ed to 0777.
    expect(modeOf(s.abs("x/c"))).toBe(0o700)
    expect(fs.existsSync(s.abs("x/d"))).toBe(false)
  })

  it("stops when a parent is no longer the directory planned or created", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root } = await setup()
    s.make({ "e/": "" })
    // Replaced by another directory: an identity change, refused visibly.
    const swapped = await withHook(
      root,
      [{ path: "e/n", mode: 0o700 }],
      [
        { kind: "rename", path: "e", to: "e.old" },
        { kind: "mkdir", path: "e" }
      ]
    )
    expect(swapped.created).toEqual([])
    expect(swapped.error?.refusal).toBe("identity")
    expect(fs.existsSync(s.abs("e/n"))).toBe(false)
    // Replaced by a file: not a directory any more.
    const filed = await withHook(
      root,
      [{ path: "e/n", mode: 0o700 }],
      [
        { kind: "rmdir", path: "e" },
        { kind: "file", path: "e" }
      ]
    )
    expect(filed.created).toEqual([])
    expect(filed.error?.code).toBe("ENOTDIR")
    // A planned-missing parent that appears as a file.
    const appeared = await withHook(
      root,
      [
        { path: "p", mode: 0o700 },
        { path: "p/q", mode: 0o700 }
      ],
      [{ kind: "file", path: "p" }]
    )
    expect(appeared.created).toEqual([])
    expect(appeared.error?.code).toBe("EEXIST")
  })

  it("never follows an ancestor swapped for a link to outside after planning", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root } = await setup()
    s.make({ "e/": "" })
    fs.symlinkSync(s.outside, s.abs("lnk"))
    const before = snapshot(s.outside)
    const out = await withHook(
      root,
      [
        { path: "e/n", mode: 0o777 },
        { path: "e/n/m", mode: 0o777 }
      ],
      [
        { kind: "rename", path: "e", to: "e.aside" },
        { kind: "rename", path: "lnk", to: "e" }
      ]
    )
    expect(out.created).toEqual([])
    expect(out.error?.refusal).toBe("symlink")
    expect(snapshot(s.outside)).toEqual(before)
  })

  it("rejects malformed plans with BadArgument before touching anything", async () => {
    const { s, root } = await setup()
    const bad: Array<unknown> = [
      undefined,
      null,
      "a",
      { path: "a" },
      [null],
      ["a"],
      [{ path: 1 }],
      [{ path: s.abs("abs") }],
      [{ path: "a", mode: -1 }],
      [{ path: "a", mode: 0o10000 }],
      [{ path: "a", mode: 1.5 }],
      [{ path: "a", mode: "0755" }],
      [{ path: "a\0b" }],
      [{ path: "x".repeat(300) }],
      [
        { path: "dup", mode: 0o700 },
        { path: "dup/", mode: 0o755 }
      ]
    ]
    for (const plan of bad) {
      const e = await refusal((async () => root.mkdirs(plan as never))())
      expect(e.reason).toBe("BadArgument")
    }
    // The native layer checks on its own, for callers that skip PinnedRoot.
    for (const request of [
      { op: native.ops.mkdirs },
      { op: native.ops.mkdirs, plan: "a" },
      { op: native.ops.mkdirs, plan: [{ path: "a", mode: 4096 }] }
    ]) {
      const e = await refusal(root.run(request as NativeRequest, "mkdirs"))
      expect(e.reason).toBe("BadArgument")
    }
    expect(fs.readdirSync(s.root)).toEqual([])
  })
})

describe.each(strategies)("rmdirs (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    const root = await PinnedRoot.open(s.root, { strategy })
    const made = await root.mkdirs(["a", "a/b", "a/b/c", "a/d", "e"].map((p) => ({ path: p, mode: 0o700 })))
    expect(made.error).toBeNull()
    return { s, root, created: made.created }
  }

  it("removes what mkdirs created, child before parent, in one trip", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { s, root, created } = await setup()
    const t0 = trips()
    const r = await root.rmdirs(created) // given parent-first: run child-first
    expect(trips() - t0).toBe(1)
    expect(r.stopped).toBe(false)
    expect(r.members.map((m) => [m.path, m.status])).toEqual([
      ["e", "removed"],
      ["a/d", "removed"],
      ["a/b/c", "removed"],
      ["a/b", "removed"],
      ["a", "removed"]
    ])
    expect(fs.readdirSync(s.root)).toEqual([])
  })

  it("keeps a non-empty directory quietly and reports an already-removed one as missing", async () => {
    const { s, root, created } = await setup()
    fs.writeFileSync(s.abs("a/d/user-file"), "keep me")
    fs.rmdirSync(s.abs("e"))
    const r = await root.rmdirs(created)
    const status = Object.fromEntries(r.members.map((m) => [m.path, m.status]))
    expect(status).toEqual({ e: "missing", "a/d": "kept", "a/b/c": "removed", "a/b": "removed", a: "kept" })
    expect(r.stopped).toBe(false)
    expect(r.members.find((m) => m.path === "a/d")?.error?.code).toBe("ENOTEMPTY")
    expect(fs.readFileSync(s.abs("a/d/user-file"), "utf8")).toBe("keep me")
  })

  it("refuses a replaced directory visibly; a required refusal stops, an optional one does not", async () => {
    const { s, root, created } = await setup()
    // Same name, another directory (the old one is kept so its inode number cannot be reused).
    fs.renameSync(s.abs("a/d"), s.abs("d.old"))
    fs.mkdirSync(s.abs("a/d"))
    const required = await root.rmdirs(created)
    expect(required.stopped).toBe(true)
    expect(required.members.map((m) => [m.path, m.status])).toEqual([
      ["e", "removed"],
      ["a/d", "refused"]
    ])
    expect(required.members[1]?.error?.refusal).toBe("identity")
    expect(required.members[1]?.error?.reason).toBe("Busy")
    expect(fs.existsSync(s.abs("a/b/c"))).toBe(true)
    const optional = await root.rmdirs(created.map((c) => ({ ...c, optional: true })))
    expect(optional.stopped).toBe(false)
    expect(Object.fromEntries(optional.members.map((m) => [m.path, m.status]))).toEqual({
      e: "missing",
      "a/d": "refused",
      "a/b/c": "removed",
      "a/b": "removed",
      a: "kept"
    })
    expect(fs.existsSync(s.abs("a/d"))).toBe(true)
  })

  it("refuses a member whose parent was swapped for a link to outside, or no longer resolves", async () => {
    const { s, root, created } = await setup()
    fs.mkdirSync(path.join(s.outside, "b"))
    fs.mkdirSync(path.join(s.outside, "b/c"))
    const before = snapshot(s.outside)
    fs.renameSync(s.abs("a"), s.abs("a.moved"))
    fs.symlinkSync(s.outside, s.abs("a"))
    const r = await root.rmdirs(created.map((c) => ({ ...c, optional: true })))
    const byPath = Object.fromEntries(r.members.map((m) => [m.path, m]))
    expect(byPath["a/b/c"]?.status).toBe("refused")
    expect(byPath["a/b/c"]?.error?.refusal).toBe("symlink")
    expect(byPath["a"]?.status).toBe("refused")
    expect(snapshot(s.outside)).toEqual(before)
    fs.unlinkSync(s.abs("a"))
    const gone = await root.rmdirs([{ path: "a/b/c", identity: created[2]!.identity }])
    expect(gone.members[0]?.status).toBe("refused")
    expect(gone.members[0]?.error?.reason).toBe("NotFound")
  })

  it("refuses a member that is now a symbolic link or a file, removing neither", async () => {
    const { s, root, created } = await setup()
    const e = created.find((c) => c.path === "e")!
    fs.rmdirSync(s.abs("e"))
    fs.symlinkSync(s.outside, s.abs("e"))
    const r = await root.rmdirs([
      { ...e, optional: true },
      { path: "f", identity: e.identity, optional: true }
    ])
    expect(r.members[0]?.status).toBe("missing") // "f": never existed
    expect(r.members[1]?.error?.refusal).toBe("symlink")
    expect(fs.lstatSync(s.abs("e")).isSymbolicLink()).toBe(true)
    fs.unlinkSync(s.abs("e"))
    fs.writeFileSync(s.abs("e"), "")
    const f = await root.rmdirs([e])
    expect(f.members[0]?.error?.code).toBe("ENOTDIR")
    expect(fs.existsSync(s.abs("e"))).toBe(true)
  })

  it("rejects malformed members with BadArgument", async () => {
    const { s, root, created } = await setup()
    const id = created[0]!.identity
    const bad: Array<unknown> = [
      undefined,
      "a",
      { path: "a", identity: id },
      [null],
      [{ path: "a" }],
      [{ path: 1, identity: id }],
      [{ path: s.abs("a"), identity: id }],
      [{ path: "", identity: id }],
      [{ path: "a/..", identity: id }],
      [
        { path: "a", identity: id },
        { path: "a/", identity: "1:2" }
      ],
      ...["", "1:", ":2", "-1:2", "a:b", "1:2:3", " 1:2", "+1:2", "1:2 ", "18446744073709551616:1", "1"].map((identity) => [
        { path: "a", identity }
      ])
    ]
    for (const owned of bad) {
      const e = await refusal((async () => root.rmdirs(owned as never))())
      expect(e.reason).toBe("BadArgument")
    }
    expect(fs.existsSync(s.abs("a/b/c"))).toBe(true)
    const escape = await refusal(root.rmdirs([{ path: "../outside", identity: id }]))
    expect(escape.refusal).toBe("escape")
    expect(fs.existsSync(s.outside)).toBe(true)
  })
})

describe.each(strategies)("directory programs under an attacker swapping an ancestor (%s)", (strategy) => {
  it("create and remove only inside, refuse the link when they meet it, never touch the outside", async () => {
    const s = scratch()
    const target = path.join(s.outside, "target")
    // The outside directory the link points at mirrors the names the programs use, so a program
    // that followed the link would create, chmod or remove there.
    for (const d of ["", "p", "p/q", "s", "p2", "x2"]) fs.mkdirSync(path.join(target, d), { recursive: true })
    for (const d of ["", "p", "p/q", "s", "p2", "x2"]) fs.chmodSync(path.join(target, d), 0o700)
    fs.mkdirSync(s.abs("w"))
    fs.symlinkSync(target, s.abs("lnk"))
    const before = snapshot(s.outside)
    // Lies told to rmdirs: identities that exist only outside, so resolution is the only barrier.
    const lies = ["p2", "x2"].map((p) => ({ path: `w/${p}`, identity: identityOf(path.join(target, p)), optional: true }))
    const root = await PinnedRoot.open(s.root, { strategy })
    const planned = ["w/p", "w/p/q", "w/p/q/r", "w/s", "w/s/t"]
    const plan = planned.map((p) => ({ path: p, mode: 0o777 }))
    // The failures the attack explains: the link met, the lookup left the root, a name that was a
    // link when opened and a directory again when asked why.
    const allowed = ["symlink", "escape", "ENOTDIR"]
    const word = (e: { code: string; refusal: string }) => e.refusal || e.code
    const race = await raceRounds({
      // w flips between the real directory and the link to the outside mirror.
      pairs: [[s.abs("w"), s.abs("lnk")]],
      maxRounds: 400,
      maxMs: 3000,
      reset: () => {
        fs.rmSync(s.abs("w"), { recursive: true, force: true })
        fs.mkdirSync(s.abs("w"))
      },
      round: async () => {
        const made = await root.mkdirs(plan)
        const cleaned = await root.rmdirs([...made.created.map((c) => ({ ...c, optional: true })), ...lies])
        return { made, cleaned }
      },
      inspect: ({ made, cleaned }) => {
        const wrong: Array<string> = []
        const created = made.created.map((c) => c.path)
        // Created in plan order, all of it unless a step was refused; then what came before it.
        if (made.error === null ? created.join() !== planned.join() : created.join() !== planned.slice(0, created.length).join()) {
          wrong.push(`created ${created.join()}`)
        }
        if (made.error !== null && !allowed.includes(word(made.error))) wrong.push(`mkdirs failed ${word(made.error)}`)
        cleaned.members.forEach((m) => {
          const lie = lies.some((l) => l.path === m.path)
          const ok = lie ? ["missing", "refused"] : ["removed", "kept", "refused"]
          if (!ok.includes(m.status)) wrong.push(`${m.path} ${m.status}`)
          if (m.status === "refused" && !allowed.includes(word(m.error!))) wrong.push(`${m.path} refused ${word(m.error!)}`)
        })
        const met = made.error !== null || cleaned.members.some((m) => m.status === "refused")
        return { wrong, met, whole: made.error === null }
      }
    })
    expect(race.answers.flatMap((a) => a.wrong)).toEqual([])
    // The attack was live: exchanges the kernel did, and programs that met the link and said so.
    expect(race.swaps).toBeGreaterThan(0)
    expect(race.answers.filter((a) => a.met).length).toBeGreaterThan(0)
    // And the programs worked between the exchanges.
    expect(race.answers.filter((a) => a.whole).length).toBeGreaterThan(0)
    expect(snapshot(s.outside)).toEqual(before)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })
})

/** Native requests run in a child as `nobody`: a test as root proves nothing about permissions. */
const asNobody = (root: string, strategy: string, requests: ReadonlyArray<Record<string, unknown>>) =>
  requestsAsNobody(root, strategy, requests) as Array<{
    ok: boolean
    code?: string
    uid: number
    value?: {
      created: Array<{ path: string }>
      error: { code: string } | null
      members: Array<{ status: string; error: { code: string } | null }>
      stopped: boolean
    }
  }>

describe.each(strategies)("directory operations without privileges (%s)", (strategy) => {
  it("answer PermissionDenied where the caller may not write, keeping what was created", async () => {
    const s = scratch()
    for (let d = s.root; d !== path.dirname(path.dirname(s.root)); d = path.dirname(d)) fs.chmodSync(d, 0o755)
    s.make({ "ro/kept/": "", "ro/tree/sub/file": "x" })
    if (asRoot) {
      // The child runs as nobody: give it the tree, so only the 0555 modes stand in its way.
      for (const p of ["", "ro", "ro/kept", "ro/tree", "ro/tree/sub", "ro/tree/sub/file"]) fs.chownSync(s.abs(p), NOBODY, NOBODY)
    }
    fs.chmodSync(s.abs("ro/tree/sub"), 0o555)
    fs.chmodSync(s.abs("ro"), 0o555)
    const kept = identityOf(s.abs("ro/kept"))
    const [made, mk, rm, gone, removed] = asNobody(s.root, strategy, [
      {
        op: "mkdirs",
        plan: [
          { path: "a", mode: 0o700 },
          { path: "ro/x", mode: 0o700 },
          { path: "ro/x/y", mode: 0o700 }
        ]
      },
      { op: "makeDirectory", path: "ro/y" },
      { op: "remove", path: "ro/tree", recursive: true },
      { op: "rmdirs", owned: [{ path: "ro/kept", identity: kept }] },
      { op: "remove", path: "ro/kept", recursive: true }
    ])
    expect(made?.ok).toBe(true)
    if (asRoot) expect(made?.uid).toBe(NOBODY)
    expect(made?.value?.created.map((c) => c.path)).toEqual(["a"])
    expect(made?.value?.error?.code).toBe("EACCES")
    expect(fs.existsSync(s.abs("a"))).toBe(true)
    expect(fs.existsSync(s.abs("ro/x"))).toBe(false)
    expect(mk?.code).toBe("EACCES")
    expect(rm?.code).toBe("EACCES")
    expect(fs.existsSync(s.abs("ro/tree/sub/file"))).toBe(true)
    expect(gone?.value?.stopped).toBe(true)
    expect(gone?.value?.members[0]?.status).toBe("refused")
    expect(gone?.value?.members[0]?.error?.code).toBe("EACCES")
    expect(removed?.code).toBe("EACCES")
    expect(fs.existsSync(s.abs("ro/kept"))).toBe(true)
    fs.chmodSync(s.abs("ro"), 0o755)
    fs.chmodSync(s.abs("ro/tree/sub"), 0o755)
  })
})
