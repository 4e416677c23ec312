/**
 * copyFile and cp beneath a pinned root: each happy path beside node:fs/promises on a twin tree
 * (same outcome, same resulting tree), then every refusal with its positive control (the same call
 * through node:fs reaches outside), under both resolve strategies.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedRoot } from "../../src/index.ts"
import { native } from "../../src/internal/native.ts"
import { rejection } from "../support/rejection.ts"
import { cannotMount, useBindMounts } from "../support/mounts.ts"
import { skipUnless } from "../support/skip.ts"
import { strategies } from "../support/strategies.ts"
import { mkfifo, openDescriptorCount, scratch } from "../support/tree.ts"
import { describeTree, outcome } from "./twin.ts"

const { COPYFILE_EXCL, COPYFILE_FICLONE, COPYFILE_FICLONE_FORCE } = fs.constants

const bind = useBindMounts()

/** The layout both twins start from, under `base`. */
const layout = (base: string) => {
  const put = (rel: string, content: string, mode = 0o644) => {
    fs.mkdirSync(path.dirname(path.join(base, rel)), { recursive: true })
    fs.writeFileSync(path.join(base, rel), content)
    fs.chmodSync(path.join(base, rel), mode)
  }
  put("src/a.txt", "alpha")
  put("src/exec.sh", "#!/bin/sh\n", 0o755)
  put("src/private", "p", 0o600)
  put("src/sub/deep/b.txt", "beta".repeat(10000))
  fs.mkdirSync(path.join(base, "src/empty"))
  fs.chmodSync(path.join(base, "src/sub"), 0o750)
  fs.symlinkSync("a.txt", path.join(base, "src/rel-link"))
  fs.symlinkSync("../a.txt", path.join(base, "src/sub/up-link"))
  put("dest-exists/old.txt", "old")
  put("file.txt", "content")
  put("existing.txt", "existing", 0o600)
}

describe.each(strategies)("copyFile and cp (%s)", (strategy) => {
  const twins = async () => {
    const s = scratch()
    const node = path.join(path.dirname(s.root), "node")
    fs.mkdirSync(node)
    layout(s.root)
    layout(node)
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, node, root }
  }

  it("copyFile matches fs.promises.copyFile: outcome, content, mode bits, EXCL", async () => {
    const { s, node, root } = await twins()
    const cases: Array<[string, string, number | undefined]> = [
      ["file.txt", "copy.txt", undefined],
      ["src/exec.sh", "exec-copy.sh", undefined],
      ["src/private", "existing.txt", undefined],
      ["file.txt", "existing.txt", COPYFILE_EXCL],
      ["file.txt", "new-excl.txt", COPYFILE_EXCL],
      ["file.txt", "ficlone.txt", COPYFILE_FICLONE],
      ["file.txt", "file.txt", undefined],
      ["missing", "x.txt", undefined],
      ["src", "dir-copy", undefined],
      ["file.txt", "src", undefined],
      ["file.txt", "nodir/x.txt", undefined]
    ]
    for (const [from, to, mode] of cases) {
      const ours = await outcome(root.copyFile(from, to, mode))
      const theirs = await outcome(fsp.copyFile(path.join(node, from), path.join(node, to), mode))
      expect({ from, to, ours }).toEqual({ from, to, ours: theirs })
    }
    expect(describeTree(s.root)).toEqual(describeTree(node))
    // No temporary is left anywhere.
    expect(Object.keys(describeTree(s.root)).filter((n) => n.includes(".pinnedfs-"))).toEqual([])
    root.close()
  })

  it("copyFile with COPYFILE_FICLONE_FORCE: a reflink, or a typed ENOTSUP and no file", async () => {
    const { s, root } = await twins()
    const r = await outcome(root.copyFile("file.txt", "forced.txt", COPYFILE_FICLONE_FORCE))
    if (r === "ok") expect(fs.readFileSync(s.abs("forced.txt"), "utf8")).toBe("content")
    else {
      const e = await rejection(root.copyFile("file.txt", "forced.txt", COPYFILE_FICLONE_FORCE))
      // ENOTSUP and EOPNOTSUPP are one errno on Linux; libuv's name for it is the first.
      expect(["ENOTSUP", "EOPNOTSUPP"]).toContain(e.code)
      expect(e.description).toMatch(/reflink/)
      expect(fs.existsSync(s.abs("forced.txt"))).toBe(false)
    }
    root.close()
  })

  it("cp -r matches fs.promises.cp (verbatimSymlinks): new tree, merge, force, errorOnExist", async () => {
    const { s, node, root } = await twins()
    const cases: Array<[string, string, Record<string, unknown>]> = [
      ["src", "copy", { recursive: true }],
      ["src", "dest-exists", { recursive: true }],
      ["src", "copy", { recursive: true }],
      ["src", "copy", { recursive: true, force: false }],
      ["src", "copy", { recursive: true, force: false, errorOnExist: true }],
      ["file.txt", "cp-file.txt", {}],
      ["src/rel-link", "top-link", {}],
      ["src", "no-recursive", {}],
      ["file.txt", "existing.txt", { force: false }],
      ["file.txt", "existing.txt", { force: false, errorOnExist: true }]
    ]
    for (const [from, to, options] of cases) {
      const ours = await outcome(root.cp(from, to, options))
      const theirs = await outcome(fsp.cp(path.join(node, from), path.join(node, to), { ...options, verbatimSymlinks: true }))
      // Node's cp errors carry ERR_FS_* codes where ours carry the errno they stand for.
      const same: Record<string, string> = {
        "error ERR_FS_EISDIR": "error EISDIR",
        "error ERR_FS_CP_EEXIST": "error EEXIST"
      }
      expect({ from, to, options, ours }).toEqual({ from, to, options, ours: same[theirs] ?? theirs })
    }
    expect(describeTree(s.root)).toEqual(describeTree(node))
    root.close()
  })

  it("cp refuses copying a directory into itself, as Node does", async () => {
    const { s, root } = await twins()
    for (const to of ["src", "src/inner", "src/sub/x"]) {
      const e = await rejection(root.cp("src", to, { recursive: true }))
      expect(e.code).toBe("EINVAL")
    }
    expect(fs.existsSync(s.abs("src/inner"))).toBe(false)
    root.close()
  })

  it("cp copies a tree of 2,000 files and leaves no descriptor open", async () => {
    const { s, root } = await twins()
    for (let i = 0; i < 2000; i++) s.make({ [`big/d${i % 20}/f${i}.txt`]: `file ${i}` })
    const before = openDescriptorCount()
    await root.cp("big", "big-copy", { recursive: true })
    expect(openDescriptorCount()).toBe(before)
    expect(describeTree(s.abs("big-copy"))).toEqual(describeTree(s.abs("big")))
    root.close()
  })

  it("refuses a symlink anywhere on either path; node:fs follows it outside", async () => {
    const { s, root } = await twins()
    fs.symlinkSync(s.outside, s.abs("out"))
    fs.symlinkSync(s.secret, s.abs("secret-link"))
    // Positive control: through node:fs the same calls read and write outside.
    await fsp.copyFile(s.abs("out/secret.txt"), path.join(s.outside, "control.txt"))
    expect(fs.readFileSync(path.join(s.outside, "control.txt"), "utf8")).toBe("TOP SECRET")
    fs.rmSync(path.join(s.outside, "control.txt"))
    const calls: Array<[string, () => Promise<void>]> = [
      ["copyFile from a link dir", () => root.copyFile("out/secret.txt", "leak.txt")],
      ["copyFile from a final link", () => root.copyFile("secret-link", "leak.txt")],
      ["copyFile into a link dir", () => root.copyFile("file.txt", "out/planted.txt")],
      ["copyFile onto a final link", () => root.copyFile("file.txt", "secret-link")],
      ["cp from a link dir", () => root.cp("out/secret.txt", "leak.txt")],
      ["cp into a link dir", () => root.cp("src", "out/planted", { recursive: true })],
      ["cp file onto a final link", () => root.cp("file.txt", "secret-link")]
    ]
    for (const [what, call] of calls) {
      const e = await rejection(call())
      expect({ what, reason: e.reason, refusal: e.refusal }).toEqual({ what, reason: "PermissionDenied", refusal: "symlink" })
    }
    // A final link is copied as a link by cp; this one's text is absolute, so it is refused.
    expect((await rejection(root.cp("out", "leak", { recursive: true }))).refusal).toBe("escape")
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.existsSync(s.abs("leak.txt")) || fs.existsSync(s.abs("leak"))).toBe(false)
    root.close()
  })

  it("cp copies an in-root link as a link, and refuses one whose text leaves the root", async () => {
    const { s, root } = await twins()
    s.make({ "t/ok.txt": "ok" })
    fs.symlinkSync("ok.txt", s.abs("t/in"))
    await root.cp("t", "t2", { recursive: true })
    expect(fs.readlinkSync(s.abs("t2/in"))).toBe("ok.txt")
    for (const text of [s.secret, "../../outside/secret.txt", "../../.."]) {
      fs.mkdirSync(s.abs("u"), { recursive: true })
      fs.symlinkSync(text, s.abs("u/bad"))
      // Positive control: Node's cp copies it, and the copy names the outside.
      await fsp.cp(s.abs("u"), path.join(s.outside, "u"), { recursive: true, verbatimSymlinks: true })
      expect(fs.readlinkSync(path.join(s.outside, "u/bad"))).toBe(text)
      fs.rmSync(path.join(s.outside, "u"), { recursive: true })
      const e = await rejection(root.cp("u", "u-copy", { recursive: true }))
      expect({ text, reason: e.reason, refusal: e.refusal }).toEqual({ text, reason: "PermissionDenied", refusal: "escape" })
      expect(fs.existsSync(s.abs("u-copy/bad"))).toBe(false)
      fs.rmSync(s.abs("u"), { recursive: true })
      fs.rmSync(s.abs("u-copy"), { recursive: true, force: true })
    }
    // Text that stays in at the source may not at the destination: checked where it is made.
    s.make({ "deep/x/": "" })
    fs.symlinkSync("../file.txt", s.abs("deep/x/l"))
    const e = await rejection(root.cp("deep/x/l", "l-at-top"))
    expect(e.refusal).toBe("escape")
    root.close()
  })

  it("refuses a hard-linked source (content never copied) and a hard-linked destination", async () => {
    const { s, root } = await twins()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    // Positive control: node:fs copies the outside file's content in.
    await fsp.copyFile(s.abs("hard.txt"), s.abs("control.txt"))
    expect(fs.readFileSync(s.abs("control.txt"), "utf8")).toBe("TOP SECRET")
    for (const call of [() => root.copyFile("hard.txt", "leak.txt"), () => root.cp("hard.txt", "leak.txt")]) {
      const e = await rejection(call())
      expect(e.refusal).toBe("hardlink")
    }
    s.make({ "h/": "" })
    fs.linkSync(s.secret, s.abs("h/hard.txt"))
    expect((await rejection(root.cp("h", "h2", { recursive: true }))).refusal).toBe("hardlink")
    expect(fs.existsSync(s.abs("h2/hard.txt"))).toBe(false)
    expect((await rejection(root.copyFile("file.txt", "hard.txt"))).refusal).toBe("hardlink")
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.existsSync(s.abs("leak.txt"))).toBe(false)
    root.close()
  })

  it("never climbs above the root with .., and refuses absolute paths", async () => {
    const { s, root } = await twins()
    const name = path.basename(s.root)
    for (const [from, to] of [
      ["../outside/secret.txt", "leak.txt"],
      ["file.txt", "../outside/planted.txt"],
      [`../${name}/file.txt`, "x.txt"],
      ["src/../../outside/secret.txt", "leak.txt"]
    ] as const) {
      for (const call of [() => root.copyFile(from, to), () => root.cp(from, to, { recursive: true })]) {
        const e = await rejection(call())
        expect({ from, to, refusal: e.refusal }).toEqual({ from, to, refusal: "escape" })
      }
    }
    for (const call of [() => root.copyFile(s.secret, "x"), () => root.cp("file.txt", s.abs("y"))]) {
      expect((await rejection(call())).reason).toBe("BadArgument")
    }
    expect(fs.readdirSync(s.outside)).toEqual(["secret.txt"])
    root.close()
  })

  it("refuses a FIFO without blocking, in copyFile and in a tree", async () => {
    const { s, root } = await twins()
    mkfifo(s.abs("pipe"))
    expect((await rejection(root.copyFile("pipe", "p2"))).refusal).toBe("notregular")
    s.make({ "withpipe/": "" })
    mkfifo(s.abs("withpipe/p"))
    expect((await rejection(root.cp("withpipe", "wp2", { recursive: true }))).refusal).toBe("notregular")
    root.close()
  })

  it("bad input is a typed BadArgument", async () => {
    const { root } = await twins()
    const calls: Array<() => Promise<unknown>> = [
      () => root.copyFile("file.txt", "x", 8),
      () => root.copyFile("file.txt", "x", -1),
      () => root.copyFile("file.txt", "x", 1.5),
      () => root.copyFile(1 as unknown as string, "x"),
      () => root.copyFile("file.txt", "a\0b"),
      () => root.cp("src", "x", { recursive: true, filter: () => true } as never),
      () => root.cp("src", "x", { preserveTimestamps: true } as never),
      () => root.cp("src", "x", { dereference: true } as never),
      () => root.cp("src", "x", { recursive: "yes" } as never),
      () => root.cp("src", "x", null as never),
      () => root.cp("", "x", { recursive: true }),
      () => root.cp("src", "", { recursive: true }),
      () => root.run({ op: native.ops.copyFile, path: "file.txt" }, "file.txt"),
      () => root.run({ op: native.ops.copyFile, path: "file.txt", to: "x", copyMode: 9 }, "file.txt")
    ]
    for (const [i, call] of calls.entries()) {
      const e = await rejection((async () => call())())
      expect({ i, reason: e.reason }).toEqual({ i, reason: "BadArgument" })
    }
    root.close()
  })

  it("refuses a mount crossing: a bind-mounted source, destination or tree member", async (ctx) => {
    skipUnless(ctx, cannotMount === "", cannotMount)
    const { s, root } = await twins()
    const data = path.join(s.outside, "data")
    fs.mkdirSync(data)
    fs.writeFileSync(path.join(data, "m.txt"), "outside")
    s.make({ "mnt/": "", "tree/ok.txt": "ok", "tree/m/": "", "mfile.txt": "inside" })
    for (const [from, onto] of [
      [data, s.abs("mnt")],
      [data, s.abs("tree/m")],
      [path.join(data, "m.txt"), s.abs("mfile.txt")]
    ] as const) {
      bind(from, onto)
    }
    // Positive control: node:fs copies through the mount.
    await fsp.copyFile(s.abs("mnt/m.txt"), path.join(s.outside, "control.txt"))
    fs.rmSync(path.join(s.outside, "control.txt"))
    const calls = [
      () => root.copyFile("mnt/m.txt", "leak.txt"),
      () => root.copyFile("mfile.txt", "leak.txt"),
      () => root.copyFile("file.txt", "mnt/planted.txt"),
      () => root.copyFile("file.txt", "mfile.txt"),
      () => root.cp("tree", "tree2", { recursive: true }),
      () => root.cp("src", "mnt/planted", { recursive: true }),
      // The mount point itself as the target: refused as a mount, as a write there is.
      () => root.copyFile("file.txt", "mnt"),
      () => root.cp("file.txt", "mnt", { force: true })
    ]
    for (const [i, call] of calls.entries()) {
      const e = await rejection(call())
      expect({ i, reason: e.reason, refusal: e.refusal }).toEqual({ i, reason: "PermissionDenied", refusal: "escape" })
    }
    expect(fs.readdirSync(data)).toEqual(["m.txt"])
    expect(fs.readFileSync(path.join(data, "m.txt"), "utf8")).toBe("outside")
    expect(fs.existsSync(s.abs("leak.txt"))).toBe(false)
    root.close()
  })

  it("a root moved and replaced at its path: the copy acts in the pinned directory, never the newcomer", async () => {
    const { s, root } = await twins()
    // The root handle stays pinned to the directory it opened: moved away and replaced at its
    // path, the copy still happens in the pinned directory, never in the newcomer.
    const moved = `${s.root}-moved`
    fs.renameSync(s.root, moved)
    fs.mkdirSync(s.root)
    fs.writeFileSync(path.join(s.root, "file.txt"), "impostor")
    await root.copyFile("file.txt", "copy.txt")
    expect(fs.readFileSync(path.join(moved, "copy.txt"), "utf8")).toBe("content")
    expect(fs.existsSync(path.join(s.root, "copy.txt"))).toBe(false)
    root.close()
    fs.rmSync(s.root, { recursive: true })
    fs.renameSync(moved, s.root)
  })
})
