import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { Effect, FileSystem } from "effect"
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { PinnedFsError, PinnedRoot } from "../src/index.ts"
import { noTestHooks, testHooks, trips } from "./support/hooks.ts"
import { skipUnless } from "./support/skip.ts"
import { asRoot, NOBODY, runAsNobody } from "./support/nobody.ts"
import { strategies } from "./support/strategies.ts"
import { mkfifo, openDescriptorCount, scratch } from "./support/tree.ts"
import { rejection as refusal } from "./support/rejection.ts"

/** A chain of `levels` nested directories "d/d/…" under `base`, made one level at a time from inside. */
const chain = (base: string, levels: number): void => {
  const here = process.cwd()
  fs.mkdirSync(base, { recursive: true })
  process.chdir(base)
  try {
    for (let i = 0; i < levels; i++) {
      fs.mkdirSync("d")
      process.chdir("d")
    }
  } finally {
    process.chdir(here)
  }
}

interface GlobOptions {
  readonly root?: string
  readonly exclude?: ReadonlyArray<string>
  readonly dot?: boolean
}

/** The reference: Effect 4.1's own glob over Node's file system. */
const effectGlob = (pattern: string, options: GlobOptions): Promise<Array<string>> =>
  Effect.runPromise(
    Effect.gen(function* () {
      const fileSystem = yield* FileSystem.FileSystem
      return yield* fileSystem.glob(pattern, options)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

// Names chosen to exercise dot rules, classes, escapes, code points beyond ASCII, and the one place
// where JavaScript's sort (UTF-16 code units) differs from code point order ("p\uE000" vs "p😀").
const tree: Record<string, string> = {
  "src/index.ts": "",
  "src/util.ts": "",
  "src/a.js": "",
  "src/b.js": "",
  "src/lib/deep.ts": "",
  "src/lib/x.d.ts": "",
  "src/lib/.hidden": "",
  "src/.config/c.ts": "",
  "a/x.js": "",
  "a/y.txt": "",
  "b/z.js": "",
  "b/sub/w.js": "",
  "b/sub/deeper/v.ts": "",
  "c/": "",
  "empty/": "",
  ".hidden": "",
  ".git/config": "",
  ".git/objects/o1": "",
  "README.md": "",
  Makefile: "",
  x1: "",
  xyz: "",
  "[weird].txt": "",
  "brace{a,b}.txt": "",
  "star*.txt": "",
  "q?.txt": "",
  "ünï.ts": "",
  "日本.ts": "",
  "p\uE000.ts": "",
  "p😀.ts": "",
  "Zeta.ts": "",
  "_under.ts": "",
  "1num.ts": "",
  "dir.with.dots/file": "",
  "nested/a/b/c/d.ts": "",
  "nested/a/.b/e.ts": ""
}

interface Case {
  readonly pattern: string
  readonly options?: GlobOptions
}

const cases: ReadonlyArray<Case> = [
  ...[
    "*",
    "**",
    "**/*",
    "**/*.ts",
    "**/*.js",
    "**/*.d.ts",
    "src/**",
    "src/**/*.ts",
    "src/*",
    "{a,b}/*.js",
    "{a,{b,c}}/**",
    "{src,a}/{*.ts,*.js}",
    "*.{ts,js,md}",
    "{,src/}*.ts",
    "{a,b,c,empty}/",
    "[a-c]*",
    "[!x]*",
    "[^x]*",
    "[[:alpha:]]*",
    "[[:digit:]]*",
    "[[:upper:]]*",
    "[[:punct:]]*",
    "[[:alpha:][:digit:]]*",
    "[a-]*",
    "[]]*",
    "[z-a]*",
    "[*",
    "x?",
    "x*",
    "?",
    "??",
    ".*",
    "**/.hidden",
    "**/.*",
    "src/**/.*",
    ".git/**",
    "**/.git",
    "**/o1",
    "*/",
    "**/",
    "src/*/",
    "b/**/",
    "b/**",
    "**/sub/**",
    "a/**/x.js",
    "*/*/*",
    "**/[a-z]*.js",
    "**/*[0-9]*",
    "missing/**",
    "missing/x/*.ts",
    "missing",
    "src/lib/deep.ts",
    "src/index.ts",
    "src/index.ts/",
    "src/lib",
    "src/lib/",
    "nope.ts",
    "\\[weird\\].txt",
    "[[]weird].txt",
    "star\\*.txt",
    "star*",
    "brace\\{a,b\\}.txt",
    "brace{a,b}.txt",
    "q\\?.txt",
    "./src/*.ts",
    "src//*.ts",
    "src/./lib/*",
    "src/../a/*.js",
    "src/..",
    "src/../*",
    "src/lib/../../b/*",
    "*/../b/*.js",
    "**/..",
    ".",
    "./",
    "src/.",
    "",
    "ü*",
    "*本*",
    "p*",
    "p?.ts",
    "[ü]nï.ts",
    "nested/**/d.ts",
    "nested/*/.b/*",
    "nested/**/*.ts",
    "dir.with.dots/*",
    "*.*",
    "{{a,b},{c,src}}/*",
    "{a,b}{,/*}",
    "\\*",
    "//server/share"
  ].map((pattern): Case => ({ pattern })),
  ...["*", "**/*.ts", ".*", "**/.hidden", "nested/**", "src/**/*", "**/", "[.]*"].map(
    (pattern): Case => ({ pattern, options: { dot: true } })
  ),
  { pattern: "**/*.ts", options: { exclude: ["src/lib/**"] } },
  { pattern: "**/*.ts", options: { exclude: ["src/lib"] } },
  { pattern: "**", options: { exclude: [".git"] } },
  { pattern: "**", options: { exclude: ["src"] } },
  { pattern: "**", options: { exclude: ["**/*.js"] } },
  { pattern: "**", options: { exclude: ["*/"] } },
  { pattern: "**", options: { exclude: ["**/"] } },
  { pattern: "**", options: { exclude: ["{a,b}", "nested/a/b"] } },
  { pattern: "**", options: { exclude: ["**/.*"], dot: true } },
  { pattern: "**", options: { exclude: ["*"] } },
  { pattern: "**/*", options: { exclude: ["b/**"] } },
  { pattern: ".*", options: { exclude: ["*"] } },
  { pattern: "**", options: { exclude: ["**/[a-c]"] } },
  { pattern: "src/**", options: { exclude: ["src"] } },
  { pattern: "*", options: { root: "src" } },
  { pattern: "**/*.ts", options: { root: "src" } },
  { pattern: "**", options: { root: "nested", dot: true } },
  { pattern: "lib/*", options: { root: "src" } },
  { pattern: "../a/*.js", options: { root: "src" } },
  { pattern: "../../src/*.ts", options: { root: "src/lib" } },
  { pattern: "*", options: { root: "missing" } },
  { pattern: "*", options: { root: "src/index.ts" } },
  { pattern: "**", options: { root: "src", exclude: ["lib"] } },
  { pattern: "*", options: { root: "src/lib" } }
]

// A deterministic generator, so a failure names its seed.
const rng = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

/**
 * A random tree of at most three levels of `names`: `width` tries per directory, each a directory
 * (descended into) with chance `dirs`, else a file; a name taken at its level is skipped.
 */
const randomTree = (
  random: () => number,
  {
    names = ["a", "b", "ab", "ba", ".d", "x.ts", "y.js", "z.ts", "A", "1", "a.b", "é"],
    width = () => 1 + Math.floor(random() * 4),
    dirs = 0.45
  }: { names?: ReadonlyArray<string>; width?: () => number; dirs?: number } = {}
): Record<string, string> => {
  const out: Record<string, string> = {}
  const grow = (prefix: string, depth: number) => {
    const count = width()
    for (let i = 0; i < count; i++) {
      const at = prefix + names[Math.floor(random() * names.length)]
      if (out[at] !== undefined || out[at + "/"] !== undefined) continue
      if (depth < 3 && random() < dirs) {
        out[at + "/"] = ""
        grow(at + "/", depth + 1)
      } else {
        out[at] = ""
      }
    }
  }
  grow("", 0)
  return out
}

const randomPattern = (random: () => number): string => {
  const pieces = [
    "*",
    "**",
    "?",
    "a",
    "b",
    "ab",
    "[ab]",
    "[!a]*",
    "{a,b}",
    "{a,x.ts,{b,ba}}",
    "*.ts",
    ".*",
    ".d",
    "x.ts",
    "[[:alpha:]]",
    "*a*",
    "é",
    "[a-z]?",
    "..",
    "."
  ]
  const segments = 1 + Math.floor(random() * 4)
  const parts: Array<string> = []
  for (let i = 0; i < segments; i++) parts.push(pieces[Math.floor(random() * pieces.length)])
  return parts.join("/") + (random() < 0.15 ? "/" : "")
}

describe.each(strategies)("glob (%s)", (strategy) => {
  const setup = async (spec: Record<string, string> = tree) => {
    const s = scratch()
    s.make(spec)
    const root = await PinnedRoot.open(s.root, { strategy })
    expect(root.strategy).toBe(strategy)
    return { s, root }
  }

  it(`agrees with NodeFileSystem.glob on ${cases.length} patterns, order included`, async () => {
    const { s, root } = await setup()
    const mismatches: Array<unknown> = []
    let nonEmpty = 0
    for (const { pattern, options = {} } of cases) {
      const reference = await effectGlob(pattern, {
        ...options,
        root: options.root === undefined ? s.root : path.join(s.root, options.root)
      })
      const ours = await root.glob(pattern, options)
      if (JSON.stringify(ours) !== JSON.stringify(reference)) mismatches.push({ pattern, options, ours, reference })
      if (reference.length > 0) nonEmpty++
    }
    expect(mismatches).toEqual([])
    // The table is not vacuous: most patterns match something.
    expect(nonEmpty).toBeGreaterThan(cases.length * 0.7)
  })

  it("agrees with NodeFileSystem.glob on seeded random trees and patterns", async () => {
    let nonEmpty = 0
    let escapes = 0
    for (let seed = 1; seed <= 6; seed++) {
      const random = rng(seed)
      const { s, root } = await setup(randomTree(random))
      for (let i = 0; i < 60; i++) {
        const pattern = randomPattern(random)
        const options: GlobOptions = {
          dot: random() < 0.3,
          ...(random() < 0.25 ? { exclude: [randomPattern(random)] } : {})
        }
        const reference = await effectGlob(pattern, { ...options, root: s.root })
        const ours = await root.glob(pattern, options).catch((e: unknown) => e)
        if (ours instanceof PinnedFsError && ours.refusal === "escape") {
          // Ours refuses a pattern whose '..' could climb above the pinned root, found or not;
          // Effect lists outside. Whatever Effect found is outside.
          for (const p of reference) expect(p === ".." || p.startsWith("../")).toBe(true)
          escapes++
          continue
        }
        expect({ seed, pattern, options, result: ours }).toEqual({ seed, pattern, options, result: reference })
        if (reference.length > 0) nonEmpty++
      }
    }
    expect(nonEmpty).toBeGreaterThan(60)
    expect(escapes).toBeLessThan(60)
  })

  it("names what it refused: the root the pattern is read from, or the pattern", async () => {
    const { root } = await setup()
    const byRoot = await refusal(root.glob("*", { root: ".." }))
    expect({ reason: byRoot.reason, path: byRoot.path }).toEqual({ reason: "PermissionDenied", path: ".." })
    const byPattern = await refusal(root.glob("../*"))
    expect({ reason: byPattern.reason, path: byPattern.path }).toEqual({ reason: "PermissionDenied", path: "../*" })
    root.close()
  })

  it("differs from Effect where a literal holds an escaped '/': no single name can match it", async () => {
    const { s, root } = await setup()
    expect(await effectGlob("a\\/x.js", { root: s.root })).toEqual(["a/x.js"])
    expect(await root.glob("a\\/x.js")).toEqual([])
  })

  it("leaves no descriptor open and handles a deep chain", async () => {
    const { s, root } = await setup()
    let deep = "deep"
    for (let i = 0; i < 150; i++) deep += "/d"
    s.make({ [deep + "/leaf.ts"]: "" })
    const before = openDescriptorCount()
    expect(await root.glob("deep/**/leaf.ts")).toEqual([deep + "/leaf.ts"])
    expect((await root.glob("**", { exclude: ["src", ".git"] })).length).toBeGreaterThan(150)
    await refusal(root.glob("*", { root: "../x" }))
    expect(openDescriptorCount()).toBe(before)
  })

  it("walks 256 levels and refuses the 257th as toolarge, over a 10,000-level tree at once", async () => {
    const { s, root } = await setup({})
    chain(s.abs("ok"), 256)
    fs.writeFileSync(path.join(s.abs("ok"), ...Array.from({ length: 256 }, () => "d"), "f"), "")
    // 256 levels below the glob root are read, as a recursive listing reads them.
    expect(await root.glob("**/f", { root: "ok" })).toEqual([[...Array.from({ length: 256 }, () => "d"), "f"].join("/")])
    expect((await refusal(root.glob("ok/**/f"))).refusal).toBe("toolarge")
    // Far deeper than any path: made one level at a time from inside the last one.
    chain(s.abs("t"), 10_000)
    try {
      const before = openDescriptorCount()
      for (const pattern of ["**/f", "t/**/zzz", "t/*/*/*/*/**", `t/${"*/".repeat(300)}x`]) {
        const e = await refusal(root.glob(pattern))
        expect({ pattern, reason: e.reason, refusal: e.refusal }).toEqual({ pattern, reason: "BadArgument", refusal: "toolarge" })
        expect(e.description).toContain("256 levels")
      }
      expect(openDescriptorCount()).toBe(before)
    } finally {
      // node:fs removes by path, and this tree is deeper than any path can name.
      execFileSync("rm", ["-rf", s.abs("t")])
    }
    root.close()
  }, 120_000)

  it("agrees with NodeFileSystem.glob on seeded random character-level patterns", async () => {
    const names = ["a", "b", "ab", ".d", "x.ts", "A", "1", "a.b", "é", "[a]", "{a,b}", "a*", "-", "!", "p\uE000", "p😀", "..a", "c d"]
    const chars = [
      "a",
      "b",
      "*",
      "?",
      "[",
      "]",
      "!",
      "^",
      "-",
      "{",
      "}",
      ",",
      "\\",
      "/",
      ".",
      "x",
      "é",
      ":",
      "[:alpha:]",
      "**",
      "😀",
      "A",
      "1",
      "d"
    ]
    let compared = 0
    for (let seed = 100; seed < 103; seed++) {
      const random = rng(seed)
      const spec = randomTree(random, { names, width: () => 4, dirs: 0.4 })
      const { s, root } = await setup(spec)
      for (let i = 0; i < 120; i++) {
        let pattern = ""
        for (let k = 1 + Math.floor(random() * 10); k > 0; k--) pattern += chars[Math.floor(random() * chars.length)]
        const options: GlobOptions = {
          dot: random() < 0.3,
          ...(random() < 0.2 ? { exclude: [chars[Math.floor(random() * chars.length)] + "*"] } : {})
        }
        const reference = await effectGlob(pattern, { ...options, root: s.root })
        const ours = await root.glob(pattern, options).catch((e: unknown) => e)
        if (ours instanceof PinnedFsError) {
          // The two refusals we choose: absolute (or drive) patterns, and climbs above the root.
          if (ours.reason === "BadArgument") expect(pattern).toMatch(/(^|[{,])([A-Za-z]:)?\//)
          else expect(ours.refusal).toBe("escape")
          for (const p of reference) expect(p.startsWith("/") || p.startsWith("..") || /^[A-Za-z]:/.test(p)).toBe(true)
          continue
        }
        expect({ seed, pattern, options, result: ours }).toEqual({ seed, pattern, options, result: reference })
        compared++
      }
    }
    expect(compared).toBeGreaterThan(250)
  })

  it("answers in one trip", async (ctx) => {
    skipUnless(ctx, testHooks, noTestHooks)
    const { root } = await setup()
    const before = trips()
    expect(await root.glob("**/*.ts")).toContain("src/lib/deep.ts")
    expect(trips() - before).toBe(1)
  })

  describe("links are never traversed", () => {
    const linked = async () => {
      const t = await setup({ "src/a.ts": "", "src/sub/b.ts": "", "other/c.ts": "" })
      fs.symlinkSync(t.s.outside, t.s.abs("out"))
      fs.symlinkSync(t.s.secret, t.s.abs("src/secret-link.txt"))
      fs.symlinkSync("src", t.s.abs("inner"))
      fs.symlinkSync("nowhere", t.s.abs("broken"))
      return t
    }

    it("** reports a link as a match but never enters it", async () => {
      const { root } = await linked()
      const all = await root.glob("**", { dot: true })
      expect(all).toEqual([
        "broken",
        "inner",
        "other",
        "other/c.ts",
        "out",
        "src",
        "src/a.ts",
        "src/secret-link.txt",
        "src/sub",
        "src/sub/b.ts"
      ])
      expect(await root.glob("**/*.txt")).toEqual(["src/secret-link.txt"])
      expect(await root.glob("**/secret.txt")).toEqual([])
    })

    it("a literal or wildcard segment naming a link contributes nothing beyond the link itself", async () => {
      const { root } = await linked()
      expect(await root.glob("out/*")).toEqual([])
      expect(await root.glob("out/secret.txt")).toEqual([])
      expect(await root.glob("*/secret.txt")).toEqual([])
      expect(await root.glob("inner/*.ts")).toEqual([])
      expect(await root.glob("inner/**")).toEqual(["inner"])
      expect(await root.glob("out")).toEqual(["out"])
      expect(await root.glob("broken")).toEqual(["broken"])
      // Directory-only: telling would mean looking through the link.
      expect(await root.glob("out/")).toEqual([])
      expect(await root.glob("*/")).toEqual(["other", "src"])
    })

    it("refuses a glob root that is a link, or passes through one", async () => {
      const { root } = await linked()
      for (const at of ["out", "inner", "inner/sub"]) {
        const e = await refusal(root.glob("*", { root: at }))
        expect(e.reason).toBe("PermissionDenied")
        expect(e.refusal).toBe("symlink")
      }
      // Even when the pattern is literal only, the root is opened and checked.
      expect((await refusal(root.glob("a.ts", { root: "inner" }))).reason).toBe("PermissionDenied")
    })

    it("treats a missing or non-directory glob root as empty", async () => {
      const { root } = await linked()
      expect(await root.glob("*", { root: "missing" })).toEqual([])
      expect(await root.glob("x", { root: "missing/deeper" })).toEqual([])
      expect(await root.glob("*", { root: "src/a.ts" })).toEqual([])
    })
  })

  it("never opens a FIFO it lists", async () => {
    const { s, root } = await setup({ "d/x.ts": "" })
    mkfifo(s.abs("d/pipe"))
    mkfifo(s.abs("pipe2"))
    expect(await root.glob("**")).toEqual(["d", "d/pipe", "d/x.ts", "pipe2"])
    expect(await root.glob("pipe2/")).toEqual([])
    expect(await root.glob("pipe2/*")).toEqual([])
  })

  it("does not read an excluded directory (its access time stays put)", async () => {
    const { s, root } = await setup({ "keep/a.ts": "", "skip/b.ts": "", "skip/inner/c.ts": "" })
    const skip = s.abs("skip")
    const stale = () => {
      const { mtime } = fs.statSync(skip)
      fs.utimesSync(skip, new Date(0), mtime)
      expect(fs.statSync(skip).atimeMs).toBe(0)
    }
    // Control: listing the directory does move its access time (relatime: atime older than mtime),
    // so the assertions below could fail.
    stale()
    expect(await root.glob("**")).toContain("skip/b.ts")
    expect(fs.statSync(skip).atimeMs).not.toBe(0)

    for (const exclude of [["skip"], ["skip/"], ["*/"], ["{skip,other}"], ["**/skip"]]) {
      stale()
      const found = await root.glob("**", { exclude })
      expect(found.some((p) => p.startsWith("skip"))).toBe(false)
      expect(fs.statSync(skip).atimeMs).toBe(0)
    }
    stale()
    expect(await root.glob("**/*.ts", { exclude: ["skip"] })).toEqual(["keep/a.ts"])
    expect(fs.statSync(skip).atimeMs).toBe(0)
  })

  it("resolves '..' by handle and refuses a climb above the pinned root", async () => {
    const { root } = await setup()
    expect(await root.glob("../a/*.js", { root: "src" })).toEqual(["../a/x.js"])
    for (const [pattern, at] of [
      ["../x", ""],
      ["../../*", "src"],
      ["{a,../../b}", "src"],
      ["*/../../x", ""]
    ] as const) {
      const e = await refusal(root.glob(pattern, { root: at }))
      expect(e.reason).toBe("PermissionDenied")
      expect(e.refusal).toBe("escape")
    }
    // A glob root above the pinned root is refused too.
    expect((await refusal(root.glob("*", { root: ".." }))).reason).toBe("PermissionDenied")
    // After `**`, ".." makes a pattern match nothing (Effect's rule), so it cannot climb.
    expect(await root.glob("**/../../../x")).toEqual([])
  })

  it("refuses bad input", async () => {
    const { root } = await setup()
    const bad = async (p: Promise<unknown>) => expect((await refusal(p)).reason).toBe("BadArgument")
    await bad(root.glob(42 as unknown as string))
    await bad(root.glob(undefined as unknown as string))
    await bad(root.glob("*", { exclude: "x" as unknown as Array<string> }))
    await bad(root.glob("*", { exclude: [1] as unknown as Array<string> }))
    await bad(root.glob("a\0b"))
    await bad(root.glob("*", { exclude: ["a\0"] }))
    await bad(root.glob("*", { root: "a\0" }))
    await bad(root.glob("*", { root: "/etc" }))
    await bad(root.glob("/etc/*"))
    await bad(root.glob("{/etc/passwd,x}"))
    await bad(root.glob("*", { root: 7 as unknown as string }))
  })
})

// Permission semantics need an unprivileged process (root reads anything): a child running as
// `nobody` runs our glob and Effect's over the same tree and reports both.
const childScript = `
const [rootDir, strategy, casesJson] = process.argv.slice(1)
;(async () => {
  const { Effect, FileSystem } = await import(stage + "/node_modules/effect/dist/index.js")
  const NodeFileSystem = await import(stage + "/node_modules/@effect/platform-node/dist/NodeFileSystem.js")
  const handle = await native.pin(rootDir, strategy)
  const out = []
  for (const c of JSON.parse(casesJson)) {
    const ours = await handle
      .execute({ op: native.ops.glob, path: "", to: c.root ?? "", pattern: c.pattern, exclude: c.exclude ?? [], dot: false })
      .then((ok) => ({ ok }), (e) => ({ err: e.code }))
    const reference = await Effect.runPromise(
      Effect.gen(function*() {
        const fileSystem = yield* FileSystem.FileSystem
        return yield* fileSystem.glob(c.pattern, { root: c.root ? rootDir + "/" + c.root : rootDir, exclude: c.exclude })
      }).pipe(Effect.provide(NodeFileSystem.layer))
    ).then((ok) => ({ ok }), (e) => ({ err: e?.reason?._tag ?? String(e) }))
    out.push({ ...c, ours, reference, uid: process.getuid() })
  }
  handle.close()
  process.stdout.write(JSON.stringify(out))
})().catch((e) => { console.error(e); process.exit(1) })
`

describe.each(strategies)("glob as an unprivileged user (%s)", (strategy) => {
  it("propagates denied named directories, skips denied wildcard-reached ones, never reads excluded ones", () => {
    const s = scratch()
    s.make({ "locked/known.ts": "", "sealed/x.ts": "", "open/ok.ts": "" })
    fs.chmodSync(path.dirname(s.root), 0o755)
    fs.chmodSync(s.abs("locked"), 0o111) // searchable, not listable
    fs.chmodSync(s.abs("sealed"), 0o000)
    const cases = [
      { pattern: "locked/*", expect: { err: "PermissionDenied" } },
      { pattern: "locked/known.ts", expect: { ok: ["locked/known.ts"] } },
      { pattern: "*/known.ts", expect: { ok: [] } },
      { pattern: "**", expect: { ok: ["locked", "open", "open/ok.ts", "sealed"] } },
      { pattern: "sealed/x.ts", expect: { err: "PermissionDenied" } },
      // Excluded directories are never read: without the exclude these would fail.
      { pattern: "locked/*", exclude: ["locked"], expect: { ok: [] } },
      { pattern: "sealed/**", exclude: ["sealed/"], expect: { ok: [] } },
      { pattern: "*", root: "locked", expect: { err: "PermissionDenied" } },
      { pattern: "known.ts", root: "locked", expect: { ok: ["known.ts"] } },
      { pattern: "*", root: "sealed", expect: { err: "PermissionDenied" } },
      { pattern: "x.ts", root: "sealed", expect: { err: "PermissionDenied" } }
    ]
    const result = runAsNobody(childScript, {
      args: [s.root, strategy, JSON.stringify(cases.map(({ expect: _, ...c }) => c))],
      packages: ["effect", "@effect/platform-node", "@effect/platform-node-shared"]
    })
    expect(result.stderr).toBe("")
    const rows = JSON.parse(result.stdout) as Array<{
      uid: number
      pattern: string
      ours: { ok?: Array<string>; err?: string }
      reference: unknown
    }>
    expect(rows.length).toBe(cases.length)
    if (asRoot) expect(rows[0]!.uid).toBe(NOBODY)
    const errno: Record<string, string> = { EACCES: "PermissionDenied", EPERM: "PermissionDenied" }
    rows.forEach((row, i) => {
      const ours = row.ours.err === undefined ? row.ours : { err: errno[row.ours.err] ?? row.ours.err }
      expect({ i, ...row, ours }).toEqual({ i, ...row, ours: cases[i].expect, reference: cases[i].expect })
    })
  })
})
