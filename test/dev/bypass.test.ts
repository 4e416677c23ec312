/**
 * The mandatory deny set against real fixers, end to end: names with line terminators in their
 * folders (which slipped past glob-based matching), every entry of the set (git's directory and
 * pointer targets, editor and container configuration, package-manager and shell start-up files)
 * refused to an in-process engine through the façade, never given to Prettier in process, never
 * given to an external fixer process, restored when an unconfined one writes one anyway, and
 * unwritable inside the sandbox. Under both resolve strategies.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, sandboxAvailable } from "../../src/confine/index.ts"
import { acquire, approveAll, type Capability, externalFixer, Plan, type Policy, prettierFixer, Step } from "../../src/dev/index.ts"
import type { PinnedFsError } from "../../src/index.ts"
import { strategies } from "../support/strategies.ts"
import type { Scratch } from "../support/tree.ts"
import { disk, expectDiskEqualsWorkspace, openPolicy, setup } from "./support/workspace.ts"
import { skipUnless, sandboxWhy } from "../support/skip.ts"

const sandbox = await sandboxAvailable()

/** Folders whose names broke the old glob matching: `**` did not cross these characters. */
const broken = [
  "a\nb/.vscode/tasks.json",
  "p\u2028q/.vscode/tasks.json",
  "sub\rrepo/.git/hooks/pre-commit",
  "h\u2029/.bashrc",
  // Other control characters a folder name can hold: ESC (a terminal sequence), tab, CR, DEL.
  "e\u001b[2Jx/.git/config",
  "t\tx/.git/config",
  "c\rr/.git/config",
  "d\u007fx/.envrc",
  "\u001b]0;t\u0007/.vscode/settings.json"
]

const shells = [".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases", ".profile", ".zshrc", ".zprofile"]
const moreShells = [".zshenv", ".zlogin", ".zlogout", ".cshrc", ".tcshrc", ".login", ".logout", ".kshrc", ".mkshrc"]
const xSessions = [".xprofile", ".xinitrc", ".xsession", ".xsessionrc"]

/** One existing file per entry of the set, and the files git pointers lead to. */
const denied: Record<string, string> = {
  ".git/config": "[core]\n\thooksPath = tools/hooks\n[include]\n\tpath = ../shared.gitconfig\n",
  ".git/hooks/pre-commit.sample": "#!/bin/sh\n",
  ".hg/hgrc": "[hooks]\n",
  ".husky/pre-commit": "npm test\n",
  ".vscode/tasks.json": '{"version":"2.0.0"}\n',
  ".idea/workspace.xml": "<project/>\n",
  ".devcontainer/devcontainer.json": '{"name":"x"}\n',
  ".config/git/config": "[user]\n",
  ".config/fish/conf.d/x.fish": "set x 1\n",
  ".gitconfig": "[alias]\n",
  ".gitmodules": "[submodule]\n",
  "deep/.envrc": "export A=1\n",
  ".npmrc": "fund=false\n",
  ".yarnrc": "x\n",
  ".yarnrc.yml": "x: 1\n",
  ".pnpmfile.cjs": "module.exports = {}\n",
  "config.fish": "set y 1\n",
  ...Object.fromEntries([...shells, ...moreShells, ...xSessions].map((f) => [`home/${f}`, "echo hi\n"])),
  // A worktree-style `.git` file pointing git at gitdata/, whose config names a hooks path.
  "sub/.git": "gitdir: ../gitdata\n",
  "gitdata/config": "[core]\n\thooksPath = ../sub-hooks\n",
  "gitdata/HEAD": "ref: refs/heads/main\n",
  "sub-hooks/pre-commit": "#!/bin/sh\n",
  "tools/hooks/pre-push": "#!/bin/sh\n",
  "shared.gitconfig": "[alias]\n",
  "linked-git/config": "[core]\n",
  // Existing entries below folders whose names hold control characters.
  "e\u001b[2Jx/.git/config": "[core]\n",
  "t\tx/.git/config": "[core]\n",
  "c\rr/.git/config": "[core]\n",
  "n\nl/.vscode/tasks.json": "{}\n",
  "d\u007fx/.envrc": "export B=1\n"
}
/** What a fixer might create beside them: each a new name the set covers. */
const creations = [".git/hooks/post-checkout", ".vscode/settings.json", ".husky/pre-push", "gitdata/hooks/x", "sub-hooks/post-merge"]

const allowed: Record<string, string> = { "src/a.ts": "a\n", "src/x.json": '{"a":1}\n', "src/.gitignore": "dist\n" }

/** A fixer script outside any workspace: rewrites every file it is given, then tries `more`. */
const fixerScript = (dir: string, more: ReadonlyArray<string>): string => {
  const file = path.join(dir, "rewrite-all.cjs")
  fs.writeFileSync(
    file,
    [
      'const fs = require("fs")',
      "const given = process.argv.slice(2)",
      "console.log('given ' + JSON.stringify(given))",
      "for (const f of given) fs.appendFileSync(f, '// fixed\\n')",
      `for (const f of ${JSON.stringify(more)}) {`,
      "  try { fs.mkdirSync(require('path').dirname(f), { recursive: true }); fs.appendFileSync(f, 'evil\\n'); console.log('written ' + JSON.stringify(f)) }",
      "  catch (e) { console.log('denied ' + JSON.stringify(f) + ' ' + e.code) }",
      "}",
      ""
    ].join("\n")
  )
  return file
}

const lax: Policy.Policy = { canRead: () => true, canWrite: () => true }

describe.each(strategies)("the mandatory deny set, end to end (%s)", (strategy) => {
  const start = async (files: Record<string, string>) => {
    const { s, root } = await setup(strategy, files)
    if (files["linked-git/config"] !== undefined) {
      fs.mkdirSync(s.abs("lnk"))
      fs.symlinkSync("../linked-git", s.abs("lnk/.git"))
    }
    const ws = await acquire(root, { scope: ["**"] })
    const output: Array<string> = []
    const run = (steps: ReadonlyArray<Step.Step>, policy: Policy.Policy = openPolicy) =>
      Plan.run(steps, {
        root,
        workspace: ws,
        policy,
        gate: approveAll,
        onProgress: (e) => void (e.type === "output" && output.push(e.text))
      })
    return { s, root, ws, run, output }
  }
  const unchanged = (s: Scratch, files: Record<string, string>) => {
    for (const [p, text] of Object.entries(files)) expect([p, disk(s, p)]).toEqual([p, text])
  }
  /** An in-process engine that writes every path it is told of and records what happened. */
  const writer = (paths: ReadonlyArray<string>, attempts: Array<[string, string]>): Capability => ({
    name: "writer",
    scope: ["**"],
    mayCreate: ["**"],
    run: async (access) => {
      for (const p of paths) {
        await access.write(p, "x\n").then(
          () => attempts.push([p, "written"]),
          (e: PinnedFsError) => attempts.push([p, e.description])
        )
      }
    }
  })

  describe("names with line terminators in their folders", () => {
    it("the façade refuses to create them, under fromRules('**') and under a policy that allows everything", async () => {
      for (const policy of [openPolicy, lax]) {
        const { s, run } = await start({ "src/a.ts": "a\n" })
        const attempts: Array<[string, string]> = []
        const result = await run([Step.fix("f", writer(broken, attempts))], policy)
        expect(result.steps[0]!.status).toBe("failed")
        expect(attempts.map(([p]) => p)).toEqual(broken)
        for (const [p, what] of attempts) expect([p, what]).toEqual([p, expect.stringMatching(/mandatory deny set, never written/)])
        for (const p of broken) expect(fs.existsSync(s.abs(p.split("/")[0]!))).toBe(false)
      }
    })

    it("the write step refuses them with nothing written, under both policies", async () => {
      for (const policy of [openPolicy, lax]) {
        const { s, run } = await start({ "src/a.ts": "a\n" })
        const result = await run([Step.edit("plant", (e) => broken.forEach((p) => e.write(p, "x\n"))), Step.write()], policy)
        expect(result.steps[1]!.status).toBe("failed")
        expect(result.steps[1]!.diagnostics.map((d) => [d.path, d.message.includes("mandatory deny set")]).sort()).toEqual(
          [...broken].sort().map((p) => [p, true])
        )
        for (const p of broken) expect(fs.existsSync(s.abs(p.split("/")[0]!))).toBe(false)
      }
    })

    it("src/x\\ny.ts is in scope: acquired, given to a real fixer process, its change re-read", async () => {
      const { s, ws, run, output } = await start({ "src/x\ny.ts": "x\n", "src/p\u2028q.ts": "p\n", "src/a.ts": "a\n" })
      expect(ws.paths()).toEqual(["src/a.ts", "src/p\u2028q.ts", "src/x\ny.ts"])
      const script = fixerScript(s.outside, [])
      const result = await run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["src/**"] }))])
      expect(result.steps[0]!.status).toBe("ok")
      expect(output.join("")).toContain(`given ${JSON.stringify(["src/a.ts", "src/p\u2028q.ts", "src/x\ny.ts"])}`)
      expect(result.steps[0]!.capabilities[0]!.reread!.changed).toEqual(["src/a.ts", "src/p\u2028q.ts", "src/x\ny.ts"])
      expect(ws.get("src/x\ny.ts")).toBe("x\n// fixed\n")
      expectDiskEqualsWorkspace(s, ws)
    })
  })

  describe("every entry, and every directory git is pointed at", () => {
    const existing = Object.keys(denied)

    it("an in-process engine's writes and creations are refused through the façade; nothing changes", async () => {
      const { s, run } = await start({ ...denied, ...allowed })
      const attempts: Array<[string, string]> = []
      const result = await run([Step.fix("f", writer([...existing, ...creations, "src/a.ts"], attempts))])
      expect(result.steps[0]!.status).toBe("failed")
      for (const [p, what] of attempts.slice(0, -1)) {
        expect([p, what]).toEqual([p, expect.stringMatching(/mandatory deny set, never written: (a directory git is pointed at|'.+': )/)])
      }
      expect(attempts.at(-1)).toEqual(["src/a.ts", "written"])
      unchanged(s, denied)
      for (const p of creations) expect([p, fs.existsSync(s.abs(p))]).toEqual([p, false])
      // The one write it was allowed was rolled back with the failed step.
      expect(disk(s, "src/a.ts")).toBe("a\n")
    })

    it("Prettier in process is never given them, while it formats what it may", async () => {
      const { s, run } = await start({ ...denied, ...allowed, ".vscode/settings.json": '{"a":1}\n', ".devcontainer/x.json": '{"b":2}\n' })
      const result = await run([Step.fix("format", prettierFixer({ scope: ["**/*.json"] }))])
      const report = result.steps[0]!.capabilities[0]!
      expect(report.allowlist).toEqual(["src/x.json"])
      expect(report.withheld.map((w) => [w.path, w.reason])).toEqual([
        [".devcontainer/devcontainer.json", "policy"],
        [".devcontainer/x.json", "policy"],
        [".vscode/settings.json", "policy"],
        [".vscode/tasks.json", "policy"],
        ["n\nl/.vscode/tasks.json", "policy"]
      ])
      expect(disk(s, "src/x.json")).toBe('{ "a": 1 }\n')
      expect(disk(s, ".vscode/settings.json")).toBe('{"a":1}\n')
      expect(disk(s, ".devcontainer/x.json")).toBe('{"b":2}\n')
    })

    it("an external fixer process is given none of them", async () => {
      const { s, ws, run, output } = await start({ ...denied, ...allowed })
      const script = fixerScript(s.outside, [])
      const result = await run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["**"] }))])
      expect(result.steps[0]!.status).toBe("ok")
      const given = JSON.parse(/given (.*)/.exec(output.join(""))![1]!) as Array<string>
      expect(given).toEqual(["src/.gitignore", "src/a.ts", "src/x.json"])
      unchanged(s, denied)
      expectDiskEqualsWorkspace(s, ws)
    })

    it("an unconfined fixer that writes them anyway fails its step, and those in its envelope are restored", async () => {
      const { s, run } = await start({ ...denied, ...allowed })
      const script = fixerScript(s.outside, existing)
      const result = await run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["**"] }))])
      const step = result.steps[0]!
      expect(step.status).toBe("failed")
      const forbidden = step.diagnostics.filter((d) => d.code === "forbidden-change").map((d) => d.path)
      // The link lnk/.git is not a file the re-read can take in; everything else is caught.
      expect(forbidden.sort()).toEqual(existing.filter((p) => !p.startsWith("lnk/")).sort())
      expect(step.restore!.kept).toEqual([])
      unchanged(s, denied)
      unchanged(s, allowed) // the fixer's allowed edits went back with the failed step
    })

    it("a confined fixer process cannot write or create any of them", async (ctx) => {
      skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
      // No `.git` link here: confinement refuses to launch beside one at all (it protects what a
      // protected path names, and a link names something it cannot vouch for).
      const { "linked-git/config": _, ...files } = denied
      const { s, run, output } = await start({ ...files, ...allowed })
      const base = path.dirname(s.root)
      for (const d of ["home", "tmp"]) fs.mkdirSync(path.join(base, d))
      const confine = new Confinement({
        target: { workspace: s.root, home: path.join(base, "home"), tempRoot: path.join(base, "tmp") },
        strategy
      })
      const targets = [...Object.keys(files), ...creations]
      const script = fixerScript(s.outside, targets)
      const result = await run([Step.fix("fix", externalFixer({ command: process.execPath, args: [script], scope: ["**"], confine }))])
      expect(result.steps[0]!.diagnostics.filter((d) => d.severity === "ERROR")).toEqual([])
      const said = output.join("")
      for (const p of targets)
        expect([p, said]).toEqual([p, expect.stringMatching(new RegExp(`denied ${escapeRe(JSON.stringify(p))} E(ROFS|ACCES|PERM|NOENT)`))])
      unchanged(s, files)
      for (const p of creations) expect([p, fs.existsSync(s.abs(p))]).toEqual([p, false])
      expect(disk(s, "src/a.ts")).toBe("a\n// fixed\n")
    })
  })
})

const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")
