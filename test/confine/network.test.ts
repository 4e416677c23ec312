/**
 * The network of a confined child: `"none"` (the default) is a network namespace of its own with
 * only loopback, so neither a host TCP service on 127.0.0.1 nor the host's abstract Unix sockets
 * (which belong to the network namespace, not to the file system) are reachable; `"host"` is the
 * host's network, where both are. Each case runs a real sandbox against real listeners on the host.
 */
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { Confinement, type Network, type UnixSockets } from "../../src/confine/index.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, runShell, sandboxTree, type SandboxTree, expectOutput } from "./support/tree.ts"

const servers: Array<net.Server> = []
afterEach(async () => {
  for (const s of servers.splice(0)) await new Promise((resolve) => s.close(resolve))
})

/** A TCP listener on 127.0.0.1 and one on an abstract Unix socket, each counting connections. */
const listeners = async () => {
  const seen = { tcp: 0, abstract: 0 }
  const tcp = net.createServer((c) => {
    seen.tcp++
    c.end()
  })
  const abstract = net.createServer((c) => {
    seen.abstract++
    c.end()
  })
  servers.push(tcp, abstract)
  await new Promise<void>((resolve) => tcp.listen(0, "127.0.0.1", resolve))
  const name = `\0pinnedfs-test-${process.pid}-${Math.random().toString(36).slice(2)}`
  await new Promise<void>((resolve) => abstract.listen(name, resolve))
  return { port: (tcp.address() as net.AddressInfo).port, name, seen }
}

/** A Node one-liner that connects to `target` (a port, or an abstract name) and prints the outcome. */
const attempt = (label: string, target: string) =>
  `'${process.execPath}' -e 'const t = process.argv[1]; const s = /^\\d+$/.test(t) ? require("net").connect(Number(t), "127.0.0.1") : require("net").connect("\\0" + t); s.on("connect", () => { console.log("${label}-connected"); s.destroy() }); s.on("error", (e) => console.log("${label}-failed " + e.code))' '${target}'`

const script = (l: { port: number; name: string }) => `${attempt("tcp", String(l.port))}; ${attempt("abstract", l.name.slice(1))}`

describe.each(strategies)("the network (%s)", (strategy) => {
  const run = async (t: SandboxTree, network: Network | undefined, command: string, unixSockets?: UnixSockets) => {
    const session = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy,
      policy: { ...(network === undefined ? {} : { network }), ...(unixSockets === undefined ? {} : { unixSockets }) }
    })
    return runShell(await session.prepare(), command)
  }

  it("by default the child has only its own loopback: no host TCP service, no host abstract socket", async () => {
    const t = sandboxTree()
    const l = await listeners()
    // Unix sockets left to the file system, so that the network namespace is what stops the
    // abstract socket here (by default the seccomp filter stops it too: sockets.test.ts).
    const r = await run(t, undefined, script(l), "host")
    expect(r.plan.network).toBe("none")
    expect(r.plan.sandbox.kind === "bubblewrap" && r.plan.sandbox.arguments).toContain("--unshare-net")
    expectOutput(r.stdout, ["tcp-failed", "abstract-failed ECONNREFUSED"])
    expect(l.seen).toEqual({ tcp: 0, abstract: 0 })
  })

  it('"host" is the host\'s network: both are reachable (the control that the listeners are live)', async () => {
    const t = sandboxTree()
    const l = await listeners()
    const r = await run(t, "host", script(l), "host")
    expect(r.plan.network).toBe("host")
    expectOutput(r.stdout, ["tcp-connected", "abstract-connected"])
    expect(l.seen).toEqual({ tcp: 1, abstract: 1 })
  })

  it("full access keeps the host's network unless the policy says none", async () => {
    const t = sandboxTree()
    const full = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy,
      mode: "full-access"
    })
    expect(full.policy.network).toBe("host")
    const closed = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("run") },
      strategy,
      mode: "full-access",
      policy: { network: "none" }
    })
    expect(closed.policy.network).toBe("none")
  })

  it("a bad network value is refused, saying what it takes", () => {
    expect(() => new Confinement({ target: { workspace: "/tmp" }, policy: { network: "off" as Network } })).toThrow(/"none" or "host"/)
  })
})

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

describe("pinnedfs run --network", () => {
  it("none by default, host when asked; --help states the default; a bad value is a usage error (2)", async () => {
    const t = sandboxTree()
    const l = await listeners()
    const env = { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("run") }
    const closed = await exec(process.execPath, [cli, "run", "--", "/bin/sh", "-c", script(l)], { cwd: t.ws, env })
    expect(closed.stdout).toContain("tcp-failed")
    const open = await exec(process.execPath, [cli, "run", "--network", "host", "--", "/bin/sh", "-c", script(l)], { cwd: t.ws, env })
    expect(open.stdout).toContain("tcp-connected")
    expect(l.seen.tcp).toBe(1)
    const help = await exec(process.execPath, [cli, "run", "--help"], { cwd: t.ws, env })
    expect(help.stdout).toMatch(/--network <none\|host>[\s\S]*default: none/)
    const bad = await exec(process.execPath, [cli, "run", "--network", "off", "--", "/bin/true"], { cwd: t.ws, env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/none or host/)
  })
})
