import { execFileSync, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { Effect, FileSystem } from "effect"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { NodeAtomicFileSystem } from "../src/effect/index.ts"
import { PathAtomicFileSystem } from "../src/fallback/index.ts"
import type { AtomicFileSystem, AtomicRequest } from "../src/protocol/wire.ts"
import { type PinnedFsError, PinnedRoot } from "../src/index.ts"
import type { OpenFlag } from "../src/index.ts"
import { native } from "../src/internal/native.ts"
import { asRoot, NOBODY, requestsAsNobody } from "./support/nobody.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo, scratch } from "./support/tree.ts"
import { expectEachBadArgument, rejection as refusal } from "./support/rejection.ts"
import { skipUnless } from "./support/skip.ts"
import { allowAll, failure as kernelFailure, kernelLayer, reasonTag } from "./kernel/support/kernel.ts"

const writingFlags: ReadonlyArray<OpenFlag> = ["r+", "w", "wx", "w+", "wx+", "a", "ax", "a+", "ax+"]
const packageRoot = path.join(path.dirname(fileURLToPath(import.meta.url)), "..")

// Modes are compared under a known umask; forks (vitest's pool here) may set it.
let savedUmask = 0
beforeEach(() => {
  savedUmask = process.umask(0o022)
})
afterEach(() => {
  process.umask(savedUmask)
})

const modeOf = (p: string) => fs.lstatSync(p).mode & 0o7777
const listing = (dir: string) => fs.readdirSync(dir).sort()

describe.each(strategies)("writeFile (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/file.txt": "hello world", "top.txt": "top", "dir/": "" })
    fs.symlinkSync(s.outside, s.abs("linkdir"))
    fs.symlinkSync(s.secret, s.abs("a/linkfile"))
    fs.symlinkSync(path.join(s.outside, "created-by-write"), s.abs("a/dangling"))
    fs.symlinkSync("b", s.abs("a/inner")) // stays inside, still refused on the way
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  it("matches node:fs for every flag, on a missing and on an existing file", async () => {
    const { s, root } = await setup()
    const reference = path.join(s.outside, "reference")
    fs.mkdirSync(reference)
    const data = Buffer.from("abc")
    for (const flag of writingFlags) {
      for (const existing of [false, true]) {
        const name = `f-${flag}-${existing ? "old" : "new"}`
        const ours = s.abs(`a/${name}`)
        const theirs = path.join(reference, name)
        if (existing) {
          fs.writeFileSync(ours, "hello world")
          fs.writeFileSync(theirs, "hello world")
        }
        let expected: string | undefined
        try {
          fs.writeFileSync(theirs, data, { flag })
        } catch (e) {
          expected = (e as NodeJS.ErrnoException).code
        }
        const got = await root.writeFile(`a/${name}`, data, { flag }).then(
          () => undefined,
          (e: PinnedFsError) => e.code
        )
        expect({ flag, existing, code: got }).toEqual({ flag, existing, code: expected })
        expect({ flag, existing, exists: fs.existsSync(ours) }).toEqual({ flag, existing, exists: fs.existsSync(theirs) })
        if (fs.existsSync(theirs)) {
          expect({ flag, existing, content: fs.readFileSync(ours, "utf8") }).toEqual({
            flag,
            existing,
            content: fs.readFileSync(theirs, "utf8")
          })
        }
      }
    }
  })

  it("writes strings, empty data, at the root and at depth", async () => {
    const { s, root } = await setup()
    await root.writeFileString("top.txt", "héllo")
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("héllo")
    await root.writeFile("a/b/file.txt", new Uint8Array())
    expect(fs.readFileSync(s.abs("a/b/file.txt"), "utf8")).toBe("")
    await root.writeFileString("a/b/new.txt", "x".repeat(300_000))
    expect(fs.statSync(s.abs("a/b/new.txt")).size).toBe(300_000)
    await root.writeFileString("a/b/../b/dots.txt", "dots")
    expect(fs.readFileSync(s.abs("a/b/dots.txt"), "utf8")).toBe("dots")
  })

  it("applies mode only when creating, through the umask as Node does", async () => {
    const { s, root } = await setup()
    await root.writeFileString("m-default", "x")
    expect(modeOf(s.abs("m-default"))).toBe(0o644)
    await root.writeFileString("m-640", "x", { mode: 0o640 })
    expect(modeOf(s.abs("m-640"))).toBe(0o640)
    await root.writeFileString("m-777", "x", { mode: 0o777, flag: "wx" })
    expect(modeOf(s.abs("m-777"))).toBe(0o755)
    fs.writeFileSync(path.join(s.outside, "ref-777"), "x", { mode: 0o777 })
    expect(modeOf(s.abs("m-777"))).toBe(modeOf(path.join(s.outside, "ref-777")))
    fs.chmodSync(s.abs("top.txt"), 0o600)
    await root.writeFileString("top.txt", "y", { mode: 0o777 })
    expect(modeOf(s.abs("top.txt"))).toBe(0o600)
  })

  it("refuses a symlink first, in the middle and last, leaving the outside byte-identical", async () => {
    const { s, root } = await setup()
    const before = fs.readFileSync(s.secret)
    for (const options of [{}, { flag: "a" as const }, { flag: "r+" as const }, { flag: "wx" as const }, { atomic: true }]) {
      for (const p of ["linkdir/secret.txt", "a/inner/file.txt", "a/linkfile", "a/dangling", "linkdir/new.txt"]) {
        const e = await refusal(root.writeFileString(p, "PWNED", options))
        // O_EXCL on an existing trailing link answers EEXIST before any link could be followed.
        if (options.flag === "wx" && (p === "a/linkfile" || p === "a/dangling")) {
          expect(e.reason).toBe("AlreadyExists")
        } else {
          expect({ p, options, reason: e.reason, refusal: e.refusal }).toEqual({
            p,
            options,
            reason: "PermissionDenied",
            refusal: "symlink"
          })
        }
        expect(e.path).toBe(p)
      }
    }
    expect(fs.readFileSync(s.secret)).toEqual(before)
    expect(listing(s.outside)).toEqual(["secret.txt"])
    expect(fs.readlinkSync(s.abs("a/linkfile"))).toBe(s.secret)
  })

  it("refuses a hard-linked target and leaves both names unchanged", async () => {
    const { s, root } = await setup()
    fs.linkSync(s.secret, s.abs("hard.txt"))
    for (const options of [{}, { flag: "a" as const }, { flag: "r+" as const }, { flag: "w+" as const }, { atomic: true }]) {
      const e = await refusal(root.writeFileString("hard.txt", "PWNED", options))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("hardlink")
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(fs.statSync(s.abs("hard.txt")).ino).toBe(fs.statSync(s.secret).ino)
    expect(listing(s.root)).toEqual(["a", "dir", "hard.txt", "linkdir", "top.txt"])
  })

  it("refuses a FIFO without blocking, with or without a reader", async () => {
    const { s, root } = await setup()
    mkfifo(s.abs("pipe"))
    for (const options of [{}, { flag: "a" as const }, { flag: "r+" as const }, { flag: "w+" as const }, { atomic: true }]) {
      const e = await refusal(root.writeFileString("pipe", "data", options))
      expect(e.reason).toBe("BadResource")
      expect(e.refusal).toBe("notregular")
    }
    // A reader on the FIFO: the non-blocking open succeeds, and fstat refuses before any write.
    const reader = fs.openSync(s.abs("pipe"), fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
    try {
      const e = await refusal(root.writeFileString("pipe", "data"))
      expect(e.refusal).toBe("notregular")
      // No writer ever had it open: a read sees end-of-file, not our bytes.
      expect(fs.readSync(reader, Buffer.alloc(16))).toBe(0)
    } finally {
      fs.closeSync(reader)
    }
    expect(fs.lstatSync(s.abs("pipe")).isFIFO()).toBe(true)
  })

  it("refuses a directory as BadResource, and a trailing slash", async () => {
    const { s, root } = await setup()
    for (const options of [{}, { flag: "a" as const }, { atomic: true }]) {
      expect((await refusal(root.writeFileString("dir", "x", options))).reason).toBe("BadResource")
      expect((await refusal(root.writeFileString("top.txt/", "x", options))).reason).toBe("BadResource")
      expect((await refusal(root.writeFileString("newname/", "x", options))).reason).toBe("NotFound")
      expect((await refusal(root.writeFileString("linkdir/", "x", options))).refusal).toBe("symlink")
      expect((await refusal(root.writeFileString("", "x", options))).reason).not.toBe("Unknown")
    }
    expect(listing(s.abs("dir"))).toEqual([])
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
  })

  it("never climbs above the root with ..", async () => {
    const { s, root } = await setup()
    const name = path.basename(s.root)
    for (const options of [{}, { atomic: true }]) {
      for (const p of ["../outside/secret.txt", `../${name}/top.txt`, "a/../../outside/new.txt"]) {
        const e = await refusal(root.writeFileString(p, "PWNED", options))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("escape")
      }
      expect((await refusal(root.writeFileString("a/inner/../x", "x", options))).refusal).toBe("symlink")
    }
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
    expect(listing(s.outside)).toEqual(["secret.txt"])
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
  })

  it("refuses absolute paths and malformed input as BadArgument", async () => {
    const { s, root } = await setup()
    const badArgs: Array<() => Promise<unknown>> = [
      () => root.writeFileString(s.secret, "x"),
      () => root.writeFileString(s.abs("top.txt"), "x"),
      () => root.writeFileString("f", "x", { flag: "z" as OpenFlag }),
      () => root.writeFileString("f", "x", { flag: "r" }),
      () => root.writeFileString("f", "x", { flag: "toString" as OpenFlag }),
      () => root.writeFileString("f", "x", { mode: 0o10000 }),
      () => root.writeFileString("f", "x", { mode: -1 }),
      () => root.writeFileString("f", "x", { mode: 1.5 }),
      () => root.writeFileString("f", "x", { mode: "644" as unknown as number }),
      () => root.writeFile("f", "text" as unknown as Uint8Array),
      () => root.writeFile("f", [1, 2] as unknown as Uint8Array),
      () => root.writeFileString("f", 42 as unknown as string),
      () => root.writeFileString("f", "x", { flag: "a", atomic: true }),
      () => root.writeFileString("f", "x", { flag: "r+", atomic: true }),
      () => root.writeFileString("f", "x", { atomic: "yes" as unknown as boolean }),
      () => root.writeFileString("f", "x", { durable: 1 as unknown as boolean }),
      () => root.writeFileString("a\0b", "x"),
      () => root.writeFileString(`${"y".repeat(300)}`, "x"),
      // The addon's own checks, reached without the PinnedRoot guards.
      () => root.run({ op: native.ops.writeFile, path: "f", data: "x", flag: 99 }, "f"),
      () => root.run({ op: native.ops.writeFile, path: "f", data: "x", flag: native.flags.r }, "f"),
      () => root.run({ op: native.ops.writeFile, path: "f", data: "x", flag: native.flags.a, atomic: true }, "f"),
      () => root.run({ op: native.ops.writeFile, path: "f", data: "x", flag: native.flags.w, atomic: true, inPlace: true }, "f"),
      () => root.run({ op: native.ops.writeFile, path: "f", data: 7 as unknown as string, flag: native.flags.w }, "f"),
      () => root.run({ op: native.ops.writeFile, path: "f", data: "x", flag: native.flags.w, mode: 0o70000 }, "f")
    ]
    await expectEachBadArgument(badArgs)
    expect(fs.existsSync(s.abs("f"))).toBe(false)
    expect(fs.readFileSync(s.secret, "utf8")).toBe("TOP SECRET")
  })
})

describe.each(strategies)("writeFile atomic (%s)", (strategy) => {
  const setup = async () => {
    const s = scratch()
    s.make({ "a/b/script.sh": "#!/bin/sh\necho old\n", "top.txt": "top", "dir/": "" })
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  it("replaces the content and keeps the target's permission bits", async () => {
    const { s, root } = await setup()
    fs.chmodSync(s.abs("a/b/script.sh"), 0o755)
    const inode = fs.statSync(s.abs("a/b/script.sh")).ino
    await root.writeFileString("a/b/script.sh", "#!/bin/sh\necho new\n", { atomic: true })
    expect(fs.readFileSync(s.abs("a/b/script.sh"), "utf8")).toBe("#!/bin/sh\necho new\n")
    expect(modeOf(s.abs("a/b/script.sh"))).toBe(0o755)
    expect(fs.statSync(s.abs("a/b/script.sh")).ino).not.toBe(inode) // replaced, not rewritten
    fs.chmodSync(s.abs("top.txt"), 0o600)
    await root.writeFileString("top.txt", "secret-ish", { atomic: true, mode: 0o666 })
    expect(modeOf(s.abs("top.txt"))).toBe(0o600)
    // Bits the umask would strip survive too.
    fs.chmodSync(s.abs("top.txt"), 0o2775)
    await root.writeFileString("top.txt", "again", { atomic: true })
    expect(modeOf(s.abs("top.txt"))).toBe(0o2775)
    expect(listing(s.abs("a/b"))).toEqual(["script.sh"])
    expect(listing(s.root)).toEqual(["a", "dir", "top.txt"])
  })

  it("keeps a group-executable setgid bit when the caller lacks CAP_FSETID (unprivileged)", async () => {
    // The kernel clears S_ISGID from a group-executable file on every write by a caller without
    // CAP_FSETID in the initial user namespace: nobody here, and root inside a user namespace (CI's
    // arm64 pass under qemu-user runs in one). The bits must therefore be set after the data.
    const { s } = await setup()
    for (let d = s.root; d !== path.dirname(path.dirname(s.root)); d = path.dirname(d)) fs.chmodSync(d, 0o755)
    if (asRoot) {
      fs.chownSync(s.root, NOBODY, NOBODY)
      fs.chownSync(s.abs("top.txt"), NOBODY, NOBODY)
    }
    fs.chmodSync(s.abs("top.txt"), 0o2775)
    // Raw addon requests, not the library: staging the library means transpiling it, which takes
    // minutes under qemu-user (CI's arm64 pass).
    const out = requestsAsNobody(s.root, strategy, [{ op: "writeFile", path: "top.txt", data: "unprivileged", flag: "w", atomic: true }])
    expect(out[0]).toMatchObject({ ok: true })
    if (asRoot) expect(out[0]!.uid).toBe(NOBODY)
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("unprivileged")
    expect(modeOf(s.abs("top.txt"))).toBe(0o2775)
    expect(listing(s.root)).toEqual(["a", "dir", "top.txt"])
  })

  it("keeps the owner of a file it replaces", async () => {
    const { s, root } = await setup()
    if (process.getuid?.() !== 0) return expect(process.getuid?.()).not.toBe(0)
    fs.chownSync(s.abs("top.txt"), 65534, 65534)
    await root.writeFileString("top.txt", "owned", { atomic: true })
    const st = fs.statSync(s.abs("top.txt"))
    expect([st.uid, st.gid]).toEqual([65534, 65534])
  })

  it("creates a new file with Node's mode, at the root and at depth, leaving no temp file", async () => {
    const { s, root } = await setup()
    await root.writeFileString("new.txt", "n", { atomic: true })
    expect(modeOf(s.abs("new.txt"))).toBe(0o644)
    await root.writeFileString("a/b/new.txt", "m", { atomic: true, mode: 0o700 })
    expect(modeOf(s.abs("a/b/new.txt"))).toBe(0o700)
    await root.writeFile("a/empty", new Uint8Array(), { atomic: true })
    expect(fs.readFileSync(s.abs("a/empty")).length).toBe(0)
    expect(listing(s.root)).toEqual(["a", "dir", "new.txt", "top.txt"])
    expect(listing(s.abs("a"))).toEqual(["b", "empty"])
    expect(listing(s.abs("a/b"))).toEqual(["new.txt", "script.sh"])
  })

  it("fails cleanly on a directory, a missing parent or a file parent", async () => {
    const { s, root } = await setup()
    expect((await refusal(root.writeFileString("dir", "x", { atomic: true }))).code).toBe("EISDIR")
    expect((await refusal(root.writeFileString("nope/x", "x", { atomic: true }))).reason).toBe("NotFound")
    expect((await refusal(root.writeFileString("top.txt/x", "x", { atomic: true }))).reason).toBe("BadResource")
    expect(listing(s.root)).toEqual(["a", "dir", "top.txt"])
    expect(listing(s.abs("dir"))).toEqual([])
  })

  it("leaves the target whole and no temp file when the write itself fails", async () => {
    const { s, root } = await setup()
    root.close()
    // RLIMIT_FSIZE makes write(2) fail with EFBIG after the temp file exists (Node ignores
    // SIGXFSZ), which drives the cleanup path from a real failure rather than a check.
    const child = [
      "const b = require('node-gyp-build')(process.argv[1]);",
      "b.pin(process.argv[2], process.argv[3]).then(h => h.execute({",
      "  op: b.ops.writeFile, path: process.argv[4], data: Buffer.alloc(65536, 120), flag: b.flags.w, atomic: true",
      "})).then(() => console.log('ok'), e => console.log(e.code))"
    ].join("\n")
    for (const target of ["a/b/script.sh", "top.txt", "a/fresh.txt"]) {
      const out = execFileSync("prlimit", ["--fsize=4096", process.execPath, "-e", child, packageRoot, s.root, strategy, target], {
        cwd: packageRoot,
        encoding: "utf8"
      })
      expect(out.trim()).toBe("EFBIG")
    }
    expect(fs.readFileSync(s.abs("a/b/script.sh"), "utf8")).toBe("#!/bin/sh\necho old\n")
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe("top")
    expect(listing(s.root)).toEqual(["a", "dir", "top.txt"])
    expect(listing(s.abs("a"))).toEqual(["b"])
    expect(listing(s.abs("a/b"))).toEqual(["script.sh"])
  })

  it("readers see the old content or the new, never a mixture", async () => {
    const { s, root } = await setup()
    const old = "o".repeat(200_000)
    const next = "n".repeat(300_000)
    fs.writeFileSync(s.abs("top.txt"), old)
    const writing = root.writeFileString("top.txt", next, { atomic: true })
    const deadline = Date.now() + 5_000
    let seen = 0
    for (let i = 0; i < 2_000 && Date.now() < deadline; i++) {
      const content = fs.readFileSync(s.abs("top.txt"), "utf8")
      expect(content === old || content === next).toBe(true)
      seen++
      if (content === next) break
      await new Promise((r) => setImmediate(r))
    }
    await writing
    expect(seen).toBeGreaterThan(0)
    expect(fs.readFileSync(s.abs("top.txt"), "utf8")).toBe(next)
  })
})

describe.each(strategies)("writeFile: replacement by default, in place where a replacement cannot be what a write is (%s)", (strategy) => {
  it("replaces a w-family write (a new inode, mode and owner kept); wx creates whole or not at all; appends and atomic: false stay in place", async () => {
    const s = scratch()
    s.make({ "f.txt": "old", "g.txt": "old", "h.txt": "old", "x.txt": "taken" })
    fs.chmodSync(s.abs("f.txt"), 0o751)
    const root = await PinnedRoot.open(s.root, { strategy })
    const ino = (p: string) => fs.statSync(s.abs(p)).ino
    const before = { g: ino("g.txt"), h: ino("h.txt") }
    // Each checked at once: ext4 hands the freed inode number out again to the next new file.
    for (const flag of ["w", "w+"] as const) {
      const was = ino("f.txt")
      await root.writeFileString("f.txt", `new ${flag}`, { flag })
      expect({ flag, content: fs.readFileSync(s.abs("f.txt"), "utf8"), replaced: ino("f.txt") !== was }).toEqual({
        flag,
        content: `new ${flag}`,
        replaced: true
      })
      expect(modeOf(s.abs("f.txt"))).toBe(0o751)
    }
    await root.writeFileString("g.txt", "in place", { atomic: false })
    await root.writeFileString("h.txt", "+more", { flag: "a" })
    expect([ino("g.txt"), ino("h.txt")]).toEqual([before.g, before.h])
    expect(fs.readFileSync(s.abs("g.txt"), "utf8")).toBe("in place")
    expect(fs.readFileSync(s.abs("h.txt"), "utf8")).toBe("old+more")
    expect((await refusal(root.writeFileString("x.txt", "mine", { flag: "wx" }))).code).toBe("EEXIST")
    await root.writeFileString("y.txt", "created", { flag: "wx+", durable: true })
    expect(fs.readFileSync(s.abs("x.txt"), "utf8")).toBe("taken")
    expect(fs.readFileSync(s.abs("y.txt"), "utf8")).toBe("created")
    await root.writeFileString("f.txt", "durable", { durable: true, atomic: true })
    expect(fs.readFileSync(s.abs("f.txt"), "utf8")).toBe("durable")
    expect(listing(s.root)).toEqual(["f.txt", "g.txt", "h.txt", "x.txt", "y.txt"])
    root.close()
  })

  it("as nobody: in place where the directory takes no new file or the owner cannot be kept, refused where Node refuses", async (ctx) => {
    skipUnless(ctx, asRoot, "giving files to nobody needs root; running unprivileged, this test has nothing to set up")
    const s = scratch()
    s.make({ "shut/f.txt": "old", "open/roots.txt": "old", "open/readonly.txt": "old", "open/mine.txt": "old" })
    for (let d = s.root; d !== path.dirname(path.dirname(s.root)); d = path.dirname(d)) fs.chmodSync(d, 0o755)
    // shut/: root's, so nobody can add no name there; its file is nobody's. open/: nobody's.
    fs.chownSync(s.abs("shut/f.txt"), NOBODY, NOBODY)
    fs.chownSync(s.abs("open"), NOBODY, NOBODY)
    fs.chmodSync(s.abs("open/roots.txt"), 0o666)
    for (const f of ["readonly.txt", "mine.txt"]) fs.chownSync(s.abs(`open/${f}`), NOBODY, NOBODY)
    fs.chmodSync(s.abs("open/readonly.txt"), 0o444)
    const ino = (p: string) => fs.statSync(s.abs(p)).ino
    const inodes = { shut: ino("shut/f.txt"), roots: ino("open/roots.txt"), mine: ino("open/mine.txt") }
    const w = (p: string, data: string, extra: Record<string, unknown> = {}) => ({ op: "writeFile", path: p, data, flag: "w", ...extra })
    const out = requestsAsNobody(s.root, strategy, [
      w("shut/f.txt", "strict", { atomic: true }),
      w("shut/f.txt", "in place"),
      w("shut/new.txt", "x"),
      w("open/readonly.txt", "x"),
      w("open/roots.txt", "kept root's"),
      w("open/mine.txt", "replaced")
    ])
    expect(out.map((a) => (a.ok ? "ok" : a.code))).toEqual(["EACCES", "ok", "EACCES", "EACCES", "ok", "ok"])
    expect(out.every((a) => a.uid === NOBODY)).toBe(true)
    // The directory took no temporary: the file was written where it is, as fs.writeFile would.
    expect([fs.readFileSync(s.abs("shut/f.txt"), "utf8"), ino("shut/f.txt")]).toEqual(["in place", inodes.shut])
    // nobody cannot give a file to root: a replacement would have been nobody's, so in place.
    const roots = fs.statSync(s.abs("open/roots.txt"))
    expect([fs.readFileSync(s.abs("open/roots.txt"), "utf8"), roots.ino, roots.uid]).toEqual(["kept root's", inodes.roots, 0])
    expect(fs.readFileSync(s.abs("open/readonly.txt"), "utf8")).toBe("old")
    expect([fs.readFileSync(s.abs("open/mine.txt"), "utf8"), ino("open/mine.txt") === inodes.mine]).toEqual(["replaced", false])
    expect(listing(s.abs("shut"))).toEqual(["f.txt"])
    expect(listing(s.abs("open"))).toEqual(["mine.txt", "readonly.txt", "roots.txt"])
  })
})

describe.each(strategies)("a durable write in a directory that may be searched but not read (%s)", (strategy) => {
  const strace = spawnSync("strace", ["-V"]).status === 0

  it("syncs what holds the directory's new entry after the rename, as nobody (strace)", async (ctx) => {
    skipUnless(ctx, strace, "strace is not installed (apt-get install strace): nothing to watch the system calls with")
    skipUnless(ctx, asRoot, "a mode-0311 directory stops only an unprivileged caller, and dropping to nobody needs root")
    const s = scratch()
    s.make({ "wx/old.txt": "old" })
    for (let d = s.root; d !== path.dirname(path.dirname(s.root)); d = path.dirname(d)) fs.chmodSync(d, 0o755)
    fs.chownSync(s.abs("wx"), NOBODY, NOBODY)
    fs.chownSync(s.abs("wx/old.txt"), NOBODY, NOBODY)
    fs.chmodSync(s.abs("wx"), 0o311) // nobody may create and search there, not list
    const traces = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-strace-"))
    fs.chmodSync(traces, 0o777)
    try {
      const trace = path.join(traces, "trace")
      const out = requestsAsNobody(
        s.root,
        strategy,
        [
          { op: "writeFile", path: "wx/old.txt", data: "replaced", flag: "w", durable: true },
          { op: "writeFile", path: "wx/new.txt", data: "created", flag: "w", durable: true }
        ],
        ["strace", "-f", "-qq", "-o", trace, "-e", "trace=linkat,renameat,renameat2,fsync,fdatasync,syncfs,sync"]
      )
      expect(out.map((a) => a.ok)).toEqual([true, true])
      const lines = fs.readFileSync(trace, "utf8").split("\n")
      // Each publication (the rename over old.txt, the link of new.txt) is followed by a sync that
      // reaches the directory: fsync of a descriptor of it, or syncfs of the file system it is on.
      for (const name of ["old.txt", "new.txt"]) {
        const at = lines.findIndex((l) => /(renameat2?|linkat)\(/.test(l) && l.includes(`"${name}"`) && / = 0$/.test(l))
        expect({ name, published: at >= 0 }).toEqual({ name, published: true })
        const next = lines.slice(at + 1).find((l) => /(fsync|syncfs)\(/.test(l) || /(renameat2?|linkat)\(/.test(l))
        expect({
          name,
          next: next
            ?.replace(/^\d+\s+/, "")
            .replace(/\(\d+\)/, "(N)")
            .replace(/\s+/g, " ")
        }).toEqual({ name, next: "syncfs(N) = 0" })
      }
    } finally {
      fs.rmSync(traces, { recursive: true, force: true })
      fs.chmodSync(s.abs("wx"), 0o755)
    }
    expect(fs.readFileSync(s.abs("wx/old.txt"), "utf8")).toBe("replaced")
    expect(fs.readFileSync(s.abs("wx/new.txt"), "utf8")).toBe("created")
    expect(listing(s.abs("wx"))).toEqual(["new.txt", "old.txt"])
  })
})

describe.each(strategies)("writes after the root is replaced (%s)", (strategy) => {
  it("refuses as Busy when asked to verify, and otherwise acts on the pinned directory only", async () => {
    const s = scratch()
    s.make({ "top.txt": "top", "dir/": "" })
    const root = await PinnedRoot.open(s.root, { strategy })
    const moved = `${s.root}-moved`
    fs.renameSync(s.root, moved)
    fs.mkdirSync(s.root)
    fs.writeFileSync(path.join(s.root, "top.txt"), "impostor")
    try {
      const requests = [
        { op: native.ops.writeFile, path: "top.txt", data: "x", flag: native.flags.w },
        { op: native.ops.writeFile, path: "top.txt", data: "x", flag: native.flags.w, atomic: true },
        { op: native.ops.chmod, path: "top.txt", mode: 0o600 },
        { op: native.ops.chown, path: "top.txt", uid: 65534, gid: 65534 },
        { op: native.ops.rename, path: "top.txt", to: "renamed.txt" }
      ]
      for (const request of requests) {
        const e = await root.handle.execute(request, true).then(
          () => undefined,
          (u: unknown) => u
        )
        expect({ op: request.op, e }).toMatchObject({ op: request.op, e: { refusal: "identity" } })
      }
      expect(listing(s.root)).toEqual(["top.txt"])
      expect(fs.readFileSync(path.join(s.root, "top.txt"), "utf8")).toBe("impostor")
      expect(fs.readFileSync(path.join(moved, "top.txt"), "utf8")).toBe("top")
      // Unverified, the handle still names the directory it pinned, wherever it went.
      await root.writeFileString("top.txt", "pinned", { atomic: true })
      expect(fs.readFileSync(path.join(moved, "top.txt"), "utf8")).toBe("pinned")
      expect(fs.readFileSync(path.join(s.root, "top.txt"), "utf8")).toBe("impostor")
      expect(listing(moved)).toEqual(["dir", "top.txt"])
    } finally {
      root.close()
      fs.rmSync(moved, { recursive: true, force: true })
    }
  })
})

/**
 * A small tmpfs of its own, mounted under a temporary directory for one test and unmounted after.
 * Mounting needs CAP_SYS_ADMIN: where it is refused, the test says so and skips.
 */
const smallDisk = (bytes: number): { dir: string; unmount: () => void } | string => {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-full-"))
  const dir = path.join(base, "disk")
  fs.mkdirSync(dir)
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${bytes},mode=0755`, "tmpfs", dir], { stdio: "pipe" })
  } catch (e) {
    fs.rmSync(base, { recursive: true, force: true })
    return `mounting a ${bytes}-byte tmpfs was refused: ${String((e as { stderr?: unknown }).stderr ?? e).trim()}`
  }
  return {
    dir,
    unmount: () => {
      execFileSync("umount", [dir])
      fs.rmSync(base, { recursive: true, force: true })
    }
  }
}

describe.each(strategies)("writeFile on a full disk (%s)", (strategy) => {
  // 1 MiB of tmpfs holding a 200 KiB file: a 2 MiB replacement cannot fit beside it, nor in place.
  const entries = (root: string, target: string) => {
    const extension = NodeAtomicFileSystem.make({ strategy })
    const fallback = PathAtomicFileSystem.make()
    const viaWire = async (atomic: AtomicFileSystem, operation: "writeFile" | "writeFileString", data: Buffer) => {
      const rootIdentity = await Effect.runPromise(atomic.identifyRoot!(root))
      const request = {
        boundaryRoot: root,
        logicalRoot: root,
        rootIdentity,
        operation,
        path: path.join(root, target),
        data: operation === "writeFile" ? data.toString("base64") : data.toString("latin1"),
        options: { flag: "w" }
      }
      return Effect.runPromise(Effect.flip(atomic.execute(request as AtomicRequest))).then((e) => e.reason._tag)
    }
    return {
      "PinnedRoot.writeFile": async (data: Buffer) => {
        const pinned = await PinnedRoot.open(root, { strategy })
        try {
          return (await refusal(pinned.writeFile(target, data))).code
        } finally {
          pinned.close()
        }
      },
      "extension writeFile": (data: Buffer) => viaWire(extension, "writeFile", data),
      "extension writeFileString": (data: Buffer) => viaWire(extension, "writeFileString", data),
      "fallback writeFile": (data: Buffer) => viaWire(fallback, "writeFile", data),
      "pinnedfs/kernel writeFile": (data: Buffer) =>
        kernelFailure(
          kernelLayer(NodeAtomicFileSystem.layerWith({ strategy }), root, allowAll(root)),
          Effect.flatMap(Effect.service(FileSystem.FileSystem), (fs) => fs.writeFile(target, data))
        ).then((e) => reasonTag(e)),
      close: () => (extension as { close?: () => void }).close?.()
    }
  }

  it("fails typed and keeps the old content whole, with no temporary file, through every entry", async (ctx) => {
    const disk = smallDisk(1 << 20)
    if (typeof disk === "string") return skipUnless(ctx, false, disk)
    try {
      const old = Buffer.alloc(200 * 1024, "o")
      const next = Buffer.alloc(2 * 1024 * 1024, "n")
      const { close, ...each } = entries(disk.dir, "f.bin")
      try {
        for (const [entry, write] of Object.entries(each)) {
          fs.writeFileSync(path.join(disk.dir, "f.bin"), old)
          const failed = await write(next)
          expect({ entry, failed }).toEqual({ entry, failed: entry.startsWith("PinnedRoot") ? "ENOSPC" : "Unknown" })
          expect({ entry, names: fs.readdirSync(disk.dir) }).toEqual({ entry, names: ["f.bin"] })
          expect({ entry, same: fs.readFileSync(path.join(disk.dir, "f.bin")).equals(old) }).toEqual({ entry, same: true })
        }
      } finally {
        close()
      }
    } finally {
      disk.unmount()
    }
  })
})
