/**
 * A recursive `remove` that removes a directory's entries side by side (src/root/removeWide.ts):
 * what it runs, in what order and how many at once, against a recording runner; then on disk,
 * under both strategies, that it removes exactly what the one native remove removes: the whole
 * tree, compared with fs.rm on a twin; nothing for a spelling of the root (`a/..`); the link
 * itself, never its target's entries, on a root that follows links within; nothing beneath a
 * mount point met in one subtree.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { native, type NativeRequest } from "../../src/internal/native.ts"
import { inFlight, removeWide } from "../../src/root/removeWide.ts"
import { cannotMount, useBindMounts } from "../support/mounts.ts"
import { rejection } from "../support/rejection.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { openDescriptorCount, scratch } from "../support/tree.ts"
import { describeTree, twinOf } from "./twin.ts"

/** A runner whose first remove answers `split`, and which settles each later one a turn later. */
const recording = (split: ReadonlyArray<string> | undefined, fails?: string) => {
  const calls: Array<NativeRequest> = []
  let running = 0
  let most = 0
  const runner = {
    run: async <A>(request: NativeRequest): Promise<A> => {
      calls.push(request)
      if (request.split === true) return (split === undefined ? undefined : [...split]) as A
      running++
      most = Math.max(most, running)
      await new Promise((resolve) => setTimeout(resolve, 1))
      running--
      if (request.path === fails) throw new Error(`cannot remove ${fails}`)
      return undefined as A
    }
  }
  return { runner, calls, running: () => running, most: () => most }
}

const shape = (c: NativeRequest) => [c.path, c.recursive, c.force, c.split ?? false, c.identity ?? null]

describe("removeWide, against a recording runner", () => {
  it(`removes a split's directories ${inFlight} at a time, whole, forced, each bound to the split's identity; then the rest`, async () => {
    const names = Array.from({ length: 10 }, (_, i) => `s${i}`)
    const r = recording(["7:42", ...names])
    await removeWide(r.runner, "trash", "trash", false)
    expect(r.most()).toBe(inFlight)
    expect(r.calls.map(shape)).toEqual([
      ["trash", true, false, true, null],
      ...names.map((n) => [`trash/${n}`, true, true, false, "7:42"]),
      ["trash", true, false, false, null]
    ])
    expect(r.calls.every((c) => c.op === native.ops.remove)).toBe(true)
  })

  it("is the one trip where there is nothing to split", async () => {
    const r = recording(undefined)
    await removeWide(r.runner, "trash", "trash", true)
    expect(r.calls.map(shape)).toEqual([["trash", true, true, true, null]])
  })

  it("after a failure starts no further directory, settles after those in flight, and never removes the rest", async () => {
    const names = Array.from({ length: 12 }, (_, i) => `s${i}`)
    const r = recording(["7:42", ...names], "trash/s1")
    const e = await removeWide(r.runner, "trash", "trash", true).then(
      () => undefined,
      (u: unknown) => u as Error
    )
    expect(e?.message).toBe("cannot remove trash/s1")
    expect(r.running()).toBe(0)
    const later = r.calls.slice(1).map((c) => c.path)
    // s0..s3 started first; s1's failure lands before a fifth can start past the four in flight.
    expect(later.length).toBeLessThanOrEqual(inFlight + 1)
    expect(later).not.toContain("trash")
  })
})

describe.each(strategies)("a recursive remove of a wide tree (%s)", (strategy) => {
  const wide = (s: ReturnType<typeof scratch>) => {
    const spec: Record<string, string> = { "keep.txt": "kept" }
    for (let d = 0; d < 9; d++) {
      for (let f = 0; f < 5; f++) spec[`trash/s${d}/f${f}.txt`] = `${d}.${f}`
      spec[`trash/s${d}/deep/er/g.txt`] = "deep"
    }
    spec["trash/top.txt"] = "top"
    s.make(spec)
    fs.symlinkSync(s.outside, s.abs("trash/s3/out"))
    fs.symlinkSync("../../keep.txt", s.abs("trash/s4/in"))
  }

  it("removes what fs.rm removes on a twin tree, follows no link, and leaves no descriptor open", async () => {
    const s = scratch()
    wide(s)
    const twin = twinOf(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    const before = openDescriptorCount()
    await root.remove("trash", { recursive: true })
    await fsp.rm(path.join(twin, "trash"), { recursive: true })
    expect(describeTree(s.root)).toEqual(describeTree(twin))
    expect(fs.existsSync(s.abs("trash"))).toBe(false)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.readFileSync(s.abs("keep.txt"), "utf8")).toBe("kept")
    expect(openDescriptorCount()).toBe(before)
    root.close()
  })

  it("removes nothing for a spelling of the root itself ('trash/..'), refusing it as the one remove does", async () => {
    const s = scratch()
    wide(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    const tree = describeTree(s.root)
    for (const spelling of ["trash/..", "trash/s1/../..", "./trash/.."]) {
      const e = await rejection(root.remove(spelling, { recursive: true }))
      expect(e.code).toBe("EINVAL")
      expect(e.message).toMatch(/the pinned root itself/)
    }
    expect(describeTree(s.root)).toEqual(tree)
    root.close()
  })

  it("with symlinks 'within', removes a final link to a wide directory, never the directory's entries", async () => {
    const s = scratch()
    wide(s)
    fs.symlinkSync("trash", s.abs("lnk"))
    const root = await PinnedRoot.open(s.root, { strategy, symlinks: "within" })
    const tree = describeTree(s.abs("trash"))
    await root.remove("lnk", { recursive: true })
    expect(fs.existsSync(s.abs("lnk"))).toBe(false)
    expect(describeTree(s.abs("trash"))).toEqual(tree)
    // And through the sub-root it opens, which follows links as it does.
    fs.symlinkSync("s1", s.abs("trash/lnk"))
    const sub = await root.openRoot("trash")
    await sub.remove("lnk", { recursive: true })
    expect(fs.readdirSync(s.abs("trash/s1")).sort()).toEqual(["deep", "f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt"])
    sub.close()
    root.close()
  })

  it("a split removes the directory's other entries and answers its identity and its directories; a narrow one goes whole", async () => {
    const s = scratch()
    wide(s)
    s.make({ "narrow/only/f.txt": "f", "narrow/g.txt": "g" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const st = fs.statSync(s.abs("trash"))
    const split = (await root.handle.execute({ op: native.ops.remove, path: "trash", recursive: true, split: true })) as Array<string>
    expect(split[0]).toBe(`${st.dev}:${st.ino}`)
    expect(split.slice(1).sort()).toEqual(Array.from({ length: 9 }, (_, d) => `s${d}`))
    expect(fs.readdirSync(s.abs("trash")).sort()).toEqual(split.slice(1).sort())
    expect(fs.readdirSync(s.abs("trash/s4")).sort()).toEqual(["deep", "f0.txt", "f1.txt", "f2.txt", "f3.txt", "f4.txt", "in"])
    expect(await root.handle.execute({ op: native.ops.remove, path: "narrow", recursive: true, split: true })).toBeUndefined()
    expect(fs.existsSync(s.abs("narrow"))).toBe(false)
    root.close()
  })

  it("a split's directory is removed only while its parent is still the directory split; elsewhere nothing is done", async () => {
    const s = scratch()
    wide(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    const split = (await root.handle.execute({ op: native.ops.remove, path: "trash", recursive: true, split: true })) as Array<string>
    // Another directory put where the split one stood, with a directory of the same name.
    fs.renameSync(s.abs("trash"), s.abs("moved"))
    s.make({ "trash/s1/precious.txt": "precious" })
    const other = fs.statSync(s.abs("trash"))
    const request = { op: native.ops.remove, path: "trash/s1", recursive: true, force: true, identity: split[0] }
    expect(await root.handle.execute(request)).toBeUndefined()
    expect(fs.readFileSync(s.abs("trash/s1/precious.txt"), "utf8")).toBe("precious")
    // Bound to the directory now there, it acts.
    await root.handle.execute({ ...request, identity: `${other.dev}:${other.ino}` })
    expect(fs.existsSync(s.abs("trash/s1"))).toBe(false)
    expect(fs.readdirSync(s.abs("moved")).length).toBe(9)
    root.close()
  })

  it("bad operands for a split or its identity are typed errors", async () => {
    const s = scratch()
    wide(s)
    const root = await PinnedRoot.open(s.root, { strategy })
    for (const bad of [{ split: "yes" }, { identity: "not-an-identity" }, { identity: 7 }]) {
      const e = await root.handle.execute({ op: native.ops.remove, path: "trash", recursive: true, ...bad } as never).then(
        () => undefined,
        (u: unknown) => u as { refusal?: string; description?: string }
      )
      expect(e?.refusal, JSON.stringify(bad)).toBe("badargument")
      expect(e?.description, JSON.stringify(bad)).toMatch(/split|identity/)
    }
    expect(fs.existsSync(s.abs("trash/s0/f0.txt"))).toBe(true)
    root.close()
  })

  const bind = useBindMounts()
  it("stops at a mount point in one subtree: refused naming it, nothing beneath it removed", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const s = scratch()
    wide(s)
    const data = path.join(s.outside, "data")
    fs.mkdirSync(data)
    fs.writeFileSync(path.join(data, "m.txt"), "mounted")
    fs.mkdirSync(s.abs("trash/s5/mnt"))
    bind(data, s.abs("trash/s5/mnt"))
    const root = await PinnedRoot.open(s.root, { strategy })
    const e = await rejection(root.remove("trash", { recursive: true }))
    expect(e.message).toContain("trash/s5/mnt")
    expect(fs.readFileSync(path.join(data, "m.txt"), "utf8")).toBe("mounted")
    expect(fs.existsSync(s.abs("trash/s5/mnt/m.txt"))).toBe(true)
    root.close()
  })
})
