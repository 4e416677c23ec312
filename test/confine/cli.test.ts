/**
 * `pinnedfs run`, as a user types it: the command registered on a commander program (the test-only
 * entry in fixtures/cli.mjs), run from a staged copy of the package in a child process.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { stagePackage } from "./support/stage.ts"
import { skipUnless } from "../support/skip.ts"
import { exec, sandboxTree, type SandboxTree } from "./support/tree.ts"

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

const pinnedfs = (t: SandboxTree, args: ReadonlyArray<string>, cwd = t.ws) =>
  exec(process.execPath, [cli, ...args], { cwd, env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") } })

describe("pinnedfs run", () => {
  it("runs the command confined and exits with its status", async () => {
    const t = sandboxTree()
    const r = await pinnedfs(t, [
      "run",
      "--",
      "/bin/sh",
      "-c",
      `echo edit >> src.txt; echo x >> .git/config || echo git-denied; cat "$HOME/.ssh/id_ed25519" || echo key-denied; exit 3`
    ])
    expect(r.code).toBe(3)
    expect(r.stdout).toContain("git-denied")
    expect(r.stdout).toContain("key-denied")
    expect(t.read("ws/src.txt")).toBe("source\nedit\n")
    expect(t.read("ws/.git/config")).toBe("[core]\n")
  })

  it("passes the command's own options through, with or without --", async () => {
    const t = sandboxTree()
    const r = await pinnedfs(t, ["run", "/bin/ls", "-a", "--", "."])
    expect(r.code).toBe(0)
    expect(r.stdout.split("\n")).toContain(".git")
  })

  it("--verbose prints what it protects; --protect adds a rule; --workspace names the writable root", async () => {
    const t = sandboxTree()
    t.write("ws/keys/deploy.pem", "PEM\n")
    t.write("outside/x.txt", "x\n")
    const r = await pinnedfs(
      t,
      [
        "run",
        "--verbose",
        "--workspace",
        t.ws,
        "--protect",
        "**/*.pem=inaccessible",
        "--",
        "/bin/sh",
        "-c",
        "cat keys/deploy.pem || echo pem-denied"
      ],
      t.outside
    )
    expect(r.code).toBe(0)
    expect(r.stdout).toContain("pem-denied")
    expect(r.stderr).toContain(`read-only     ${path.join(t.ws, ".git")}  (**/.git)`)
    expect(r.stderr).toContain(`inaccessible  ${path.join(t.ws, "keys", "deploy.pem")}  (**/*.pem)`)
    expect(r.stderr).toContain(`inaccessible  ${path.join(t.home, ".ssh")}  (~/.ssh)`)
    expect(r.stderr).toContain(`writable      ${t.ws}`)
  })

  it("--grant opens one path for this run", async () => {
    const t = sandboxTree()
    const config = path.join(t.ws, ".git", "config")
    const r = await pinnedfs(t, [
      "run",
      "--grant",
      `${config}=write`,
      "--",
      "/bin/sh",
      "-c",
      "echo granted >> .git/config && echo ok; echo x > .git/HEAD || echo head-denied"
    ])
    expect(r.stdout).toContain("ok")
    expect(r.stdout).toContain("head-denied")
    expect(t.read("ws/.git/config")).toBe("[core]\ngranted\n")
    const dir = await pinnedfs(t, ["run", "--grant", `${path.join(t.ws, ".git")}=write`, "--", "/bin/true"])
    expect(dir.stderr).toMatch(/not applied: .*recursive scope/)
  })

  it("--full-access drops the defaults but keeps --protect rules", async () => {
    const t = sandboxTree()
    const r = await pinnedfs(t, [
      "run",
      "--full-access",
      "--protect",
      "~/.ssh=inaccessible",
      "--",
      "/bin/sh",
      "-c",
      `echo x >> .git/config && echo git-ok; cat "$HOME/.ssh/id_ed25519" || echo key-denied`
    ])
    expect(r.stdout).toContain("git-ok")
    expect(r.stdout).toContain("key-denied")
  })

  it("exits 125 with the reason when it cannot confine, and does not run the command", async () => {
    const t = sandboxTree()
    fs.symlinkSync(t.outside, path.join(t.ws, "vendor.git"))
    fs.mkdirSync(path.join(t.ws, "lib"))
    fs.symlinkSync(t.outside, path.join(t.ws, "lib", ".git"))
    const link = await pinnedfs(t, ["run", "--", "/bin/sh", "-c", `touch '${t.ws}/ran'`])
    expect(link.code).toBe(125)
    expect(link.stderr).toMatch(/cannot confine .*symbolic link/)
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
    // A bad --protect is a usage error (2), not a refusal to confine: see status.test.ts.
  })

  it("a workspace named with an escape sequence and a newline is printed escaped in the --verbose plan and the error lines", async () => {
    const t = sandboxTree()
    const name = "w\x1b]0;pwned\x07\npinnedfs run: granted \u202e"
    const ws = t.at(name)
    fs.mkdirSync(ws, { mode: 0o777 })
    const escaped = t.at("w\\x1b]0;pwned\\x07\\x0apinnedfs run: granted \\u{202e}")
    // Each stderr line is one of run's own: a plan line (indented), or one that starts "pinnedfs run:".
    const own = (l: string) => /^ {2}\S/.test(l) || /^pinnedfs run: /.test(l)
    const lines = (stderr: string) => {
      expect(stderr).not.toMatch(/[\x1b\x07\u202e]/)
      return stderr.split("\n").filter((l) => l !== "")
    }
    const ran = await pinnedfs(t, ["run", "--verbose", "--grant", `${ws}/absent/f=read`, "--", "/bin/sh", "-c", "echo ran"], ws)
    expect(ran.code, ran.stderr).toBe(0)
    expect(ran.stdout).toBe("ran\n")
    const plan = lines(ran.stderr)
    expect(plan.filter((l) => !own(l))).toEqual([])
    expect(plan).toContain(`  writable      ${escaped}`)
    expect(plan.filter((l) => l.startsWith("  read-only") && l.includes("pwned"))).toEqual([`  read-only     ${escaped}/.git  (**/.git)`])
    expect(plan).toContain(`pinnedfs run: grant ${escaped}/absent/f (read) not applied: its parent directory does not exist`)
    // Refused: the message names the path, escaped, on one line.
    fs.rmSync(path.join(ws, ".git"), { recursive: true, force: true })
    fs.symlinkSync(t.outside, path.join(ws, ".git"))
    const refused = await pinnedfs(t, ["run", "--", "/bin/sh", "-c", `touch '${t.ws}/ran'`], ws)
    expect(refused.code).toBe(125)
    const errors = lines(refused.stderr)
    expect(errors.filter((l) => !own(l))).toEqual([])
    expect(errors).toHaveLength(1)
    expect(errors[0]).toMatch(/^pinnedfs run: cannot confine \/bin\/sh: /)
    expect(errors[0]).toContain(`'${escaped}/.git'`)
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("a command killed by a signal exits 128 + its number", async () => {
    const t = sandboxTree()
    const r = await pinnedfs(t, ["run", "--", "/bin/sh", "-c", "kill -TERM $$"])
    expect(r.code).toBe(143)
  })

  it("a workspace beneath /dev/shm is confined; a TMPDIR there is refused before anything starts (the sandbox's /dev is its own)", async (ctx) => {
    let shm = ""
    try {
      shm = fs.mkdtempSync("/dev/shm/pinnedfs-devshm-")
    } catch (e) {
      skipUnless(ctx, false, `no writable /dev/shm here: ${String(e)}`)
    }
    try {
      const t = sandboxTree()
      const ws = path.join(shm, "ws")
      fs.mkdirSync(path.join(ws, ".git"), { recursive: true })
      fs.mkdirSync(path.join(shm, "tmp"), { mode: 0o777 })
      // The workspace is bound into the sandbox's /dev as it is: the child writes it, not .git.
      const inWs = await pinnedfs(t, ["run", "--", "/bin/sh", "-c", "echo ran > marker; echo x > .git/config || echo git-denied"], ws)
      expect(inWs.code, inWs.stderr).toBe(0)
      expect(inWs.stdout).toContain("git-denied")
      expect(fs.readFileSync(path.join(ws, "marker"), "utf8")).toBe("ran\n")
      // The launch's temporary root is made in TMPDIR, which the sandbox does not show there.
      const env = { ...process.env, HOME: t.home, TMPDIR: path.join(shm, "tmp"), PINNEDFS_RUNTIME_DIR: t.at("run") }
      const inTmp = await exec(process.execPath, [cli, "run", "--", "/bin/sh", "-c", "echo ran > marker2"], { cwd: t.ws, env })
      expect(inTmp.code, inTmp.stderr).toBe(125)
      expect(inTmp.stderr).toMatch(/is not the directory prepared/)
      expect(fs.existsSync(path.join(t.ws, "marker2"))).toBe(false)
    } finally {
      fs.rmSync(shm, { recursive: true, force: true })
    }
  })
})
