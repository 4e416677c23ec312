/**
 * Confinement as an unprivileged user. When the tests run as root, `pinnedfs run` runs as `nobody`
 * (uid/gid 65534) from the staged package: discovery, the creation programs and bubblewrap (through
 * a user namespace) all without privilege. The files a refusal protects are writable or readable by
 * nobody on the host, so only the sandbox can be what stops the child.
 */
import { spawn, spawnSync, type StdioOptions } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { stagePackage } from "./support/stage.ts"
import { exec, sandboxTree, type SandboxTree } from "./support/tree.ts"
import { asRoot, NOBODY } from "../support/ids.ts"
import { nobodysBwrap, nodeForNobody, pathForNobody } from "../support/nobody.ts"
import { skipUnless } from "../support/skip.ts"

const ids = asRoot ? { uid: NOBODY, gid: NOBODY } : {}

// Can bubblewrap build a sandbox for this user here (a user namespace, since it is not setuid)? The
// probe names bubblewrap by absolute path and runs from "/", so that neither a PATH entry nor a
// working directory this user cannot enter (a checkout under a closed home) is what it measures;
// when the executable itself cannot be reached, it says which directory stops it.
// When the one on PATH sits where nobody cannot reach it (one `npm test` fetched into root's
// cache), nobody's copy is staged, and every pinnedfs run below finds that one first on its PATH.
const bwrapPath = nobodysBwrap()
const probe = spawnSync(
  bwrapPath,
  ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid", "--unshare-net", "--cap-drop", "ALL", "/bin/true"],
  { ...ids, cwd: "/", encoding: "utf8" }
)
/** The first directory on the way to `file` that others may not search (nobody's view of it). */
const closedAncestor = (file: string): string | undefined => {
  for (let d = path.dirname(file); ; d = path.dirname(d)) {
    if ((fs.statSync(d).mode & 0o001) === 0) return d
    if (d === "/") return undefined
  }
}
const bwrapWorks = probe.status === 0
const why = bwrapWorks
  ? ""
  : `bubblewrap (${bwrapPath}) cannot build a sandbox as uid ${asRoot ? NOBODY : process.getuid?.()} here: ${
      probe.error === undefined
        ? probe.stderr.trim()
        : `${probe.error.message}${closedAncestor(bwrapPath) ? ` (${closedAncestor(bwrapPath)} is closed to others)` : ""}`
    }`

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

const pinnedfs = (t: SandboxTree, args: ReadonlyArray<string>) =>
  exec(nodeForNobody(), [cli, ...args], {
    ...ids,
    cwd: t.ws,
    env: { ...process.env, PATH: pathForNobody(), HOME: t.home, TMPDIR: t.tmp }
  })

/** `pinnedfs run --verbose` of a shell script. */
const runVerbose = (t: SandboxTree, script: string) => pinnedfs(t, ["run", "--verbose", "--", "/bin/sh", "-c", script])

/** A tree whose protected files nobody could change or read on the host, were it not for the sandbox. */
const openTree = () => {
  const t = sandboxTree()
  fs.chmodSync(t.at("ws/.git"), 0o777)
  fs.chmodSync(t.at("ws/.git/config"), 0o666)
  if (asRoot) for (const p of ["ws", "ws/.git", "ws/.git/config", "ws/src.txt", "tmp"]) fs.chownSync(t.at(p), NOBODY, NOBODY)
  return t
}

describe("confinement as an unprivileged user", () => {
  it("bubblewrap builds the sandbox for this user (user namespaces), or the reason is printed", () => {
    if (!bwrapWorks) console.warn(why)
    expect(typeof bwrapWorks).toBe("boolean")
    if (asRoot) expect(bwrapWorks, why).toBe(true) // this machine was checked to have them
  })

  it("the child cannot write .git/config, read the key or write outside; its edits land", async (ctx) => {
    skipUnless(ctx, bwrapWorks, why)
    const t = openTree()
    const r = await pinnedfs(t, [
      "run",
      "--",
      "/bin/sh",
      "-c",
      `id -u; echo edit >> src.txt && echo edit-ok; echo x >> .git/config || echo git-denied; echo x > .git/hooks || echo hooks-denied; cat "$HOME/.ssh/id_ed25519" || echo key-denied; echo x >> '${t.outside}/keep.txt' || echo outside-denied`
    ])
    expect(r.stderr).not.toMatch(/cannot confine/)
    expect(r.code).toBe(0)
    if (asRoot) expect(r.stdout.split("\n")[0]).toBe(String(NOBODY))
    for (const word of ["edit-ok", "git-denied", "hooks-denied", "key-denied", "outside-denied"]) expect(r.stdout).toContain(word)
    expect(r.stdout).not.toContain("PRIVATE KEY")
    expect(t.read("ws/src.txt")).toBe("source\nedit\n")
    expect(t.read("ws/.git/config")).toBe("[core]\n")
    expect(t.read("outside/keep.txt")).toBe("outside\n")
  })

  it("a tree discovery cannot read is protected whole: the child cannot open it up", async (ctx) => {
    skipUnless(ctx, bwrapWorks && asRoot, bwrapWorks ? "only root can close a tree to discovery" : why)
    const t = openTree()
    t.write("ws/private/.git/config", "[core]\n")
    fs.chmodSync(t.at("ws/private/.git/config"), 0o666)
    fs.chownSync(t.at("ws/private"), NOBODY, NOBODY)
    fs.chmodSync(t.at("ws/private"), 0o000) // nobody's own directory: nobody could chmod it back
    const r = await runVerbose(
      t,
      "chmod 755 private || echo chmod-denied; echo x >> private/.git/config || echo git-denied; echo ok > mine && echo edit-ok"
    )
    expect(r.stderr).toContain(`read-only     ${t.at("ws/private")}  (unreadable tree)`)
    expect(r.stdout).toContain("chmod-denied")
    expect(r.stdout).toContain("git-denied")
    expect(r.stdout).toContain("edit-ok")
    expect(fs.statSync(t.at("ws/private")).mode & 0o777).toBe(0)
    fs.chmodSync(t.at("ws/private"), 0o755)
    expect(t.read("ws/private/.git/config")).toBe("[core]\n")
  })

  it("a missing .git is made by nobody, cannot be written in, and is removed afterwards", async (ctx) => {
    skipUnless(ctx, bwrapWorks, why)
    const t = openTree()
    fs.rmSync(t.at("ws/.git"), { recursive: true })
    const r = await runVerbose(t, "echo ref > .git/HEAD || echo head-denied; echo edit >> src.txt && echo edit-ok")
    expect(r.stderr).toContain(`made empty    ${t.at("ws/.git")}`)
    expect(r.stdout).toContain("head-denied")
    expect(r.stdout).toContain("edit-ok")
    expect(fs.existsSync(t.at("ws/.git"))).toBe(false)
  })

  it("an inherited descriptor, an agent's socket and the host's network are out of the child's reach", async (ctx) => {
    skipUnless(ctx, bwrapWorks, why)
    const t = openTree()
    // A host service on a Unix socket anyone may connect to (the agent) and one on 127.0.0.1.
    let received = ""
    const agent = net.createServer((c) => c.setEncoding("utf8").on("data", (d: string) => (received += d)))
    const tcp = net.createServer((c) => c.end())
    const socket = t.at("agent.sock")
    await new Promise<void>((resolve) => agent.listen(socket, resolve))
    fs.chmodSync(socket, 0o777)
    await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve))
    const port = (tcp.address() as net.AddressInfo).port
    const git = fs.openSync(t.at("ws/.git"), "r")
    const node = nodeForNobody()
    const tries = [
      "echo fds: $(ls /proc/self/fd | tr '\\n' ' ')",
      "echo broken >> /proc/self/fd/200/config && echo wrote-git",
      `echo "sock=\${SSH_AUTH_SOCK-unset}"`,
      `'${node}' -e 'const s = require("net").connect(process.argv[1]); s.on("connect", () => { console.log("agent-connected"); s.end("x") }); s.on("error", () => console.log("agent-refused"))' '${socket}'`,
      `'${node}' -e 'const s = require("net").connect(${port}, "127.0.0.1"); s.on("connect", () => { console.log("tcp-connected"); s.end() }); s.on("error", () => console.log("tcp-refused"))'`,
      "echo edit >> src.txt && echo edit-ok"
    ].join("; ")
    try {
      const child = spawn(node, [cli, "run", "--", "/bin/bash", "-c", tries], {
        ...ids,
        cwd: t.ws,
        env: { ...process.env, PATH: pathForNobody(), HOME: t.home, TMPDIR: t.tmp, SSH_AUTH_SOCK: socket },
        stdio: ["ignore", "pipe", "pipe", ...Array.from({ length: 197 }, () => "ignore"), git] as StdioOptions
      })
      let stdout = ""
      let stderr = ""
      child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
      child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
      const code = await new Promise<number | null>((resolve) => child.once("close", resolve))
      expect(stderr).not.toMatch(/cannot confine/)
      expect(code).toBe(0)
      for (const word of ["edit-ok", "sock=unset", "agent-refused", "tcp-refused"]) expect(stdout).toContain(word)
      expect(stdout).toMatch(/^fds: 0 1 2 3 ?$/m)
      expect(stdout).not.toContain("wrote-git")
      expect(received).toBe("")
      expect(t.read("ws/.git/config")).toBe("[core]\n")
    } finally {
      fs.closeSync(git)
      await new Promise((resolve) => agent.close(resolve))
      await new Promise((resolve) => tcp.close(resolve))
    }
  })
})
