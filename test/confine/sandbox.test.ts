/**
 * Confined children, for real: each case prepares a launch with bubblewrap on this machine, runs a
 * shell in it, and checks what the child could and could not do, on the host afterwards as well as
 * in the child's own output. Every refusal is paired with an allowed action in the same child, so a
 * child that can do nothing at all fails the test.
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { Confinement, prepareLaunch, type ConfinementOptions } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { exec, expectOutput, refusal, runScript, sandboxTree, type SandboxTree } from "./support/tree.ts"
import { bwrapOnPath } from "../support/nobody.ts"
import { skipUnless } from "../support/skip.ts"

const asRoot = process.getuid?.() === 0

describe.each(strategies)("confined children (%s)", (strategy) => {
  const session = (t: SandboxTree, extra: Partial<ConfinementOptions> = {}) =>
    new Confinement({ target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy, ...extra })
  const env = (t: SandboxTree) => `HOME='${t.home}'; OUT='${t.outside}'; WS='${t.ws}';`

  it("a child that writes .git/config fails (read-only), while its edit of the workspace lands", async () => {
    const t = sandboxTree()
    const launch = await session(t).prepare()
    expect(launch.plan.restrictions).toContainEqual(expect.objectContaining({ path: path.join(t.ws, ".git"), access: "read-only" }))
    expect(launch.plan.created).toEqual([]) // existing targets start no creation program
    const r = await runScript(
      launch,
      `${env(t)} echo edited >> src.txt && echo edit-ok; echo broken >> .git/config || echo git-denied; grep -q core .git/config && echo git-readable`
    )
    expect(r.started).toBe(true)
    expectOutput(r.stdout, ["edit-ok", "git-denied", "git-readable"])
    expect(r.stderr).toMatch(/Read-only file system/)
    expect(t.read("ws/src.txt")).toBe("source\nedited\n")
    expect(t.read("ws/.git/config")).toBe("[core]\n")
  })

  it("a hard link to a protected file cannot be made from the workspace (the mount boundary)", async () => {
    const t = sandboxTree()
    const r = await runScript(
      await session(t).prepare(),
      `ln .git/config alias 2>/dev/null || echo link-denied; ln src.txt src-link && echo workspace-link-ok`
    )
    expectOutput(r.stdout, ["link-denied", "workspace-link-ok"])
    expect(fs.existsSync(path.join(t.ws, "alias"))).toBe(false)
    expect(fs.statSync(path.join(t.ws, ".git", "config")).nlink).toBe(1)
  })

  it("reading $HOME/.ssh/id_ed25519 of a (fake) home fails, while the rest of home stays readable", async () => {
    const t = sandboxTree()
    t.write("home/notes.txt", "public\n")
    const launch = await session(t).prepare()
    const r = await runScript(
      launch,
      `${env(t)} cat "$HOME/.ssh/id_ed25519" || echo key-denied; ls -A "$HOME/.ssh" 2>&1; cat "$HOME/notes.txt"`
    )
    expect(r.stdout).toContain("key-denied")
    expect(r.stdout).toContain("public")
    expect(r.stdout + r.stderr).not.toContain("PRIVATE KEY")
    expect(t.read("home/.ssh/id_ed25519")).toBe("PRIVATE KEY\n")
  })

  it("creating a missing protected .git fails; the empty directory made for it is removed afterwards", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const launch = await session(t).prepare()
    expect(launch.plan.created).toEqual([expect.objectContaining({ path: path.join(t.ws, ".git"), purpose: "protected" })])
    expect(launch.plan.restrictions).toContainEqual(expect.objectContaining({ path: path.join(t.ws, ".git"), origin: "created" }))
    const r = await runScript(
      launch,
      `${env(t)} mkdir -p .git/hooks || echo mkdir-denied; echo '#!/bin/sh' > .git/hooks/pre-commit || echo hook-denied; echo ref > .git/HEAD || echo head-denied; echo new > made.txt && echo edit-ok`
    )
    expectOutput(r.stdout, ["hook-denied", "head-denied", "edit-ok"])
    expect(fs.existsSync(path.join(t.ws, ".git"))).toBe(false) // made for the launch, removed after
    expect(t.read("ws/made.txt")).toBe("new\n")
  })

  it("a directory made for the launch that is no longer empty at cleanup is kept, quietly", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const launch = await session(t).prepare()
    await launch.run("/bin/true", [], { stdio: "ignore" })
    fs.writeFileSync(path.join(t.ws, ".git", "HEAD"), "ref: main\n") // written on the host meanwhile
    const report = await launch.cleanup()
    expect(report).toEqual(expect.objectContaining({ removed: [], kept: [path.join(t.ws, ".git")], refused: [] }))
    expect(t.read("ws/.git/HEAD")).toBe("ref: main\n")
  })

  it("writing outside the writable roots fails; the temporary root is writable and is TMPDIR", async () => {
    const t = sandboxTree()
    const launch = await session(t).prepare()
    const r = await runScript(
      launch,
      `${env(t)} echo x > "$OUT/new.txt" || echo new-denied; echo x >> "$OUT/keep.txt" || echo append-denied; echo x > '${t.base}/sibling' || echo base-denied; echo t > "$TMPDIR/t" && echo tmp-ok; echo "tmpdir=$TMPDIR"`
    )
    expectOutput(r.stdout, ["new-denied", "append-denied", "base-denied", "tmp-ok", `tmpdir=${t.tmp}`])
    expect(fs.readdirSync(t.outside)).toEqual(["keep.txt"])
    expect(t.read("outside/keep.txt")).toBe("outside\n")
    expect(fs.existsSync(t.at("sibling"))).toBe(false)
    expect(t.read("tmp/t")).toBe("t\n")
  })

  it("a child running as root cannot remount a protected path writable", async (ctx) => {
    skipUnless(ctx, asRoot, "only a child running as root could try to remount")
    const t = sandboxTree()
    const launch = await session(t).prepare()
    const r = await runScript(
      launch,
      `${env(t)} mount -o remount,rw,bind "$WS/.git" && echo remounted; mount -o remount,rw / && echo root-remounted; echo broken >> "$WS/.git/config" || echo git-denied; echo edit >> src.txt && echo edit-ok`
    )
    expectOutput(r.stdout, ["git-denied", "edit-ok"], ["remounted"])
    expect(t.read("ws/.git/config")).toBe("[core]\n")
  })

  it("the child sees its own /proc (no way back through /proc/PID/root) and none of the held descriptors", async () => {
    const t = sandboxTree()
    const launch = await session(t).prepare()
    const held = launch.plan.layers.filter((l) => l.op === "bind").length
    expect(held).toBeGreaterThan(0)
    const listing = "echo fds: $(ls /proc/self/fd | sort -n | tr '\\n' ' '); ls -l /proc/self/fd"
    const r = await runScript(launch, `test -e /proc/${process.pid} && echo parent-visible; ${listing}; echo done`)
    expect(r.stdout).not.toContain("parent-visible")
    expect(r.stdout).toContain("done")
    expect(r.stdout).not.toContain(t.base) // no descriptor of the workspace, home or anything held
    // stdin, stdout, stderr and ls's own listing: nothing added, and nothing this process had open
    // without close-on-exec either (a child started without a sandbox would have those).
    expect(r.stdout.split("\n").find((l) => l.startsWith("fds:"))).toBe("fds: 0 1 2 3")
  })

  it("a grant opens exactly one path, and revoking it closes it at the next launch", async () => {
    const t = sandboxTree()
    t.write("ws/.git/HEAD", "ref: main\n")
    const s = session(t)
    const grant = await s.grants.add({ path: path.join(t.ws, ".git", "config"), access: "write" })
    const first = await s.prepare()
    expect(first.plan.grants.applied.map((g) => g.id)).toEqual([grant.id])
    const r1 = await runScript(first, `echo granted >> .git/config && echo config-ok; echo x >> .git/HEAD || echo head-denied`)
    expect(r1.stdout).toContain("config-ok")
    expect(r1.stdout).toContain("head-denied")
    expect(t.read("ws/.git/config")).toBe("[core]\ngranted\n")
    expect(t.read("ws/.git/HEAD")).toBe("ref: main\n")
    expect(await s.grants.revoke(grant.id)).toBe(true)
    const second = await s.prepare()
    expect(second.plan.grants.applied).toEqual([])
    const r2 = await runScript(second, `echo again >> .git/config && echo config-ok; echo still-running`)
    expect(r2.stdout).not.toContain("config-ok")
    expect(r2.stdout).toContain("still-running")
    expect(t.read("ws/.git/config")).toBe("[core]\ngranted\n")
  })

  it("a read grant inside an inaccessible directory reveals that one file only", async () => {
    const t = sandboxTree()
    t.write("home/.ssh/known_hosts", "host key\n")
    const s = session(t)
    await s.grants.add({ path: path.join(t.home, ".ssh", "known_hosts"), access: "read" })
    const r = await runScript(
      await s.prepare(),
      `${env(t)} cat "$HOME/.ssh/known_hosts"; cat "$HOME/.ssh/id_ed25519" || echo key-denied; echo x >> "$HOME/.ssh/known_hosts" || echo write-denied`
    )
    expectOutput(r.stdout, ["host key", "key-denied", "write-denied"], ["PRIVATE KEY"])
  })

  it("an exact grant on a protected directory is reported unapplied, never widened to its tree", async () => {
    const t = sandboxTree()
    const s = session(t)
    await s.grants.add({ path: path.join(t.ws, ".git"), access: "write" })
    const launch = await s.prepare()
    expect(launch.plan.grants.applied).toEqual([])
    expect(launch.plan.grants.unapplied[0]!.why).toMatch(/recursive scope/)
    const r = await runScript(launch, `echo x >> .git/config || echo git-denied`)
    expect(r.stdout).toContain("git-denied")
  })

  it("an approved recursive grant opens the tree, but not a separately protected path inside it", async () => {
    const t = sandboxTree()
    t.write("ws/.git/hooks/pre-commit", "#!/bin/sh\n")
    const s = session(t, { policy: { protected: [{ glob: ".git/hooks", access: "inaccessible" }] } })
    await s.grants.add({ path: path.join(t.ws, ".git"), access: "write", scope: "recursive" })
    const r = await runScript(
      await s.prepare(),
      `echo granted >> .git/config && echo config-ok; cat .git/hooks/pre-commit || echo hooks-hidden; echo x > .git/hooks/post-commit || echo hooks-denied`
    )
    expectOutput(r.stdout, ["config-ok", "hooks-hidden", "hooks-denied"])
    expect(t.read("ws/.git/hooks/pre-commit")).toBe("#!/bin/sh\n")
    expect(fs.existsSync(t.at("ws/.git/hooks/post-commit"))).toBe(false)
  })

  it("a grant on a broad ancestor does not reopen a protected descendant", async () => {
    const t = sandboxTree()
    const s = session(t)
    await s.grants.add({ path: t.home, access: "write", scope: "recursive" })
    const r = await runScript(
      await s.prepare(),
      `${env(t)} echo note > "$HOME/note" && echo home-ok; cat "$HOME/.ssh/id_ed25519" || echo key-denied; echo x > "$HOME/.ssh/authorized_keys" || echo ssh-denied`
    )
    expectOutput(r.stdout, ["home-ok", "key-denied", "ssh-denied"])
    expect(fs.readdirSync(t.at("home/.ssh"))).toEqual(["id_ed25519"])
  })

  it("a once grant is consumed by the launch that applies it", async () => {
    const t = sandboxTree()
    const s = session(t)
    await s.grants.add({ path: path.join(t.ws, ".git", "config"), access: "write", lifetime: "once" })
    const r1 = await runScript(await s.prepare(), `echo one >> .git/config && echo ok`)
    expect(r1.stdout).toContain("ok")
    expect(s.grants.list()).toEqual([])
    const r2 = await runScript(await s.prepare(), `echo two >> .git/config && echo ok; echo ran`)
    expect(r2.stdout).not.toContain("ok")
    expect(t.read("ws/.git/config")).toBe("[core]\none\n")
  })

  it("full access drops the defaults and keeps the hard rules", async () => {
    const t = sandboxTree()
    const s = session(t, { mode: "full-access", policy: { protected: [{ glob: "~/.ssh", hard: true }] } })
    const launch = await s.prepare()
    expect(launch.plan.restrictions.map((r) => r.rule)).toEqual(["~/.ssh"])
    const r = await runScript(
      launch,
      `${env(t)} echo x >> .git/config && echo git-ok; echo x > "$OUT/new.txt" && echo out-ok; cat "$HOME/.ssh/id_ed25519" || echo key-denied`
    )
    expectOutput(r.stdout, ["git-ok", "out-ok", "key-denied"], ["PRIVATE KEY"])
  })

  it("a protected path that is a symbolic link refuses the launch, and nothing runs", async () => {
    const t = sandboxTree()
    fs.mkdirSync(path.join(t.ws, "sub"))
    fs.symlinkSync(path.join(t.home, ".ssh"), path.join(t.ws, "sub", ".git"))
    const e = await refusal(session(t).prepare())
    expect(e.reason).toBe("link")
    expect(e.message).toContain(path.join(t.ws, "sub", ".git"))
  })

  it("a launch whose policy or grants changed after preparation is refused", async () => {
    const t = sandboxTree()
    const s = session(t)
    const launch = await s.prepare()
    s.setPolicy({ protected: [["*.txt", "read-only"]] })
    expect((await refusal(launch.spawn("/bin/sh", ["-c", `touch '${t.ws}/ran'`]))).reason).toBe("changed")
    await launch.cleanup()
    const again = await s.prepare()
    await s.grants.add({ path: path.join(t.ws, "src.txt"), access: "read" })
    expect((await refusal(again.spawn("/bin/sh", ["-c", `touch '${t.ws}/ran'`]))).reason).toBe("changed")
    await again.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("a workspace replaced after preparation is refused at launch", async () => {
    const t = sandboxTree()
    const launch = await session(t).prepare()
    fs.renameSync(t.ws, t.at("ws-old"))
    fs.mkdirSync(t.ws)
    expect((await refusal(launch.spawn("/bin/sh", ["-c", "touch ran"]))).reason).toBe("changed")
    await launch.cleanup()
    expect(fs.readdirSync(t.ws)).toEqual([])
  })

  it("a discovery root with nothing to mount (a home without keys) replaced after preparation is refused at launch", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.home, ".ssh"), { recursive: true })
    const launch = await session(t).prepare()
    expect(launch.plan.discovery.map((d) => d.anchor)).toContain(t.home)
    fs.renameSync(t.home, t.at("home-old"))
    fs.mkdirSync(t.home)
    expect((await refusal(launch.spawn("/bin/sh", ["-c", "touch ran"]))).reason).toBe("changed")
    await launch.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("Confinement.spawn is child_process.spawn, confined: the launch cleans itself up when the command exits", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const child = await session(t).spawn("/bin/sh", ["-c", "echo x > .git/HEAD || echo head-denied; echo edit >> src.txt"], {
      stdio: ["ignore", "pipe", "ignore"]
    })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
    const code = await new Promise((resolve) => child.once("close", resolve))
    expect(code).toBe(0)
    expect(out).toContain("head-denied")
    expect(child.confinement.plan.created.map((c) => c.path)).toEqual([path.join(t.ws, ".git")])
    const report = await child.confinement.cleanup()
    expect(report.removed).toEqual([path.join(t.ws, ".git")])
    expect(fs.existsSync(path.join(t.ws, ".git"))).toBe(false)
    expect(t.read("ws/src.txt")).toBe("source\nedit\n")
  })

  it("a Node fixer rewrites the file in its scope; its write outside is stopped by the sandbox", async () => {
    const t = sandboxTree()
    const fixer = `
      const fs = require("node:fs")
      fs.writeFileSync("src.txt", fs.readFileSync("src.txt", "utf8").toUpperCase())
      try { fs.writeFileSync(${JSON.stringify(path.join(t.outside, "keep.txt"))}, "fixed") } catch (e) { console.log("outside:", e.code) }
      try { fs.writeFileSync(".git/config", "fixed") } catch (e) { console.log("git:", e.code) }`
    const child = await session(t).spawn(process.execPath, ["-e", fixer], { stdio: ["ignore", "pipe", "inherit"] })
    let out = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
    expect(await new Promise((resolve) => child.once("close", resolve))).toBe(0)
    expectOutput(out, ["outside: EROFS", "git: EROFS"])
    expect(t.read("ws/src.txt")).toBe("SOURCE\n")
    expect(t.read("outside/keep.txt")).toBe("outside\n")
    await child.confinement.cleanup()
  })

  it("a launch torn down by its owner never starts, and starts at most one command", async () => {
    const t = sandboxTree()
    const s = session(t)
    const torn = await s.prepare()
    await torn.cleanup()
    expect((await refusal(torn.spawn("/bin/sh", ["-c", "touch ran"]))).reason).toBe("launched")
    const once = await s.prepare()
    await once.run("/bin/true", [], { stdio: "ignore" })
    expect((await refusal(once.spawn("/bin/sh", ["-c", "touch ran"]))).reason).toBe("launched")
    await once.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("a cancelled preparation never launches and leaves nothing behind", async () => {
    const t = sandboxTree()
    fs.rmSync(path.join(t.ws, ".git"), { recursive: true })
    const s = session(t)
    const before = new AbortController()
    before.abort()
    expect((await refusal(s.prepare({ signal: before.signal }))).reason).toBe("cancelled")
    const during = new AbortController()
    const launch = prepareLaunch(() => s.inputs(), { strategy, signal: during.signal, hooks: { afterCreation: () => during.abort() } })
    expect((await refusal(launch)).reason).toBe("cancelled")
    expect(fs.existsSync(path.join(t.ws, ".git"))).toBe(false) // made, then undone
    const late = new AbortController()
    const prepared = await prepareLaunch(() => s.inputs(), { strategy, signal: late.signal })
    late.abort()
    expect((await refusal(prepared.spawn("/bin/sh", ["-c", "touch ran"]))).reason).toBe("cancelled")
    await prepared.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("a sandbox that cannot set itself up is refused, never retried unconfined", async () => {
    const t = sandboxTree()
    expect((await refusal(session(t, { bwrap: path.join(t.base, "no-such-bwrap") }).prepare())).reason).toBe("sandbox-unavailable")
    // A bubblewrap that fails during setup exits 1, as a command might: the status pipe tells them
    // apart. Its probe fails the same way (a machine that builds no sandbox): one try, no more.
    const broken = path.join(t.base, "broken-bwrap")
    const count = path.join(t.base, "launches")
    fs.writeFileSync(broken, `#!/bin/sh\n[ "$1" = --args ] && echo x >> '${count}'\nexec '${bwrapOnPath()}' --no-such-option "$@"\n`, {
      mode: 0o755
    })
    const launch = await session(t, { bwrap: broken }).prepare()
    const e = await refusal(launch.run("/bin/sh", ["-c", `touch '${t.ws}/ran'`], { stdio: "ignore" }))
    expect(e.reason).toBe("sandbox-unavailable")
    expect(e.message).toMatch(/bubblewrap cannot build a sandbox for this user here/)
    expect(fs.readFileSync(count, "utf8")).toBe("x\n")
    await launch.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("a sandbox that exits during setup where sandboxes work is prepared afresh, a bounded number of times", async () => {
    const t = sandboxTree()
    // Launches (bubblewrap given --args) fail before any mount while `fail` says so; the probe of
    // the machine (no --args) builds its sandbox: one sandbox failed, not the machine.
    const count = path.join(t.base, "launches")
    const fail = path.join(t.base, "fail")
    const flaky = path.join(t.base, "flaky-bwrap")
    fs.writeFileSync(
      flaky,
      `#!/bin/sh\nif [ "$1" = --args ]; then echo x >> '${count}'; n=$(wc -l < '${count}'); [ "$n" -le "$(cat '${fail}')" ] && exit 1; fi\nexec '${bwrapOnPath()}' "$@"\n`,
      { mode: 0o755 }
    )
    // The first sandbox fails: the second, prepared afresh, runs the command once.
    fs.writeFileSync(fail, "1")
    const once = await session(t, { bwrap: flaky }).prepare()
    const r = await runScript(once, "echo ran >> ran.txt; echo ok")
    expect(r.stdout).toBe("ok\n")
    expect(r.code).toBe(0)
    expect(t.read("ws/ran.txt")).toBe("ran\n")
    expect(fs.readFileSync(count, "utf8")).toBe("x\nx\n")
    // Every sandbox fails: refused after three, saying what happened and that it was tried again.
    fs.rmSync(count)
    fs.writeFileSync(fail, "1000")
    const always = await session(t, { bwrap: flaky }).prepare()
    const e = await refusal(always.run("/bin/sh", ["-c", `touch '${t.ws}/ran'`], { stdio: "ignore" }))
    expect(e.reason).toBe("sandbox-unavailable")
    expect(e.message).toMatch(/^the sandbox exited while it was being set up \(bubblewrap exited with 1;.*\(3 sandboxes were tried/)
    expect(fs.readFileSync(count, "utf8")).toBe("x\nx\nx\n")
    await always.cleanup()
    expect(fs.existsSync(path.join(t.ws, "ran"))).toBe(false)
  })

  it("the execution target's temporary root is not walked; a workspace nested in it is still walked", async () => {
    const t = sandboxTree()
    // The temporary root inside the workspace: its repositories are the child's scratch.
    t.write("ws/scratch/repo/.git/config", "x")
    const inside = await session(t, {
      target: { workspace: t.ws, home: t.home, tempRoot: path.join(t.ws, "scratch"), runtimeDirectory: t.at("run") }
    }).prepare()
    expect(inside.plan.restrictions.map((r) => r.path)).not.toContain(path.join(t.ws, "scratch", "repo", ".git"))
    expect(inside.plan.discovery.find((d) => d.anchor === t.ws)!.skipped).toEqual([path.join(t.ws, "scratch")])
    await inside.cleanup()
    // A workspace inside the temporary root is its own discovery root.
    t.write("tmp/project/.git/config", "x")
    const nested = await session(t, {
      target: { workspace: t.at("tmp", "project"), home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }
    }).prepare()
    expect(nested.plan.restrictions.map((r) => r.path)).toContain(t.at("tmp", "project", ".git"))
    const r = await runScript(nested, `echo x >> .git/config || echo git-denied; echo y > ../other && echo tmp-ok`)
    expect(r.stdout).toContain("git-denied")
    expect(r.stdout).toContain("tmp-ok")
  })

  it("run() answers the child's exit status", async () => {
    const t = sandboxTree()
    const s = session(t)
    const done = await s.run("/bin/sh", ["-c", "exit 7"], { stdio: "ignore" })
    expect(done.code).toBe(7)
    expect(done.cleanup.refused).toEqual([])
    const ok = await exec("/bin/true", [])
    expect(ok.code).toBe(0)
  })

  it("the default private temporary root is made for the launch and removed with its contents", async () => {
    const t = sandboxTree()
    const s = new Confinement({ target: { workspace: t.ws, home: t.home, runtimeDirectory: t.at("run") }, strategy })
    const launch = await s.prepare()
    const tmp = launch.plan.tempRoot
    expect(fs.statSync(tmp).mode & 0o777).toBe(0o700)
    const r = await runScript(launch, `mkdir -p "$TMPDIR/a/b" && echo x > "$TMPDIR/a/b/f" && echo tmp-ok`)
    expect(r.stdout).toContain("tmp-ok")
    expect(fs.existsSync(tmp)).toBe(false)
  })
})
