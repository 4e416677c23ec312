/**
 * `openRoot(subdir)`: a root pinned at a subdirectory, opened from the parent's handle by the
 * parent's resolution, whose operations cannot reach the parent. Compared with node:fs/promises on
 * a twin tree; every refusal under both strategies; a bounded swap race on the subdirectory.
 */
import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../../src/index.ts"
import { raceRounds } from "../support/attacker.ts"
import { rejection } from "../support/rejection.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { scratch } from "../support/tree.ts"
import { twinOf } from "./twin.ts"

/** Why a bind mount cannot be made here, or "" when it can (these tests run as root). */
const cannotMount = (() => {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-mount-probe-"))
  fs.mkdirSync(path.join(probe, "target"))
  const r = spawnSync("mount", ["--bind", probe, path.join(probe, "target")], { encoding: "utf8" })
  if (r.status === 0) spawnSync("umount", [path.join(probe, "target")])
  fs.rmSync(probe, { recursive: true, force: true })
  return r.status === 0 ? "" : `mount --bind failed (${(r.stderr || r.error?.message || "").trim()})`
})()
const mounted: Array<string> = []
afterEach(() => {
  for (const at of mounted.splice(0).reverse()) spawnSync("umount", ["-l", at])
})

describe.each(strategies)("openRoot (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "top.txt": "parent's", "a/f.txt": "in a", "a/b/g.txt": "in b", "a/b/c/": "" })
    fs.symlinkSync(s.outside, s.abs("out"))
    fs.symlinkSync("a", s.abs("inlink"))
    const root = await PinnedRoot.open(s.root, { strategy })
    return { s, root }
  }

  it("answers as node:fs does at the subdirectory, with its identity and the parent's strategy", async () => {
    const { s, root } = await setup()
    const twin = twinOf(s)
    const sub = await root.openRoot("a")
    expect(sub).toBeInstanceOf(PinnedRoot)
    expect(sub.path).toBe(`${s.root}/a`)
    expect(sub.strategy).toBe(root.strategy)
    expect(sub.readLimit).toBe(root.readLimit)
    // The identity is the directory's, as a root opened by its path records it.
    const direct = await PinnedRoot.open(s.abs("a"), { strategy })
    expect(sub.identity).toBe(direct.identity)
    direct.close()
    expect((await sub.readFile("f.txt")).toString()).toBe(await fsp.readFile(`${twin}/a/f.txt`, "utf8"))
    expect(await sub.readDirectory("", { recursive: true })).toEqual((await fsp.readdir(`${twin}/a`, { recursive: true })).sort())
    await sub.writeFileString("b/new.txt", "new")
    expect(fs.readFileSync(s.abs("a/b/new.txt"), "utf8")).toBe("new")
    // Nested, and lexed: "a/./b" is "a/b".
    const deeper = await root.openRoot("a/./b")
    expect(deeper.path).toBe(`${s.root}/a/b`)
    expect(await deeper.readFileString("g.txt")).toBe("in b")
    const fromSub = await sub.openRoot("b/c")
    expect(fromSub.path).toBe(`${s.root}/a/b/c`)
    // Closing the parent leaves the child open (its own reference), and the other way round.
    root.close()
    expect(await sub.readFileString("f.txt")).toBe("in a")
    for (const r of [sub, deeper, fromSub]) r.close()
  })

  it("cannot reach the parent: `..` above the new root is refused, as above any root", async () => {
    const { root } = await setup()
    const sub = await root.openRoot("a")
    for (const p of ["../top.txt", "b/../../top.txt", "..", "b/c/../../../top.txt"]) {
      const e = await rejection(sub.readFile(p))
      expect(e.reason, p).toBe("PermissionDenied")
      expect(e.refusal, p).toBe("escape")
    }
    expect((await rejection(sub.stat(".."))).refusal).toBe("escape")
    expect((await rejection(sub.readDirectory(".."))).refusal).toBe("escape")
    expect((await rejection(sub.writeFileString("../top.txt", "x"))).refusal).toBe("escape")
    expect((await rejection(sub.glob("../*"))).reason).toBe("PermissionDenied")
    expect((await rejection(sub.openRoot(".."))).refusal).toBe("escape")
    expect(fs.readFileSync(`${root.path}/top.txt`, "utf8")).toBe("parent's")
    // `..` that stays inside the new root is fine, as anywhere.
    expect(await sub.readFileString("b/../f.txt")).toBe("in a")
    sub.close()
    root.close()
  })

  it("refuses a link (on the way or at the end), an escape, a file, a missing name and bad input", async () => {
    const { s, root } = await setup()
    fs.writeFileSync(s.abs("a/plain"), "file")
    expect((await rejection(root.openRoot("out"))).refusal).toBe("symlink")
    expect((await rejection(root.openRoot("inlink"))).refusal).toBe("symlink")
    expect((await rejection(root.openRoot("inlink/b"))).refusal).toBe("symlink")
    expect((await rejection(root.openRoot("../outside"))).refusal).toBe("escape")
    expect((await rejection(root.openRoot("a/plain"))).code).toBe("ENOTDIR")
    expect((await rejection(root.openRoot("a/nope"))).code).toBe("ENOENT")
    expect((await rejection(root.openRoot("/etc"))).reason).toBe("BadArgument")
    expect((await rejection(root.openRoot(5 as never))).reason).toBe("BadArgument")
    // Positive control: node:fs follows the same link out of the root.
    expect(await fsp.readdir(s.abs("out"))).toEqual(["secret.txt"])
    root.close()
    expect((await rejection(root.openRoot("a"))).reason).toBe("BadArgument")
  })

  it("refuses a mount point inside the root", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const { s, root } = await setup()
    fs.mkdirSync(s.abs("m"))
    execFileSync("mount", ["--bind", s.outside, s.abs("m")])
    mounted.push(s.abs("m"))
    const e = await rejection(root.openRoot("m"))
    expect(e.reason).toBe("PermissionDenied")
    expect(e.description).toMatch(/mount point/)
    root.close()
  })

  it("a subdirectory moved out after it was opened stays the new root's own (the parent is not reachable)", async () => {
    const { s, root } = await setup()
    const sub = await root.openRoot("a/b")
    fs.renameSync(s.abs("a/b"), path.join(s.outside, "b"))
    // The pinned handle names the directory wherever it went; nothing of the parent is reachable.
    expect(await sub.readFileString("g.txt")).toBe("in b")
    expect((await rejection(sub.readFile("../f.txt"))).refusal).toBe("escape")
    sub.close()
    root.close()
  })

  it("under a subdirectory swapped with a link to the outside: pins the real one or refuses, never the outside", async () => {
    const { s, root } = await setup()
    const target = path.join(s.outside, "target")
    fs.mkdirSync(target)
    fs.writeFileSync(path.join(target, "g.txt"), "OUTSIDE")
    const outsideRoot = await PinnedRoot.open(target, { strategy })
    const outsideIdentity = outsideRoot.identity
    outsideRoot.close()
    const race = await raceRounds({
      pairs: [[s.abs("sw"), s.abs("lnk")]],
      maxRounds: 400,
      maxMs: 4000,
      reset: () => {
        fs.rmSync(s.abs("sw"), { recursive: true, force: true })
        fs.rmSync(s.abs("lnk"), { recursive: true, force: true })
        s.make({ "sw/g.txt": "inside" })
        fs.symlinkSync(target, s.abs("lnk"))
      },
      round: async () => {
        // Positive control in the same window: a path-based read of the same name, as node:fs does it.
        const node = await fsp.readFile(s.abs("sw/g.txt"), "utf8").catch(() => "")
        const mine = await root.openRoot("sw").then(
          async (sub) => {
            const text = await sub.readFileString("g.txt")
            const id = sub.identity
            sub.close()
            return { ok: true as const, text, id }
          },
          (e: unknown) => ({ ok: false as const, why: e instanceof PinnedFsError ? e.refusal || e.code : `untyped ${String(e)}` })
        )
        return { ...mine, node }
      },
      // Parked, the pair is home: `sw` is this round's real directory, whose identity a pinned
      // root must have recorded.
      inspect: (r) => {
        const st = fs.statSync(s.abs("sw"), { bigint: true })
        return r.ok ? { ...r, real: r.id.startsWith(`${st.dev}:${st.ino}`) } : r
      }
    })
    // The refusals the attack explains: the link met, or a name that was the link when opened and a
    // directory again when asked why (ENOTDIR, the no-follow directory open's own answer).
    const allowed = ["symlink", "ENOTDIR"]
    const wrong = race.answers.filter((a) => (a.ok ? a.text !== "inside" || a.id === outsideIdentity || !a.real : !allowed.includes(a.why)))
    expect(wrong).toEqual([])
    expect(race.swaps).toBeGreaterThan(0)
    // Live: some rounds met the link and were refused; some pinned the real directory.
    expect(race.answers.filter((a) => !a.ok).length, JSON.stringify(race.answers.slice(0, 5))).toBeGreaterThan(0)
    expect(race.answers.filter((a) => a.ok).length).toBeGreaterThan(0)
    // And node:fs, racing the same exchanges, read the outside through the link.
    expect(race.answers.filter((a) => a.node === "OUTSIDE").length).toBeGreaterThan(0)
    expect(fs.readFileSync(path.join(target, "g.txt"), "utf8")).toBe("OUTSIDE")
    root.close()
  })
})
