/**
 * The `pinnedfs` command, spawned as a user runs it: help, usage errors, a real `eslint --fix`, a
 * fixer that changes, creates, deletes and breaks files, policy withholding, a failing command,
 * progress on a long run, and the built bin from dist/.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { registerScratch, scratch } from "../support/tree.ts"
import { runNode, type Ran } from "./support/node.ts"
import { eslintConfig, repo, tools } from "./support/tools.ts"
import { transpileSources } from "./support/transpile.ts"
import { disk } from "./support/workspace.ts"
import { sandboxWhy, skipUnless } from "../support/skip.ts"
import { fixerScript } from "./support/fixer.ts"

let cli = ""
let cleanup = (): void => {}
beforeAll(() => {
  const t = transpileSources("cli")
  cli = path.join(t.dir, "cli", "main.js")
  cleanup = t.cleanup
})
afterAll(() => cleanup())

const pinnedfs = (args: ReadonlyArray<string>, options: { cwd?: string; bin?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> =>
  runNode([options.bin ?? cli, ...args], { cwd: options.cwd ?? os.tmpdir(), ...(options.env ? { env: options.env } : {}) })

const sandbox = await sandboxAvailable()

const script = fixerScript

describe("pinnedfs (the bin)", () => {
  it("--help lists fix; fix --help explains the scope, the workspace, -- and the child-process limit", async () => {
    const top = await pinnedfs(["--help"])
    expect(top.code).toBe(0)
    expect(top.stdout).toMatch(/fix \[options\] \[command\.\.\.\]/)
    // `run --cleanup` takes no command, so commander lists it as optional; `run` without one exits 2.
    expect(top.stdout).toMatch(/run \[options\] \[command\] \[args\.\.\.\]/)
    const help = await pinnedfs(["fix", "--help"])
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/Usage: pinnedfs fix \[options\] --scope <glob> \[--scope <glob>\]\.\.\. -- <command> \[args\.\.\.\]/)
    for (const text of [
      "--workspace <dir>",
      "--scope <glob>",
      "--may-create <glob>",
      "--step <name>",
      "--no-restore",
      "--json",
      "appended",
      "Exit status:",
      "cannot stop or see",
      "--confine",
      "125  --confine"
    ]) {
      expect(help.stdout).toContain(text)
    }
  })

  it("run is registered beside fix: a confined command runs and its status is the bin's", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const r = await pinnedfs(["run", "--workspace", s.root, "--", "/bin/sh", "-c", "echo b > src/b.ts; exit 7"], { cwd: s.root })
    expect([r.code, r.stderr]).toEqual([7, ""])
    expect(disk(s, "src/b.ts")).toBe("b\n")
  })

  it("fix --confine: the fixer's edit lands and is reported; its writes outside, into .git, .vscode and the workspace outside its scope fail", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const s = scratch()
    s.make({ "src/a.ts": "a\n", ".git/config": "[core]\n" })
    const attempt = (what: string, file: string) =>
      `try { fs.writeFileSync(${JSON.stringify(file)}, "x"); console.log("${what}-written") } catch (e) { console.log("${what}-denied " + e.code) }`
    const fixer = script(
      [
        "for (const f of files) fs.appendFileSync(f, 'fixed\\n')",
        attempt("outside", path.join(s.outside, "escaped")),
        attempt("config", ".git/config"),
        "try { fs.mkdirSync('.vscode'); console.log('vscode-written') } catch (e) { console.log('vscode-denied ' + e.code) }",
        attempt("workspace", "notes.txt")
      ].join("\n")
    )
    const r = await pinnedfs(["fix", "--confine", "--workspace", s.root, "--scope", "src/**", "--", process.execPath, fixer])
    expect([r.code, r.stdout]).toEqual([0, expect.stringMatching(/^changed: +src\/a\.ts$/m)])
    expect(r.stderr).not.toContain("--chdir") // one --chdir, so bubblewrap has nothing to warn about
    expect(r.stderr).toContain("confined: only the files in scope and the --may-create names writable")
    for (const what of ["outside", "config", "vscode", "workspace"]) expect(r.stderr).toMatch(new RegExp(`${what}-denied (EROFS|EACCES)`))
    expect(disk(s, "src/a.ts")).toBe("a\nfixed\n")
    expect(fs.existsSync(path.join(s.outside, "escaped"))).toBe(false)
    expect(disk(s, ".git/config")).toBe("[core]\n")
    expect(fs.existsSync(s.abs(".vscode"))).toBe(false)
    expect(fs.existsSync(s.abs("notes.txt"))).toBe(false)
  })

  it("fix --confine where no sandbox can be built exits 125 saying why, and runs nothing", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), "pinnedfs-nopath-"))
    registerScratch(empty)
    const r = await pinnedfs(["fix", "--confine", "--workspace", s.root, "--scope", "src/**", "--", "/bin/sh", "-c", "touch ran"], {
      env: { ...process.env, PATH: empty }
    })
    expect(r.code).toBe(125)
    expect(r.stderr).toMatch(/pinnedfs fix: cannot confine \/bin\/sh: bubblewrap \(bwrap\) is not installed or not on PATH/)
    expect(fs.existsSync(s.abs("ran"))).toBe(false)
    expect(disk(s, "src/a.ts")).toBe("a\n")
  })

  it("--version prints the package's version", async () => {
    const { version } = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { version: string }
    const r = await pinnedfs(["--version"])
    expect([r.code, r.stdout.trim()]).toEqual([0, version])
  })

  it("usage errors exit 2 with a message: no --scope, no command, an unknown option, a bad number", async () => {
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["fix", "--", "true"], /at least one --scope/],
      [["fix", "--scope", "**"], /--scope and --may-create go with a command after --/],
      [["fix", "--bogus", "--scope", "**", "--", "true"], /unknown option '--bogus'/],
      [["fix", "--scope", "**", "--max-file-bytes", "lots", "--", "true"], /positive integer/],
      [[], /Usage: pinnedfs/]
    ]
    for (const [args, message] of cases) {
      const r = await pinnedfs(args)
      expect([args, r.code]).toEqual([args, 2])
      expect(r.stderr).toMatch(message)
    }
  })

  it("runs a real eslint --fix on the scope and reports what changed", async () => {
    const s = scratch()
    s.make({
      "eslint.config.js": eslintConfig(),
      "src/a.ts": "var a = 1\nexport { a }\n",
      "src/b.ts": "export const b = 2\n",
      "lib/l.ts": "var l = 1\n"
    })
    const r = await pinnedfs(["fix", "--workspace", s.root, "--scope", "src/**/*.ts", "--", tools.eslint, "--fix"])
    expect(r.code).toBe(0)
    expect(r.stdout).toMatch(/^changed: +src\/a\.ts$/m)
    expect(r.stdout).toMatch(/^fix: ok$/m)
    expect(r.stderr).toMatch(/acquired 2 file\(s\)/)
    expect(r.stderr).toMatch(/running .*eslint --fix on 2 file\(s\)/)
    expect(disk(s, "src/a.ts")).toBe("const a = 1\nexport { a }\n")
    expect(disk(s, "lib/l.ts")).toBe("var l = 1\n") // outside the scope: not given to the tool
  })

  it("reports changed, admitted, removed, unreadable and withheld paths, and exits 1 when a file cannot be admitted", async () => {
    const s = scratch()
    s.make({
      "src/a.ts": "a\n",
      "src/b.ts": "b\n",
      "src/c.ts": "c\n",
      "src/d.ts": "d\n",
      "src/.vscode/settings.json": "{}\n",
      "src/private/key.ts": "k\n",
      "untracked/u.txt": "u\n"
    })
    const fixer = script(
      [
        "fs.writeFileSync('src/a.ts', 'A\\n')",
        "fs.writeFileSync('src/new.ts', 'new\\n')",
        "fs.rmSync('src/b.ts')",
        "fs.writeFileSync('src/c.ts', Buffer.from([0, 1, 2]))",
        "console.log('given: ' + files.join(' '))"
      ].join("\n")
    )
    const r = await pinnedfs([
      "fix",
      "-w",
      s.root,
      "-s",
      "src/**",
      "--may-create",
      "src/*.ts",
      "--deny",
      "src/private/**",
      "--",
      process.execPath,
      fixer
    ])
    expect(r.code).toBe(1)
    expect(r.stderr).toContain("given: src/a.ts src/b.ts src/c.ts src/d.ts") // the tool's own output, passed through
    expect(r.stdout).toMatch(/^changed: +src\/a\.ts$/m)
    expect(r.stdout).toMatch(/^admitted: +src\/new\.ts$/m)
    expect(r.stdout).toMatch(/^removed: +src\/b\.ts$/m)
    expect(r.stdout).toMatch(/^withheld: +src\/\.vscode\/settings\.json \(policy\), src\/private\/key\.ts \(policy\)$/m)
    expect(r.stdout).toMatch(/^unreadable: +src\/c\.ts \(binary: contains NUL bytes\)$/m)
    expect(r.stdout).toMatch(/^fix: failed/m)
  })

  it("a command that fails makes the step fail: exit 1, with the command's exit code and output", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const fixer = script("console.error('cannot fix ' + files[0]); process.exit(3)")
    const r = await pinnedfs(["fix", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/error: .*exited with code 3:\s+cannot fix src\/a\.ts/)
    expect(r.stdout).toMatch(/^fix: failed$/m)
  })

  it("shows progress while a long command runs; --quiet keeps only the report", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const slow = script("setTimeout(() => fs.writeFileSync(files[0], 'done\\n'), 1000)")
    const r = await pinnedfs(["fix", "-w", s.root, "-s", "src/**", "--progress-interval", "100", "--", process.execPath, slow])
    expect(r.code).toBe(0)
    expect(r.stderr).toMatch(/still running \(\d+ s\)/)
    expect(r.stderr).toMatch(/re-reading the scope/)
    const quiet = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--progress-interval", "100", "--", process.execPath, slow])
    expect(quiet.stderr).toBe("")
    expect(quiet.stdout).toMatch(/^no file changed$/m)
  })

  it("runs the command in the workspace (the current directory by default)", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const where = script("fs.writeFileSync(files[0], process.cwd() + '\\n')")
    const r = await pinnedfs(["fix", "-s", "src/**", "--", process.execPath, where], { cwd: s.root })
    expect(r.code).toBe(0)
    expect(disk(s, "src/a.ts")).toBe(`${fs.realpathSync(s.root)}\n`)
  })

  it("a workspace that cannot be opened exits 2, saying why", async () => {
    const r = await pinnedfs(["fix", "-w", "/nonexistent/workspace", "-s", "**", "--", "true"])
    expect(r.code).toBe(2)
    expect(r.stderr).toMatch(/cannot open the workspace \/nonexistent\/workspace/)
  })

  it("the package's bin is dist/cli/main.js, a node script, and it runs once built", async (ctx) => {
    const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { bin: Record<string, string> }
    expect(pkg.bin).toEqual({ pinnedfs: "./dist/cli/main.js" })
    expect(fs.readFileSync(path.join(repo, "src", "cli", "main.ts"), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true)
    const built = path.join(repo, "dist", "cli", "main.js")
    const newestSource = Math.max(
      ...["cli/main.ts", "cli/fix.ts", "dev/index.ts"].map((f) => fs.statSync(path.join(repo, "src", f)).mtimeMs)
    )
    const stale = !fs.existsSync(built) || fs.statSync(built).mtimeMs < newestSource
    skipUnless(ctx, !stale, "dist/ is missing or older than src/ (npm ci and npm run build:ts build it; CI runs this)")
    expect(fs.readFileSync(built, "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true)
    const r = await pinnedfs(["fix", "--help"], { bin: built })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("--scope <glob>")
  })
})
