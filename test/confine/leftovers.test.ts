/**
 * A `pinnedfs run` killed with SIGKILL cannot clean up after itself: the empty `.git` it made and
 * its private temporary root stay. Each launch keeps a crash-safe record of what it made, in a
 * runtime directory only its user can enter; the next launch's cleanup, or `pinnedfs run
 * --cleanup`, removes what a dead launch left, identity-checked, and never what a live launch
 * relies on.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { cleanupLeftovers, Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { outputClosed, startWaiting, startWaitingCli } from "./support/launches.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, sandboxTree, type SandboxTree } from "./support/tree.ts"

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

const gitless = (): SandboxTree => {
  const t = sandboxTree()
  fs.rmSync(t.at("ws/.git"), { recursive: true })
  return t
}
const envOf = (t: SandboxTree) => ({ ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") })
const privateRoots = (t: SandboxTree) => fs.readdirSync(t.tmp).filter((n) => n.startsWith("pinnedfs-confine-"))

/** A `pinnedfs run` killed while its command runs: what it made is still on disk. */
const killedLaunch = async (t: SandboxTree) => {
  const a = await startWaitingCli(process.execPath, cli, [], "true", { cwd: t.ws, env: envOf(t) })
  a.child.kill("SIGKILL")
  await outputClosed(a.child)
  expect(fs.readdirSync(t.at("ws/.git"))).toEqual([])
  expect(privateRoots(t).length).toBe(1)
  expect(fs.readdirSync(t.at("run")).length).toBe(1)
}

describe("what a killed launch left", () => {
  it("pinnedfs run --cleanup removes the .git and the temporary root a SIGKILLed launch made", async () => {
    const t = gitless()
    await killedLaunch(t)
    const r = await exec(process.execPath, [cli, "run", "--cleanup"], { cwd: t.ws, env: envOf(t) })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`removed ${t.at("ws/.git")}`)
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    expect(privateRoots(t)).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("the next launch removes them when it is done", async () => {
    const t = gitless()
    await killedLaunch(t)
    const r = await exec(process.execPath, [cli, "run", "--", "/bin/true"], { cwd: t.ws, env: envOf(t) })
    expect(r.code).toBe(0)
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    expect(privateRoots(t)).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("by default the records are kept in $TMPDIR/pinnedfs-UID (0700, this user's), which stays, empty, like tmux's", async () => {
    const t = gitless()
    // No runtime directory named, none from systemd: the host's temporary directory holds it.
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: t.home, TMPDIR: t.tmp }
    delete env["PINNEDFS_RUNTIME_DIR"]
    delete env["XDG_RUNTIME_DIR"]
    const name = `pinnedfs-${process.getuid!()}`
    for (let i = 0; i < 2; i++) {
      const r = await exec(process.execPath, [cli, "run", "--", "/bin/true"], { cwd: t.ws, env })
      expect(r.code, r.stderr).toBe(0)
      // The launch's private temporary root is gone; the runtime directory stays for the next
      // launch (a dead one's record is found there), holding no record of a launch that ended.
      expect(fs.readdirSync(t.tmp)).toEqual([name])
      const st = fs.lstatSync(path.join(t.tmp, name))
      expect(st.isDirectory()).toBe(true)
      expect(st.mode & 0o777).toBe(0o700)
      expect(st.uid).toBe(process.getuid!())
      expect(fs.readdirSync(path.join(t.tmp, name))).toEqual([])
    }
    const r = await exec(process.execPath, [cli, "run", "--cleanup"], { cwd: t.ws, env })
    expect(r.code).toBe(0)
    expect(fs.readdirSync(t.tmp)).toEqual([name])
  })

  it("--cleanup keeps what a live launch relies on, and says so", async () => {
    const t = gitless()
    await killedLaunch(t)
    const live = await new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }
    }).prepare()
    const waiting = await startWaiting(live, "true")
    const r = await exec(process.execPath, [cli, "run", "--cleanup"], { cwd: t.ws, env: envOf(t) })
    expect(r.code).toBe(0)
    expect(r.stdout).toContain(`kept ${t.at("ws/.git")}`)
    expect(fs.statSync(t.at("ws/.git")).isDirectory()).toBe(true)
    expect(privateRoots(t)).toEqual([]) // the dead launch's own scratch is nobody else's
    await waiting.go()
    await live.cleanup()
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("a record the runtime directory holds for another user, or a runtime directory others can enter, is refused", async () => {
    const t = gitless()
    fs.mkdirSync(t.at("run"), { mode: 0o755 })
    fs.chmodSync(t.at("run"), 0o755)
    const r = await exec(process.execPath, [cli, "run", "--", "/bin/true"], { cwd: t.ws, env: envOf(t) })
    expect(r.code).toBe(125)
    expect(r.stderr).toMatch(/runtime directory .* mode 0755/)
    fs.rmSync(t.at("run"), { recursive: true })
    fs.symlinkSync(t.outside, t.at("run"))
    const linked = await exec(process.execPath, [cli, "run", "--", "/bin/true"], { cwd: t.ws, env: envOf(t) })
    expect(linked.code).toBe(125)
    expect(linked.stderr).toMatch(/runtime directory .* symbolic link/)
    expect(fs.readdirSync(t.outside)).toEqual(["keep.txt"])
  })
})

describe.each(strategies)("what a killed launch left, swept through the API (%s)", (strategy) => {
  const target = (t: SandboxTree) => ({ workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") })

  it("cleanupLeftovers removes the .git and the temporary root a SIGKILLed launch made", async () => {
    const t = gitless()
    await killedLaunch(t)
    const report = await cleanupLeftovers({ runtimeDirectory: t.at("run"), strategy })
    expect(report.items).toContainEqual(expect.objectContaining({ status: "removed", path: t.at("ws/.git") }))
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    expect(privateRoots(t)).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("the next launch's cleanup sweeps them, and reports what it swept", async () => {
    const t = gitless()
    await killedLaunch(t)
    const run = await new Confinement({ target: target(t), strategy }).run("/bin/true", [], { stdio: "ignore" })
    expect(run.code).toBe(0)
    expect(run.cleanup.swept).toContainEqual(expect.objectContaining({ status: "removed", path: t.at("ws/.git") }))
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
    expect(privateRoots(t)).toEqual([])
    expect(fs.readdirSync(t.at("run"))).toEqual([])
  })

  it("a .git the dead launch made, replaced since by a directory with content, is kept", async () => {
    const t = gitless()
    await killedLaunch(t)
    fs.rmdirSync(t.at("ws/.git"))
    t.write("ws/.git/config", "[core]\n") // the user ran git init meanwhile: not the launch's any more
    const report = await cleanupLeftovers({ runtimeDirectory: t.at("run"), strategy })
    expect(report.items.filter((i) => i.status === "removed").map((i) => i.path)).not.toContain(t.at("ws/.git"))
    expect(t.read("ws/.git/config")).toBe("[core]\n")
    expect(privateRoots(t)).toEqual([])
  })

  // The record names what the launch made by dev:ino, and ext4 gives a freed inode number to the
  // next directory made: an empty directory the user made since, with the number of the launch's
  // deleted .git, is told apart by its birth, long after the launch announced its .git. Here the
  // record's announcement is moved two minutes back, which is the same record seen by a sweep of
  // a directory born two minutes after it.
  it("an empty .git born long after the dead launch announced its own is kept (a reused inode number)", async () => {
    const t = gitless()
    await killedLaunch(t)
    const [name] = fs.readdirSync(t.at("run"))
    const file = t.at("run", name!)
    const gitHex = Buffer.from(".git").toString("hex")
    const lines = fs.readFileSync(file, "utf8").split("\n")
    const intent = lines.findIndex((l) => l.startsWith("I ") && l.split(" ")[2] === gitHex)
    expect(intent, lines.join("\n")).toBeGreaterThan(0)
    const f = lines[intent]!.split(" ")
    lines[intent] = [...f.slice(0, 3), String(BigInt(f[3]!) - 120_000_000_000n)].join(" ")
    fs.writeFileSync(file, lines.join("\n"))
    const report = await cleanupLeftovers({ runtimeDirectory: t.at("run"), strategy })
    expect(report.items).toContainEqual(expect.objectContaining({ status: "kept", path: t.at("ws/.git") }))
    expect(fs.existsSync(t.at("ws/.git"))).toBe(true)
    expect(privateRoots(t)).toEqual([])
  })
})

describe("what --cleanup prints", () => {
  it("a workspace named with an escape sequence and a newline is printed escaped, one line per item", async () => {
    const t = sandboxTree()
    const ws = t.at("w\x1b]0;pwned\x07\nremoved \u202e/x")
    fs.mkdirSync(ws, { recursive: true, mode: 0o777 })
    const a = await startWaitingCli(process.execPath, cli, [], "true", { cwd: ws, env: envOf(t) })
    a.child.kill("SIGKILL")
    await outputClosed(a.child)
    expect(fs.readdirSync(path.join(ws, ".git"))).toEqual([]) // the dead launch left its .git there
    const r = await exec(process.execPath, [cli, "run", "--cleanup"], { cwd: t.ws, env: envOf(t) })
    expect(r.code).toBe(0)
    expect(r.stdout).not.toMatch(/[\x1b\x07\u202e]/)
    const lines = r.stdout.split("\n").filter((l) => l !== "")
    expect(lines).toContain(`removed ${t.at("w\\x1b]0;pwned\\x07\\x0aremoved \\u{202e}/x/.git")}`)
    // No line was forged by the name: each one is an item of the report.
    expect(lines.filter((l) => !/^(removed|kept|refused) \//.test(l) && !/live launch/.test(l))).toEqual([])
    expect(lines.filter((l) => l.startsWith("removed ") && l.includes("pwned")).length).toBe(1)
    expect(fs.existsSync(path.join(ws, ".git"))).toBe(false)
  })
})
