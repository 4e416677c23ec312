/**
 * utimes, truncate and lchown beneath a pinned root: each beside node:fs/promises on a twin tree,
 * every refusal with a positive control, bad input, and the permission checks as `nobody`, under
 * both strategies. chown's treatment of a final link (refused) is stated beside lchown's (acts on
 * the link itself).
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { native } from "../../src/internal/native.ts"
import { asRoot, NOBODY } from "../support/ids.ts"
import { callsAsNobody } from "../support/nobody.ts"
import { rejection } from "../support/rejection.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo } from "../support/tree.ts"
import { outcome, pinnedTwins } from "./twin.ts"

const times = (p: string) => {
  const st = fs.lstatSync(p, { bigint: true })
  return [st.atimeNs, st.mtimeNs]
}
/** Modification and change times: what an act on the file moves (reading it moves only atime). */
const changed = (p: string) => {
  const st = fs.lstatSync(p, { bigint: true })
  return [st.mtimeNs, st.ctimeNs]
}
const owner = (p: string) => {
  const st = fs.lstatSync(p)
  return [st.uid, st.gid]
}

describe.each(strategies)("utimes, truncate, lchown (%s)", (strategy) => {
  const twins = () => pinnedTwins(strategy, { "file.txt": "0123456789", "dir/sub/deep.txt": "deep content" })

  it("utimes matches fs.promises.utimes: Dates, seconds with fractions, directories", async () => {
    const { s, node, root } = await twins()
    const cases: Array<[string, Date | number, Date | number]> = [
      ["file.txt", new Date("2001-02-03T04:05:06.789Z"), new Date("2002-03-04T05:06:07.123Z")],
      ["dir/sub/deep.txt", 1_000_000_000.5, 1_100_000_000.25],
      ["dir", 0, 86_400],
      ["", 12345, 67890],
      ["missing", 1, 1],
      ["file.txt/x", 1, 1]
    ]
    for (const [p, a, m] of cases) {
      const ours = await outcome(root.utimes(p, a, m))
      const theirs = await outcome(fsp.utimes(path.join(node, p), a, m))
      expect({ p, ours }).toEqual({ p, ours: theirs })
      if (ours === "ok") expect({ p, t: times(s.abs(p)) }).toEqual({ p, t: times(path.join(node, p)) })
    }
    root.close()
  })

  it("truncate matches fs.promises.truncate: shorter, longer, default, negative", async () => {
    const { s, node, root } = await twins()
    const cases: Array<[string, number | undefined]> = [
      ["file.txt", 4],
      ["file.txt", 100],
      ["dir/sub/deep.txt", undefined],
      ["file.txt", -5],
      ["dir", 0],
      ["missing", 0]
    ]
    for (const [p, len] of cases) {
      const ours = await outcome(root.truncate(p, len))
      const theirs = await outcome(fsp.truncate(path.join(node, p), len))
      expect({ p, len, ours }).toEqual({ p, len, ours: theirs })
      if (ours === "ok") expect(fs.readFileSync(s.abs(p))).toEqual(fs.readFileSync(path.join(node, p)))
    }
    root.close()
  })

  it("lchown acts on a final link itself, as fs.promises.lchown; chown refuses that link", async (ctx) => {
    skipUnless(ctx, asRoot, "giving a link to another owner needs root")
    const { s, node, root } = await twins()
    await root.lchown("ln", NOBODY, NOBODY)
    await fsp.lchown(path.join(node, "ln"), NOBODY, NOBODY)
    expect(owner(s.abs("ln"))).toEqual([NOBODY, NOBODY])
    expect(owner(s.abs("ln"))).toEqual(owner(path.join(node, "ln")))
    expect(owner(s.abs("file.txt"))).toEqual([0, 0]) // what it names is untouched
    await root.lchown("dir/sub/deep.txt", -1, NOBODY)
    expect(owner(s.abs("dir/sub/deep.txt"))).toEqual([0, NOBODY])
    // chown never acts on a final link: refused, the link and its target both unchanged.
    const e = await rejection(root.chown("ln", 0, 0))
    expect(e.refusal).toBe("symlink")
    expect(owner(s.abs("ln"))).toEqual([NOBODY, NOBODY])
    root.close()
  })

  it("refuses a final link (utimes, truncate) and any link on the way; node:fs follows it outside", async () => {
    const { s, root } = await twins()
    const victim = path.join(s.outside, "victim.txt")
    fs.writeFileSync(victim, "outside data")
    fs.symlinkSync(victim, s.abs("to-victim"))
    fs.symlinkSync(s.outside, s.abs("out"))
    // Positive controls: node:fs truncates and re-times the outside file through either link.
    await fsp.truncate(s.abs("to-victim"), 3)
    expect(fs.readFileSync(victim, "utf8")).toBe("out")
    await fsp.utimes(s.abs("out/victim.txt"), 1, 1)
    expect(fs.statSync(victim).mtimeMs).toBe(1000)
    fs.writeFileSync(victim, "outside data")
    const before = [changed(victim), owner(victim)]
    for (const p of ["to-victim", "out/victim.txt", "out", "out/"]) {
      for (const call of [() => root.utimes(p, 5, 5), () => root.truncate(p, 0)]) {
        const e = await rejection(call())
        expect({ p, reason: e.reason, refusal: e.refusal }).toEqual({ p, reason: "PermissionDenied", refusal: "symlink" })
      }
    }
    for (const p of ["out/victim.txt", "out/"]) {
      expect((await rejection(root.lchown(p, NOBODY, NOBODY))).refusal).toBe("symlink")
    }
    expect([changed(victim), owner(victim)]).toEqual(before)
    expect(fs.readFileSync(victim, "utf8")).toBe("outside data")
    root.close()
  })

  it("refuses a hard-linked file (its other name may be outside)", async () => {
    const { s, root } = await twins()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    const before = [changed(s.secret), owner(s.secret)]
    // Positive control: node:fs truncates the outside file through the inside name.
    const copy = path.join(s.outside, "copy.txt")
    fs.writeFileSync(copy, "abc")
    fs.linkSync(copy, s.abs("hard-copy"))
    await fsp.truncate(s.abs("hard-copy"), 0)
    expect(fs.readFileSync(copy, "utf8")).toBe("")
    for (const call of [
      () => root.utimes("hard.txt", 1, 1),
      () => root.truncate("hard.txt"),
      () => root.lchown("hard.txt", NOBODY, NOBODY)
    ]) {
      expect((await rejection(call())).refusal).toBe("hardlink")
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect([changed(s.secret), owner(s.secret)]).toEqual(before)
    root.close()
  })

  it("never climbs above the root; a FIFO is refused without blocking", async () => {
    const { s, root } = await twins()
    const name = path.basename(s.root)
    for (const p of ["../outside/secret.txt", `../${name}/file.txt`, "dir/../../outside/secret.txt"]) {
      for (const call of [() => root.utimes(p, 1, 1), () => root.truncate(p), () => root.lchown(p, -1, -1)]) {
        expect((await rejection(call())).refusal).toBe("escape")
      }
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    mkfifo(s.abs("pipe"))
    expect((await rejection(root.truncate("pipe"))).refusal).toBe("notregular")
    root.close()
  })

  it("bad input is a typed BadArgument", async () => {
    const { root } = await twins()
    const calls: Array<() => Promise<unknown>> = [
      () => root.utimes("file.txt", Number.NaN, 1),
      () => root.utimes("file.txt", 1, Number.POSITIVE_INFINITY),
      () => root.utimes("file.txt", new Date("nope"), 1),
      () => root.utimes("file.txt", "1" as unknown as number, 1),
      () => root.utimes("/abs", 1, 1),
      () => root.truncate("file.txt", 1.5),
      () => root.truncate("file.txt", "3" as unknown as number),
      () => root.truncate("file.txt", 2 ** 60),
      () => root.lchown("ln", -2, 0),
      () => root.lchown("ln", 0, 2 ** 32),
      () => root.lchown("ln", 1.5, 0),
      () => root.run({ op: native.ops.utimes, path: "file.txt", atime: 1 }, "file.txt"),
      () => root.run({ op: native.ops.utimes, path: "file.txt", atime: Number.NaN, mtime: 1 }, "file.txt"),
      () => root.run({ op: native.ops.lchown, path: "ln", uid: -5, gid: 0 }, "ln")
    ]
    for (const [i, call] of calls.entries()) {
      const e = await rejection((async () => call())())
      expect({ i, reason: e.reason }).toEqual({ i, reason: "BadArgument" })
    }
    root.close()
  })

  it("as nobody, the kernel's permission checks hold, as they do for node:fs", async (ctx) => {
    skipUnless(ctx, asRoot, "the tests already run unprivileged: nothing to drop")
    const { s, root } = await twins()
    root.close()
    for (const d of [path.dirname(s.root), s.root]) fs.chmodSync(d, 0o755)
    fs.writeFileSync(s.abs("private.txt"), "root only")
    fs.chmodSync(s.abs("private.txt"), 0o600)
    const before = [changed(s.abs("file.txt")), owner(s.abs("ln"))]
    const answers = callsAsNobody(s.root, strategy, [
      { method: "utimes", args: ["file.txt", 1, 1] },
      { method: "truncate", args: ["file.txt", 0] },
      { method: "lchown", args: ["ln", NOBODY, NOBODY] },
      { method: "copyFile", args: ["private.txt", "stolen.txt"] },
      { method: "copyFile", args: ["file.txt", "dir/new.txt"] },
      { method: "symlink", args: ["file.txt", "dir/l"] },
      { method: "link", args: ["file.txt", "dir/h"] }
    ])
    expect(answers.map((a) => [a.uid, a.ok ? "ok" : a.code])).toEqual([
      [NOBODY, "EPERM"],
      [NOBODY, "EACCES"],
      [NOBODY, "EPERM"],
      [NOBODY, "EACCES"],
      [NOBODY, "EACCES"],
      [NOBODY, "EACCES"],
      // fs.protected_hardlinks: no link to a file one may not write (node:fs answers the same).
      [NOBODY, "EPERM"]
    ])
    expect([changed(s.abs("file.txt")), owner(s.abs("ln"))]).toEqual(before)
    expect(fs.readFileSync(s.abs("file.txt"), "utf8")).toBe("0123456789")
    expect(fs.readdirSync(s.abs("dir"))).toEqual(["sub"])
  })
})
