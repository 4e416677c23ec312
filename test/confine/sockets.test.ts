/**
 * Unix sockets: a process outside the sandbox is reached through a Unix socket it listens on,
 * however read-only the mount it sits on (connecting is not writing), and many such processes act
 * for the user (agents, the user's systemd and D-Bus, tmux, an editor's server). By default the
 * command cannot make a Unix socket at all; `"host"` leaves them to the file system, where every
 * socket the policy does not mask is reachable (the control that the listeners are live).
 */
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { Confinement, type UnixSockets } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, runShell, sandboxTree, type SandboxTree, expectOutput } from "./support/tree.ts"
import { skipUnless } from "../support/skip.ts"

const servers: Array<net.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve))
})

/** Host processes on a Unix socket in the workspace (a writable root) and one outside it (read-only). */
const listeners = async (t: SandboxTree) => {
  const seen = { workspace: 0, outside: 0 }
  const at = { workspace: path.join(t.ws, "host.sock"), outside: path.join(t.outside, "host.sock") }
  for (const where of ["workspace", "outside"] as const) {
    const server = net.createServer((c) => {
      seen[where]++
      c.end()
    })
    servers.push(server)
    await new Promise<void>((resolve) => server.listen(at[where], resolve))
  }
  return { at, seen }
}

const attempt = (label: string, at: string) =>
  `'${process.execPath}' -e 'const s = require("net").connect(process.argv[1]); s.on("connect", () => { console.log("${label}-connected"); s.destroy() }); s.on("error", (e) => console.log("${label}-failed " + e.code))' '${at}'`

const script = (at: { workspace: string; outside: string }) =>
  `${attempt("workspace", at.workspace)}; ${attempt("outside", at.outside)}; echo edit >> src.txt && echo edit-ok`

describe.each(strategies)("Unix sockets (%s)", (strategy) => {
  const run = async (t: SandboxTree, unixSockets: UnixSockets | undefined, command: string) => {
    const session = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy,
      policy: unixSockets === undefined ? {} : { unixSockets }
    })
    return runShell(await session.prepare(), command)
  }

  it("by default the child cannot make a Unix socket: neither a socket in its workspace nor one outside reaches a host process", async () => {
    const t = sandboxTree()
    const l = await listeners(t)
    const r = await run(t, undefined, script(l.at))
    expect(r.plan.unixSockets).toBe("none")
    expectOutput(r.stdout, ["edit-ok", "workspace-failed EPERM", "outside-failed EPERM"])
    expect(l.seen).toEqual({ workspace: 0, outside: 0 })
  })

  it('"host": both are reachable, the read-only one too (what the default closes)', async () => {
    const t = sandboxTree()
    const l = await listeners(t)
    const r = await run(t, "host", script(l.at))
    expect(r.plan.unixSockets).toBe("host")
    expectOutput(r.stdout, ["workspace-connected", "outside-connected"])
    expect(l.seen).toEqual({ workspace: 1, outside: 1 })
  })

  it("a program's own socket pairs still work (pipes to its children, worker channels)", async () => {
    const t = sandboxTree()
    const child = 'process.on("message", (m) => { process.send(m); process.disconnect() })'
    const parent = `const c = require("child_process").spawn(process.execPath, ["-e", ${JSON.stringify(child)}], { stdio: ["ignore", "inherit", "inherit", "ipc"] }); c.on("message", (m) => console.log("ipc-" + m)); c.send("ok")`
    const pair = `'${process.execPath}' -e '${parent}'`
    const r = await run(t, undefined, pair)
    expect(r.stdout).toContain("ipc-ok")
  })

  it("an allowed agent needs its socket: allowing one leaves Unix sockets to the file system, and asking for none with it is refused", () => {
    const t = sandboxTree()
    const allowed = new Confinement({ target: { workspace: t.ws }, policy: { agents: ["ssh"] } })
    expect(allowed.policy.unixSockets).toBe("host")
    expect(() => new Confinement({ target: { workspace: t.ws }, policy: { agents: ["ssh"], unixSockets: "none" } })).toThrow(
      /refuses every Unix socket, and the agents allowed \(ssh\)/
    )
    expect(fs.existsSync(t.ws)).toBe(true)
  })
})

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

it("pinnedfs run --unix-sockets host|none; a bad value is a usage error (2)", async () => {
  const t = sandboxTree()
  const l = await listeners(t)
  const env = { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") }
  const closed = await exec(process.execPath, [cli, "run", "--", "/bin/sh", "-c", script(l.at)], { cwd: t.ws, env })
  expect(closed.stdout).toContain("workspace-failed EPERM")
  const open = await exec(process.execPath, [cli, "run", "--unix-sockets", "host", "--", "/bin/sh", "-c", script(l.at)], { cwd: t.ws, env })
  expect(open.stdout + open.stderr).toContain("workspace-connected")
  const bad = await exec(process.execPath, [cli, "run", "--unix-sockets", "some", "--", "/bin/true"], { cwd: t.ws, env })
  expect(bad.code).toBe(2)
  expect(bad.stderr).toMatch(/--unix-sockets 'some': none or host/)
})

// System V IPC: a message queue the user made outside is not the child's to see or use.
const haveIpc = ["ipcmk", "ipcs", "ipcrm"].every((t) => fs.existsSync(`/usr/bin/${t}`))
it("a System V message queue of the user's is out of the child's reach (an IPC namespace of its own)", async (ctx) => {
  skipUnless(ctx, haveIpc, "no ipcmk/ipcs/ipcrm (util-linux)")
  const t = sandboxTree()
  const made = /(\d+)/.exec((await exec("ipcmk", ["-Q"])).stdout)
  expect(made).not.toBeNull()
  const id = made![1]!
  try {
    // ipcs exits 0 either way: what tells is whether the queue's id is listed.
    const listed = (out: string) => out.split("\n").some((l) => l.trim().split(/\s+/)[1] === id)
    expect(listed((await exec("ipcs", ["-q"])).stdout)).toBe(true) // the control: the host sees it
    const launch = await new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") }
    }).prepare()
    const child = await launch.spawn("/bin/sh", ["-c", "ipcs -q; echo done"], {
      stdio: ["ignore", "pipe", "ignore"]
    })
    let stdout = ""
    child.stdout!.setEncoding("utf8").on("data", (d: string) => (stdout += d))
    await new Promise((resolve) => child.once("close", resolve))
    await launch.cleanup()
    expect(stdout).toContain("done")
    expect(listed(stdout)).toBe(false)
  } finally {
    await exec("ipcrm", ["-q", id])
  }
})
