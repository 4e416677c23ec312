/**
 * Discovery over real trees, both strategies: what it finds, what it never does (follow a link,
 * enter a matched tree or the temporary root, decode a name), how it stops (bounds, cancellation),
 * and that its matcher agrees with picomatch on the rule syntax.
 */
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import picomatch from "picomatch"
import { describe, expect, it } from "vitest"
import { Anchors } from "../../src/confine/anchors.ts"
import { discoverProtected } from "../../src/confine/discovery.ts"
import { compilePolicy, Confinement } from "../../src/confine/index.ts"
import { rawOf, shown } from "../../src/confine/raw.ts"
import { PinnedRoot } from "../../src/PinnedRoot.ts"
import { discover } from "../../src/confine/wire.ts"
import { strategies } from "../support/strategies.ts"
import { refusal, runScript, sandboxTree } from "./support/tree.ts"

describe.each(strategies)("discovery (%s)", (strategy) => {
  const find = async (
    root: string,
    globs: Array<[string, ("read-only" | "inaccessible")?]>,
    extra: { tempRoot?: string; limits?: object; signal?: AbortSignal } = {}
  ) => {
    const anchors = new Anchors(strategy)
    try {
      const canonical = rawOf(fs.realpathSync(root))
      return await discoverProtected({
        rules: compilePolicy({ defaults: false, protected: globs }).rules,
        workspaces: [canonical],
        home: null,
        tempRoot: extra.tempRoot ? rawOf(fs.realpathSync(extra.tempRoot)) : null,
        anchors,
        limits: extra.limits,
        signal: extra.signal
      })
    } finally {
      await anchors.close()
    }
  }
  const paths = (root: string, d: Awaited<ReturnType<typeof find>>) => d.candidates.map((c) => path.relative(root, shown(c.path))).sort()

  it("finds nested repositories, prunes each matched tree, and never follows a link", async () => {
    const t = sandboxTree()
    for (let i = 0; i < 5; i++) fs.mkdirSync(path.join(t.ws, ".git", "objects", `0${i}`), { recursive: true })
    t.write("ws/a/.git/HEAD", "x")
    t.write("ws/a/b/c/.git/HEAD", "x")
    t.write("outside/repo/.git/HEAD", "x")
    fs.symlinkSync(t.outside, path.join(t.ws, "linked"))
    const d = await find(t.ws, [["**/.git", "read-only"]])
    expect(paths(t.ws, d)).toEqual([".git", "a/.git", "a/b/c/.git"])
    const report = d.reports[0]!
    // ws, a, a/b, a/b/c: none of the .git trees, nothing through the link.
    expect(report.directories).toBe(4)
    expect(d.candidates.every((c) => !shown(c.path).startsWith(t.outside))).toBe(true)
  })

  it("reports names exactly: a newline, a name that is not UTF-8", async () => {
    const t = sandboxTree()
    t.write("ws/new\nline.pem", "k")
    const bad = Buffer.concat([Buffer.from(`${t.ws}/bad`), Buffer.from([0xff]), Buffer.from(".pem")])
    fs.writeFileSync(bad, "k")
    const d = await find(t.ws, [["**/*.pem"]])
    expect(d.candidates.map((c) => c.path).sort()).toEqual([`${rawOf(t.ws)}/bad\xff.pem`, `${rawOf(t.ws)}/new\nline.pem`])
  })

  it("directories named with control characters hide nothing: their repositories and secrets are protected in the sandbox", async () => {
    // A newline, a CR, the Unicode line and paragraph separators, an escape sequence, a tab, DEL,
    // a C0 control and a name that is only a newline: each may break a matcher built on regular
    // expressions or on lines, and each is in the workspace path itself too.
    const names = ["a\nb", "c\rd", "p\u2028q", "h\u2029", "e\x1b[31m", "t\tab", "\x7f", "z\x01", "\n", "end\n"]
    const t = sandboxTree()
    const ws = t.at("w\ns\u2028\x1b]0;x\x07")
    fs.mkdirSync(ws, { mode: 0o777 })
    const put = (rel: string, text: string) => {
      fs.mkdirSync(path.dirname(path.join(ws, rel)), { recursive: true })
      fs.writeFileSync(path.join(ws, rel), text)
    }
    put(".git/config", "[core]\n")
    for (const n of names) put(`${n}/.git/config`, "[core]\n")
    put("x\ny/deep\r/.git/config", "[core]\n")
    put("k\ne/id.pem", "SECRET\n")
    put("s\nt/secret", "SECRET\n")
    const s = new Confinement({
      target: { workspace: ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      policy: { protected: [["**/*.pem"], ["*/secret"]] },
      strategy
    })
    const launch = await s.prepare()
    const protectedPaths = launch.plan.restrictions.map((r) => r.path)
    const repositories = [...names.map((n) => `${n}/.git`), "x\ny/deep\r/.git"]
    expect(protectedPaths).toEqual(
      expect.arrayContaining([".git", ...repositories, "k\ne/id.pem", "s\nt/secret"].map((p) => path.join(ws, p)))
    )
    // The child lists every directory itself (find -print0) and tries to write each repository's
    // config and read each secret, so no name has to survive a shell word or a line.
    const r = await runScript(
      launch,
      `find . -name .git -print0 | xargs -0 -I{} sh -c 'echo pwned >> "{}/config" && echo wrote' ; find . \\( -name '*.pem' -o -name secret \\) -print0 | xargs -0 cat 2>/dev/null; find . -name .git -print0 | tr -cd '\\0' | wc -c; echo edit >> "$(printf 'k\\ne')/new" && echo edit-ok`
    )
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).toContain(`${repositories.length + 1}\n`) // the child met every repository
    expect(r.stdout).not.toContain("wrote")
    expect(r.stdout).not.toContain("SECRET")
    for (const p of [".git", ...repositories]) expect(fs.readFileSync(path.join(ws, p, "config"), "utf8")).toBe("[core]\n")
  })

  it("a name that is not UTF-8 is masked in the sandbox by its exact bytes", async () => {
    const t = sandboxTree()
    const bad = Buffer.concat([Buffer.from(`${t.ws}/key`), Buffer.from([0xff]), Buffer.from(".pem")])
    fs.writeFileSync(bad, "SECRET\n")
    const s = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      policy: { protected: [["*.pem"]] },
      strategy
    })
    const launch = await s.prepare()
    expect(launch.plan.restrictions.map((r) => r.path)).toContain(`${t.ws}/key\\xff.pem`)
    const r = await runScript(launch, `cat key*.pem || echo pem-denied; echo edit > other && echo edit-ok`)
    expect(r.stdout).toContain("pem-denied")
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).not.toContain("SECRET")
  })

  it("does not walk the temporary root beneath a workspace, and says so", async () => {
    const t = sandboxTree()
    t.write("ws/scratch/r/.git/HEAD", "x")
    t.write("ws/keep/.git/HEAD", "x")
    const d = await find(t.ws, [["**/.git", "read-only"]], { tempRoot: path.join(t.ws, "scratch") })
    expect(paths(t.ws, d)).toEqual([".git", "keep/.git"])
    expect(d.reports[0]!.skipped).toEqual([path.join(t.ws, "scratch")])
  })

  it("is fresh for every launch: a repository added after one launch is protected in the next", async () => {
    const t = sandboxTree()
    const s = new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy })
    const first = await s.prepare()
    await first.cleanup()
    t.write("ws/vendor/lib/.git/config", "x")
    const second = await s.prepare()
    expect(second.plan.restrictions.map((r) => r.path)).toContain(path.join(t.ws, "vendor", "lib", ".git"))
    expect(first.plan.restrictions.map((r) => r.path)).not.toContain(path.join(t.ws, "vendor", "lib", ".git"))
    await second.cleanup()
  })

  it("a walk that reaches a bound refuses the launch", async () => {
    const t = sandboxTree()
    for (let i = 0; i < 20; i++) t.write(`ws/d${i}/f`, "x")
    const e = await refusal(find(t.ws, [["**/.git", "read-only"]], { limits: { maxEntries: 10 } }))
    expect(e.reason).toBe("discovery-truncated")
    expect(e.message).toMatch(/entries bound/)
    for (let i = 0; i < 3; i++) t.write(`ws/r${i}/.git/HEAD`, "x")
    expect((await refusal(find(t.ws, [["**/.git", "read-only"]], { limits: { maxMatches: 2 } }))).reason).toBe("discovery-truncated")
    t.write("ws/a/b/c/d/e/f", "x")
    expect((await refusal(find(t.ws, [["**/.git", "read-only"]], { limits: { maxDepth: 3 } }))).reason).toBe("discovery-truncated")
  })

  it("is cancelled by its signal: before it starts, and once it is running", async () => {
    const t = sandboxTree()
    for (let i = 0; i < 200; i++) fs.mkdirSync(path.join(t.ws, `d${i}`, "x"), { recursive: true })
    const before = new AbortController()
    before.abort()
    expect((await refusal(find(t.ws, [["**/.git", "read-only"]], { signal: before.signal }))).reason).toBe("cancelled")
    // Aborted once the walk is queued: the flag the worker reads is set, the walk stops. Every
    // worker of the pool is first kept busy (an open of a FIFO waits for its writer), so the walk
    // cannot have run to its end on another core before the abort, however loaded the machine.
    const root = await PinnedRoot.open(t.ws, { strategy })
    const workers = Number(process.env["UV_THREADPOOL_SIZE"] ?? 4)
    const fifos = Array.from({ length: workers }, (_, i) => path.join(t.base, `fifo-${i}`))
    for (const f of fifos) execFileSync("mkfifo", [f])
    const busy = fifos.map((f) => fs.promises.open(f, "r"))
    const during = new AbortController()
    const walk = discover(
      root,
      { maxEntries: 1e6, maxMatches: 1e5, maxDepth: 64, patterns: [{ glob: rawOf("**/.git"), access: "read-only" }], skip: [], probes: [] },
      during.signal
    )
    const outcome = walk.then(
      () => undefined,
      (e: unknown) => e
    )
    during.abort()
    // The pool takes its jobs in order: the opens first, the walk once one of them is done. An
    // open for reading and writing does not wait for a reader, and is the writer the opens wait for.
    const writers = fifos.map((f) => fs.openSync(f, "r+"))
    for (const h of await Promise.all(busy)) await h.close()
    for (const w of writers) fs.closeSync(w)
    const e = await outcome
    expect((e as { code?: string }).code).toBe("ECANCELED")
    root.close()
  })

  it("roots an absolute rule at the canonical spelling of its literal prefix", async () => {
    const t = sandboxTree()
    t.write("outside/conf/app.key", "k")
    t.write("outside/conf/app.txt", "t")
    fs.symlinkSync(t.outside, t.at("alias"))
    const anchors = new Anchors(strategy)
    const d = await discoverProtected({
      rules: compilePolicy({ defaults: false, protected: [[`${t.at("alias")}/conf/*.key`]] }).rules,
      workspaces: [rawOf(fs.realpathSync(t.ws))],
      home: null,
      tempRoot: null,
      anchors
    })
    await anchors.close()
    expect(d.candidates.map((c) => shown(c.path))).toEqual([path.join(fs.realpathSync(t.outside), "conf", "app.key")])
  })

  it("agrees with picomatch (dot on) on the rule syntax, a matched directory's tree aside", async () => {
    const t = sandboxTree()
    const files = [
      "a.pem",
      "b.key",
      "src/x.pem",
      "src/sub/y.pem",
      "src/sub/deep/z.key",
      ".env",
      ".env.local",
      "cfg/.env.prod",
      "secret1",
      "secret22",
      "a/b",
      "a/x/b",
      "a/x/y/b",
      "b/c",
      "c/c",
      "k/id.key",
      "k/.hidden.key",
      "docs/readme.md",
      "x-1/y",
      "x-2/y",
      "[odd]/f",
      "sp ace/f.pem",
      "tests/fixtures/repo/.git/HEAD",
      "tests/.git/HEAD"
    ]
    for (const f of files) t.write(`ws/${f}`, "x")
    const tree: Array<string> = []
    const walk = (rel: string) => {
      for (const e of fs.readdirSync(path.join(t.ws, rel), { withFileTypes: true })) {
        const r = rel ? `${rel}/${e.name}` : e.name
        tree.push(r)
        if (e.isDirectory()) walk(r)
      }
    }
    walk("")
    const patterns = [
      "**/.git",
      "*.pem",
      "**/*.pem",
      "src/**",
      "src/*/*.pem",
      "**/secret?",
      "**/secret*",
      "{a,b}/c",
      "a/**/b",
      ".env*",
      "**/.env.*",
      "**/*.{pem,key}",
      "k/*.key",
      "x-[12]/y",
      "x-?/y",
      "**/sub",
      "docs",
      "*/*",
      "sp ace/*.pem",
      "**/[a-c]"
    ]
    for (const glob of patterns) {
      const isMatch = picomatch(glob, { dot: true })
      // Expected: picomatch's matches, minus those inside a matched directory (the walk prunes).
      const matched = tree.filter((p) => isMatch(p))
      const expected = matched.filter((p) => !matched.some((q) => p.startsWith(`${q}/`))).sort()
      const d = await find(t.ws, [[glob]])
      expect({ glob, found: paths(t.ws, d) }).toEqual({ glob, found: expected })
    }
  })
})
