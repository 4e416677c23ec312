/**
 * `pinnedfs fix` as a user and a script read it: names and tool output printed C-quoted and
 * escaped (no escape sequence reaches the terminal, no name forges a line, commas split lists
 * where they should), `--json`, one test per exit status the help lists, `--timeout` stopping the
 * whole process group within its stated grace, `--confine --may-create NAME` writing exactly that
 * name, and the rollback's default and `--no-restore`.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it, vi } from "vitest"
import { sandboxAvailable } from "../../src/confine/index.ts"
import { scratch } from "../support/tree.ts"
import { useCli } from "./support/cli.ts"
import { disk } from "./support/workspace.ts"
import { skipUnless, sandboxWhy } from "../support/skip.ts"
import { fixerScript } from "./support/fixer.ts"

const pinnedfs = useCli("cli-output")
const sandbox = await sandboxAvailable()

const script = fixerScript

/** Whether a process is gone: no /proc entry, or a zombie (this machine's init may never reap it). */
const dead = (pid: number): boolean => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    return /\) [ZX] /.test(stat)
  } catch {
    return true
  }
}

const hostile = { esc: "src/\u001b]0;pwned\u0007\u001b[2J.ts", newline: "src/x\nfix: ok.ts", comma: "src/a, b.ts", rtl: "src/\u202egnp.ts" }

describe("pinnedfs fix: what it prints", () => {
  it("names are C-quoted, tool output escaped: no escape sequence, no forged line, lists that split back", async () => {
    const s = scratch()
    s.make({ "src/plain.ts": "p\n", [hostile.esc]: "e\n", [hostile.newline]: "n\n", [hostile.comma]: "c\n", [hostile.rtl]: "r\n" })
    const fixer = script(
      "for (const f of files) fs.appendFileSync(f, 'x\\n')\nprocess.stdout.write('tool says \\x1b[31mred\\x1b[0m\\r\\n')"
    )
    const r = await pinnedfs(["fix", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect(r.code).toBe(0)
    for (const out of [r.stdout, r.stderr]) {
      expect(out).not.toMatch(/[\u001b\u0007\r\u202e]/)
    }
    const changed = /^changed: +(.*)$/m.exec(r.stdout)![1]!
    // In the re-read's order (UTF-16 code units: ESC, a, p, x, U+202E), each quoted as needed.
    expect(changed).toBe(
      ['"src/\\033]0;pwned\\a\\033[2J.ts"', '"src/a, b.ts"', "src/plain.ts", '"src/x\\nfix: ok.ts"', '"src/\\342\\200\\256gnp.ts"'].join(
        ", "
      )
    )
    // The only line that says how the step went is the real one.
    expect(r.stdout.split("\n").filter((l) => l.startsWith("fix: "))).toEqual(["fix: ok"])
    expect(r.stderr).toContain("tool says \\033[31mred\\033[0m\\r")
  })

  it("--json prints one object: changed, admitted, withheld, unreadable, warnings, errors, the fixer's status and the step's", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "src/b.ts": "b\n", "src/c.bin": "\u0000\u0001", [hostile.newline]: "n\n", "src/.vscode/x.json": "{}\n" })
    const fixer = script(
      "fs.appendFileSync('src/a.ts', 'x\\n')\nfs.appendFileSync('src/x\\nfix: ok.ts', 'x\\n')\nfs.writeFileSync('src/new.ts', 'new\\n')\nconsole.log('noise')"
    )
    const r = await pinnedfs([
      "fix",
      "--json",
      "-q",
      "-w",
      s.root,
      "-s",
      "src/**",
      "--may-create",
      "src/new.ts",
      "--",
      process.execPath,
      fixer
    ])
    expect(r.code).toBe(1) // c.bin is in scope and cannot be read as text
    expect(r.stderr).toBe("")
    const report = JSON.parse(r.stdout) as Record<string, unknown>
    expect(report).toMatchObject({
      workspace: fs.realpathSync(s.root),
      status: "failed",
      exitCode: 1,
      fixer: { status: "ok" },
      changed: ["src/a.ts", hostile.newline], // names raw: JSON escapes them itself
      admitted: ["src/new.ts"],
      withheld: [{ path: "src/.vscode/x.json", reason: "policy" }],
      unreadable: [{ path: "src/c.bin", reason: "binary: contains NUL bytes" }],
      restored: [],
      errors: []
    })
    const [step] = report["steps"] as Array<Record<string, unknown>>
    expect(step).toMatchObject({ name: "fix", status: "failed", command: [process.execPath, fixer], files: 3 })
    expect(Array.isArray(report["warnings"])).toBe(true)
    expect(r.stdout.trim().split("\n")).toHaveLength(1)
  })

  it("--json says how the fixer ended: its exit code, killed by --timeout", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const failing = await pinnedfs(["fix", "--json", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, script("process.exit(4)")])
    expect(JSON.parse(failing.stdout)).toMatchObject({ exitCode: 1, fixer: { status: "exited", exitCode: 4 } })
    const slow = script("setInterval(() => {}, 1000)")
    const killed = await pinnedfs(["fix", "--json", "-q", "--timeout", "200", "-w", s.root, "-s", "src/**", "--", process.execPath, slow])
    expect(JSON.parse(killed.stdout)).toMatchObject({ exitCode: 1, fixer: { status: "killed", why: "timeout" } })
  })
})

describe("pinnedfs fix: exit statuses, one test each, as --help lists them", () => {
  it("the help lists 0, 1, 2 and 125 with what each means", async () => {
    const help = (await pinnedfs(["fix", "--help"])).stdout
    expect(help).toMatch(/^ {2}0 {4}every step succeeded$/m)
    expect(help).toMatch(/^ {2}1 {4}a step failed: the command exited non-zero, was killed \(--timeout\)/m)
    expect(help).toMatch(/be read as text \(binary, a link, not a regular file, too large\), before or after the command,$/m)
    expect(help).toMatch(/or has a name that is not UTF-8 \(listed as skipped: no fixer can be given it\)$/m)
    expect(help).toMatch(/^ {2}2 {4}usage: a bad option or glob/m)
    expect(help).toMatch(/^ {2}125 {2}--confine, and this machine cannot confine a command$/m)
  })

  it("0: the step succeeded", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, script("")])
    expect([r.code, r.stdout.trim().split("\n").at(-1)]).toEqual([0, "fix: ok"])
  })

  it("1: a binary file and a link in scope were never given to the command (even with -q)", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "src/b.bin": "\u0000" })
    fs.symlinkSync("a.ts", s.abs("src/l.ts"))
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, script("")])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/^unreadable: +src\/b\.bin \(binary: contains NUL bytes\), src\/l\.ts \(a symbolic link/m)
    expect(r.stdout).toMatch(/^fix: failed \(2 files in scope could not be read as text\)$/m)
  })

  it("1: the command failed", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, script("process.exit(9)")])
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/exited with code 9/)
  })

  it("2: bad --scope, --may-create and --deny globs, --may-create globs with --confine, a missing workspace, an unknown --step", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const cases: Array<[ReadonlyArray<string>, RegExp]> = [
      [["fix", "-w", s.root, "-s", "/etc/**", "--", "true"], /--scope glob '\/etc\/\*\*' is absolute/],
      [["fix", "-w", s.root, "-s", "src/**", "--may-create", "!x", "--", "true"], /--may-create glob '!x' is negated/],
      [["fix", "-w", s.root, "-s", "src/**", "--deny", "../x", "--", "true"], /--deny glob '\.\.\/x' contains '\.\.'/],
      [
        ["fix", "--confine", "-w", s.root, "-s", "src/**", "--may-create", "src/*.ts", "--", "true"],
        /is a glob: with --confine, name each file/
      ],
      [["fix", "-w", path.join(s.root, "missing"), "-s", "src/**", "--", "true"], /cannot open the workspace/],
      [["fix", "-w", s.root, "--step", "nope"], /no command given after --, and the workspace has no pinnedfs.config.json/]
    ]
    for (const [args, message] of cases) {
      const r = await pinnedfs(args)
      expect([args, r.code]).toEqual([args, 2])
      expect(r.stderr).toMatch(message)
    }
    expect(disk(s, "src/a.ts")).toBe("a\n")
  })

  it("an extglob scope is a scope, not a negation", async () => {
    const s = scratch()
    s.make({ "a.ts": "a\n", "a.min.ts": "m\n", "src/b.ts": "b\n" })
    const append = script("for (const f of files) fs.appendFileSync(f, 'x\\n')")
    const r = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "!(*.min).ts", "-s", "src/!(c).ts", "--", process.execPath, append])
    expect([r.code, /^changed: +(.*)$/m.exec(r.stdout)?.[1]]).toEqual([0, "a.ts, src/b.ts"])
    expect(disk(s, "a.min.ts")).toBe("m\n")
  })
})

describe("pinnedfs fix: stopping and rolling back", () => {
  it("--timeout kills the whole process group and returns within the stated grace, though a grandchild holds the pipes", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n" })
    const pidFile = path.join(s.outside, "grandchild.pid")
    // A shell that ignores SIGTERM, with a grandchild that keeps stdout open for a minute.
    const shell = `trap '' TERM; echo half >> "$1"; sleep 60 & echo $! > '${pidFile}'; wait`
    const started = Date.now()
    const r = await pinnedfs(["fix", "--timeout", "300", "-w", s.root, "-s", "src/**", "--", "/bin/sh", "-c", shell, "sh"])
    const took = Date.now() - started
    expect(r.code).toBe(1)
    expect(r.stdout).toMatch(/was killed after 300 ms/)
    // 300 ms, 2 s of SIGTERM grace, 0.5 s for the pipes; the rest is node starting twice on a busy machine.
    expect(took).toBeLessThan(300 + 2000 + 500 + 6000)
    const pid = Number(fs.readFileSync(pidFile, "utf8"))
    await vi.waitFor(() => expect(dead(pid)).toBe(true), { timeout: 5000, interval: 20 })
    // And the half-done edit was put back.
    expect(r.stdout).toMatch(/^restored: +src\/a\.ts$/m)
    expect(disk(s, "src/a.ts")).toBe("a\n")
  })

  it("a failed step is restored by default; --no-restore keeps its changes", async () => {
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "src/b.ts": "b\n" })
    const half = script("fs.writeFileSync(files[0], 'half\\n'); process.exit(1)")
    const restored = await pinnedfs(["fix", "-q", "-w", s.root, "-s", "src/**", "--", process.execPath, half])
    expect([restored.code, disk(s, "src/a.ts")]).toEqual([1, "a\n"])
    expect(restored.stdout).toMatch(/^restored: +src\/a\.ts$/m)
    const kept = await pinnedfs(["fix", "-q", "--no-restore", "-w", s.root, "-s", "src/**", "--", process.execPath, half])
    expect([kept.code, disk(s, "src/a.ts")]).toEqual([1, "half\n"])
    expect(kept.stdout).not.toMatch(/^restored:/m)
  })

  it("--confine --may-create NEWS.md: NEWS.md and the files in scope are all it can write", async (ctx) => {
    skipUnless(ctx, sandbox.available, sandboxWhy(sandbox))
    const s = scratch()
    s.make({ "src/a.ts": "a\n", "secret.txt": "secret\n", "package.json": "{}\n" })
    const fixer = script(
      [
        "for (const f of files) fs.appendFileSync(f, 'x\\n')",
        "for (const f of ['NEWS.md', 'secret.txt', 'package.json', 'other.md'])",
        "  try { fs.appendFileSync(f, 'x\\n'); console.log('wrote ' + f) } catch (e) { console.log('denied ' + f + ' ' + e.code) }"
      ].join("\n")
    )
    const r = await pinnedfs(["fix", "--confine", "--may-create", "NEWS.md", "-w", s.root, "-s", "src/**", "--", process.execPath, fixer])
    expect(r.code).toBe(0)
    expect(r.stderr).toContain("wrote NEWS.md")
    for (const f of ["secret.txt", "package.json", "other.md"]) expect(r.stderr).toMatch(new RegExp(`denied ${f} E(ROFS|ACCES)`))
    expect(r.stdout).toMatch(/^changed: +src\/a\.ts$/m)
    expect(r.stdout).toMatch(/^admitted: +NEWS\.md$/m)
    expect([disk(s, "secret.txt"), disk(s, "package.json"), disk(s, "other.md")]).toEqual(["secret\n", "{}\n", undefined])
  })
})
