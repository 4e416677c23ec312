/**
 * Descriptors the caller of pinnedfs left open (without close-on-exec, as a shell's `exec 200<…`
 * or a parent's extra stdio leaves them) never reach the confined command: bubblewrap passes on
 * every descriptor it is given, so only the launcher between it and the command can close them.
 * The descriptors are on a protected directory (`.git`, read-only in the sandbox: through its
 * descriptor the host directory is reached, not the mount), a masked file (the key) and a socket to
 * a host process; the child tries each through `/proc/self/fd/N`.
 */
import { spawn, type StdioOptions } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { Confinement } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { sandboxTree, type SandboxTree } from "./support/tree.ts"

let stage = ""
beforeAll(() => {
  stage = stagePackage()
})

const servers: Array<net.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve))
})

/** A host process listening on a Unix socket, and what it has been sent. */
const listener = async (t: SandboxTree): Promise<{ socket: net.Socket; received: () => string }> => {
  let received = ""
  const server = net.createServer((c) => c.setEncoding("utf8").on("data", (d: string) => (received += d)))
  servers.push(server)
  const at = path.join(t.base, "host.sock")
  await new Promise<void>((resolve) => server.listen(at, resolve))
  const socket = net.connect(at)
  await new Promise((resolve) => socket.once("connect", resolve))
  return { socket, received: () => received }
}

// What the child tries with descriptors 200 (the .git directory), 201 (the key) and 202 (the
// socket): high numbers, as a shell's `exec 200<.git` leaves them (bash: dash has no `>&202`).
const attack = [
  "echo fds: $(ls /proc/self/fd | sort -n | tr '\\n' ' ')",
  "echo broken >> /proc/self/fd/200/config && echo wrote-git",
  "cat /proc/self/fd/201 && echo read-key",
  "echo via-socket >&202 && echo sent",
  "echo edit >> src.txt && echo edit-ok"
].join("; ")

/** Stdio for a child with `entries` at descriptors 200, 201, … and nothing between. */
const at200 = (entries: ReadonlyArray<unknown>): StdioOptions =>
  ["ignore", "pipe", "pipe", ...Array.from({ length: 197 }, () => "ignore"), ...entries] as StdioOptions

/** Runs `program` with descriptors 200, 201, 202 open (not close-on-exec) on .git, the key and the socket. */
const withInherited = async (t: SandboxTree, program: ReadonlyArray<string>) => {
  const { socket, received } = await listener(t)
  const git = fs.openSync(path.join(t.ws, ".git"), "r")
  const key = fs.openSync(path.join(t.home, ".ssh", "id_ed25519"), "r")
  try {
    const child = spawn(process.execPath, [...program], {
      cwd: t.ws,
      env: { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") },
      stdio: at200([git, key, socket])
    })
    let stdout = ""
    let stderr = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    child.stderr!.setEncoding("utf8").on("data", (d: string) => (stderr += d))
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve))
    // The socket's peer has had every chance to read what was sent: end it and let it drain.
    await new Promise<void>((resolve) => socket.end(resolve))
    return { code, stdout, stderr, received: received() }
  } finally {
    fs.closeSync(git)
    fs.closeSync(key)
    socket.destroy()
  }
}

const expectNothingReached = async (t: SandboxTree, r: { code: number | null; stdout: string; received: string }) => {
  expect(r.stdout).toContain("edit-ok") // the child ran, and could do what it may
  expect(r.stdout).not.toContain("wrote-git")
  expect(r.stdout).not.toContain("read-key")
  expect(r.stdout).not.toContain("PRIVATE KEY")
  expect(r.stdout).not.toMatch(/^sent$/m)
  expect(r.received).toBe("")
  expect(t.read("ws/.git/config")).toBe("[core]\n")
  // stdio and ls's own listing, nothing else: not even a descriptor the test runner itself left open.
  expect(r.stdout.split("\n").find((l) => l.startsWith("fds:"))).toBe("fds: 0 1 2 3")
}

describe("descriptors the caller left open", () => {
  it("pinnedfs run: a .git directory, a masked key and a socket held open by the caller never reach the command", async () => {
    const t = sandboxTree()
    const r = await withInherited(t, [path.join(stage, "fixtures", "cli.mjs"), "run", "--", "/bin/bash", "-c", attack])
    expect(r.stderr).not.toMatch(/cannot confine/)
    await expectNothingReached(t, r)
  })

  it.each(strategies)("the API (%s): the same descriptors never reach the command", async (strategy) => {
    const t = sandboxTree()
    const options = { target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }, strategy }
    const r = await withInherited(t, [path.join(stage, "fixtures", "api.mjs"), JSON.stringify(options), "--", "/bin/bash", "-c", attack])
    expect(r.stderr).not.toMatch(/api.mjs:/)
    expect(r.stderr).toMatch(/fd\/200/) // the child did try
    await expectNothingReached(t, r)
  })

  it.each(strategies)("what the caller passes on purpose (%s): an extra stdio pipe reaches the command, and only it", async (strategy) => {
    const t = sandboxTree()
    const launch = await new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy
    }).prepare()
    const child = await launch.spawn("/bin/sh", ["-c", "echo on-purpose >&3; ls /proc/self/fd | sort -n | tr '\\n' ' '"], {
      stdio: ["ignore", "pipe", "pipe", "pipe"]
    })
    let extra = ""
    let stdout = ""
    ;(child.stdio[3] as NodeJS.ReadableStream).setEncoding("utf8").on("data", (d: string) => (extra += d))
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    await new Promise((resolve) => child.once("close", resolve))
    await launch.cleanup()
    expect(extra).toBe("on-purpose\n")
    expect(stdout.trim()).toBe("0 1 2 3 4") // stdio, the pipe passed on purpose, and ls's own listing
  })
})

// Not a confinement test: what the sandbox alone (bubblewrap, no launcher) lets through, so the
// test above is known to attack something real.
it("the attack is live: a plain child given the same descriptors writes .git/config, reads the key and reaches the socket", async () => {
  const t = sandboxTree()
  const r = await withInherited(t, [
    "-e",
    `require("child_process").spawnSync("/bin/bash", ["-c", ${JSON.stringify(attack)}], { stdio: "inherit" })`
  ])
  expect(r.stdout).toContain("wrote-git")
  expect(r.stdout).toContain("PRIVATE KEY")
  expect(r.received).toBe("via-socket\n")
  expect(t.read("ws/.git/config")).toBe("[core]\nbroken\n")
})
