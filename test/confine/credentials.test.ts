/**
 * Credentials a child could reach without reading a key file: an agent's socket (a real
 * ssh-agent holding a key, a gpg-agent socket, a container daemon's socket) and the credential
 * stores of the usual tools in a (fake) home. The agent cases leave Unix sockets to the file system
 * so that the masks are what they test. Each is tried from inside a real sandbox, and each
 * opening (an agent allowed by name, a store excluded by policy) is checked to work, so a child
 * that can reach nothing at all fails the test.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as path from "node:path"
import { afterEach, beforeAll, describe, expect, it } from "vitest"
import { Confinement, type PolicyConfig } from "../../src/confine/index.ts"
import { credentialStores } from "../../src/confine/credentials.ts"
import { strategies } from "../support/strategies.ts"
import { stagePackage } from "./support/stage.ts"
import { exec, runShell, sandboxTree, type SandboxTree } from "./support/tree.ts"

const cleanups: Array<() => Promise<void> | void> = []
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c()
})

/** A real ssh-agent on a socket in the tree, holding a fresh key; stopped after the test. */
const sshAgent = async (t: SandboxTree): Promise<{ socket: string; key: string }> => {
  const dir = t.at("agent")
  fs.mkdirSync(dir, { mode: 0o700 })
  const socket = path.join(dir, "agent.sock")
  const key = path.join(dir, "id_ed25519")
  expect(spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "pinnedfs-test", "-f", key]).status).toBe(0)
  const agent = spawn("ssh-agent", ["-D", "-a", socket], { stdio: "ignore" })
  cleanups.push(() => {
    agent.kill("SIGTERM")
  })
  // ssh-agent binds its socket before it forks into the foreground loop: wait until ssh-add can reach it.
  for (let i = 0; i < 200; i++) {
    if (spawnSync("ssh-add", [key], { env: { ...process.env, SSH_AUTH_SOCK: socket }, stdio: "ignore" }).status === 0) break
    await new Promise((resolve) => setImmediate(resolve))
  }
  expect(spawnSync("ssh-add", ["-L"], { env: { ...process.env, SSH_AUTH_SOCK: socket }, encoding: "utf8" }).stdout).toContain(
    "pinnedfs-test"
  )
  // Only the agent has the private key now: signing with the public key's file needs the agent.
  fs.rmSync(key)
  return { socket, key }
}

/** A host process listening on a Unix socket at `at`; answers what it was sent. */
const listening = async (at: string): Promise<() => string> => {
  let received = ""
  fs.mkdirSync(path.dirname(at), { recursive: true, mode: 0o700 })
  const server = net.createServer((c) => c.setEncoding("utf8").on("data", (d: string) => (received += d)))
  await new Promise<void>((resolve) => server.listen(at, resolve))
  cleanups.push(() => new Promise<void>((resolve) => server.close(() => resolve())))
  return () => received
}

/** A shell line that tries to connect to the socket at `at` and says `connected NAME` or `refused NAME`. */
const connect = (name: string, at: string) =>
  `'${process.execPath}' -e 'const s = require("net").connect(process.argv[1]); s.on("connect", () => { console.log("connected ${name}"); s.end("${name}") }); s.on("error", (e) => console.log("refused ${name} " + e.code))' '${at}'`

describe.each(strategies)("agents and credential stores (%s)", (strategy) => {
  // Unix sockets left to the file system ("host"), so that what stops the child here is the mask
  // itself, not the refusal of every Unix socket that is the default (sockets.test.ts).
  const run = async (t: SandboxTree, script: string, env: NodeJS.ProcessEnv, policy: PolicyConfig = {}) => {
    const session = new Confinement({
      target: { workspace: t.ws, home: t.home, tempRoot: t.tmp, runtimeDirectory: t.at("records") },
      strategy,
      policy: { unixSockets: "host", ...policy }
    })
    return runShell(await session.prepare({ env }), script, env)
  }

  it("a real ssh-agent holding a key is unreachable: its variable is dropped and its socket masked", async () => {
    const t = sandboxTree()
    const { socket, key } = await sshAgent(t)
    const env = { ...process.env, HOME: t.home, SSH_AUTH_SOCK: socket, SSH_AGENT_PID: "1" }
    const script = [
      `echo "sock=\${SSH_AUTH_SOCK-unset} pid=\${SSH_AGENT_PID-unset}"`,
      "ssh-add -L && echo agent-listed",
      `SSH_AUTH_SOCK='${socket}' ssh-add -L && echo agent-reached`,
      `echo data | SSH_AUTH_SOCK='${socket}' ssh-keygen -Y sign -f '${key}.pub' -n file && echo signed`,
      "echo edit >> src.txt && echo edit-ok"
    ].join("; ")
    const r = await run(t, script, env)
    expect(r.stdout).toContain("sock=unset pid=unset")
    expect(r.stdout).toContain("edit-ok")
    expect(r.stdout).not.toContain("agent-listed")
    expect(r.stdout).not.toContain("agent-reached")
    expect(r.stdout).not.toContain("signed")
    expect(r.stdout).not.toContain("pinnedfs-test")
    const ssh = r.plan.agents.find((a) => a.name === "ssh")!
    expect(ssh.allowed).toBe(false)
    expect(ssh.sockets).toContain(socket)
    expect(r.plan.environment.dropped).toEqual(expect.arrayContaining(["SSH_AUTH_SOCK", "SSH_AGENT_PID"]))
    expect(r.plan.restrictions).toContainEqual(expect.objectContaining({ path: socket, access: "inaccessible" }))
    // Allowed by name, the same agent signs.
    const allowed = await run(t, script, env, { agents: ["ssh"] })
    expect(allowed.stdout).toContain(`sock=${socket}`)
    expect(allowed.stdout).toContain("agent-listed")
    expect(allowed.stdout).toContain("signed")
    expect(allowed.plan.agents.find((a) => a.name === "ssh")!.allowed).toBe(true)
  })

  it("an agent socket in its usual place, named by no variable, is masked too", async () => {
    const t = sandboxTree()
    // OpenSSH's ssh-agent puts its socket at $TMPDIR/ssh-XXXXXXXXXX/agent.PID.
    const dir = fs.mkdtempSync("/tmp/ssh-pinnedfs-test-")
    cleanups.push(() => fs.rmSync(dir, { recursive: true, force: true }))
    const at = path.join(dir, "agent.1")
    const received = await listening(at)
    const runtime = t.at("run")
    const gpg = path.join(runtime, "gnupg", "S.gpg-agent")
    const gpgReceived = await listening(gpg)
    const env: NodeJS.ProcessEnv = { ...process.env, HOME: t.home, XDG_RUNTIME_DIR: runtime, GPG_AGENT_INFO: `${gpg}:0:1` }
    delete env["SSH_AUTH_SOCK"]
    const r = await run(t, `${connect("ssh", at)}; ${connect("gpg", gpg)}; echo "gpg=\${GPG_AGENT_INFO-unset}"`, env)
    expect(r.stdout).toContain("refused ssh")
    expect(r.stdout).toContain("refused gpg")
    expect(r.stdout).toContain("gpg=unset")
    expect(received()).toBe("")
    expect(gpgReceived()).toBe("")
    const opened = await run(t, `${connect("ssh", at)}; ${connect("gpg", gpg)}`, env, { agents: ["ssh", "gpg"] })
    expect(opened.stdout).toContain("connected ssh")
    expect(opened.stdout).toContain("connected gpg")
  })

  it("a container daemon's socket (DOCKER_HOST) is masked: it would start a container with the host's files writable", async () => {
    const t = sandboxTree()
    const socket = t.at("docker", "docker.sock")
    const received = await listening(socket)
    const env = { ...process.env, HOME: t.home, DOCKER_HOST: `unix://${socket}` }
    const r = await run(t, `${connect("docker", socket)}; echo "host=\${DOCKER_HOST-unset}"`, env)
    expect(r.stdout).toContain("refused docker")
    expect(r.stdout).toContain("host=unset")
    expect(received()).toBe("")
    const opened = await run(t, connect("docker", socket), env, { agents: ["docker"] })
    expect(opened.stdout).toContain("connected docker")
  })

  it("the credential stores are inaccessible by default; a policy excludes one or adds another", async () => {
    const t = sandboxTree()
    const stores = {
      ".aws/credentials": "aws_secret_access_key = AWS-SECRET",
      ".npmrc": "//registry.npmjs.org/:_authToken=NPM-SECRET",
      ".config/gh/hosts.yml": "oauth_token: GH-SECRET",
      ".docker/config.json": '{"auths":{"x":{"auth":"DOCKER-SECRET"}}}',
      ".netrc": "machine x login u password NETRC-SECRET",
      ".git-credentials": "https://u:GITCRED-SECRET@example.com",
      ".kube/config": "token: KUBE-SECRET",
      ".config/custom/token": "CUSTOM-SECRET",
      ".config/other.txt": "readable"
    }
    for (const [file, content] of Object.entries(stores)) t.write(`home/${file}`, `${content}\n`)
    const env = { ...process.env, HOME: t.home }
    const script = `${Object.keys(stores)
      .map((f) => `cat "$HOME/${f}" 2>/dev/null`)
      .join("; ")}; echo done`
    const r = await run(t, script, env, { protected: [["~/.config/custom"]] })
    expect(r.stdout).toContain("readable")
    expect(r.stdout).toContain("done")
    expect(r.stdout).not.toMatch(/SECRET/)
    for (const glob of ["~/.aws", "~/.npmrc", "~/.config/gh", "~/.docker/config.json", "~/.netrc", "~/.git-credentials", "~/.kube"]) {
      expect(r.plan.credentials).toContainEqual({ glob, why: expect.stringMatching(/\w/) })
    }
    expect(r.plan.restrictions).toContainEqual(
      expect.objectContaining({ path: path.join(t.home, ".aws"), access: "inaccessible", rule: "~/.aws" })
    )
    const excluded = await run(t, script, env, { exclude: ["~/.npmrc"] })
    expect(excluded.stdout).toContain("NPM-SECRET")
    expect(excluded.stdout).not.toContain("AWS-SECRET")
    expect(excluded.plan.credentials.map((c) => c.glob)).not.toContain("~/.npmrc")
  })
})

describe("the default list", () => {
  it("every credential store says why it is there, and a typo in exclude is refused", () => {
    for (const c of credentialStores) expect(c.why.length).toBeGreaterThan(10)
    expect(() => new Confinement({ target: { workspace: "/tmp" }, policy: { exclude: ["~/.npmrc "] } })).toThrow(/names no default rule/)
    expect(() => new Confinement({ target: { workspace: "/tmp" }, policy: { agents: ["sshh" as "ssh"] } })).toThrow(/unknown agent/)
  })
})

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
})

describe("pinnedfs run", () => {
  it("--verbose lists the credential stores, the agents and the network; --allow-agent opens one agent", async () => {
    const t = sandboxTree()
    t.write("home/.aws/credentials", "AWS-SECRET\n")
    const { socket } = await sshAgent(t)
    const env = { ...process.env, HOME: t.home, TMPDIR: t.tmp, PINNEDFS_RUNTIME_DIR: t.at("records"), SSH_AUTH_SOCK: socket }
    const r = await exec(
      process.execPath,
      [cli, "run", "--verbose", "--", "/bin/sh", "-c", 'cat "$HOME/.aws/credentials"; ssh-add -L && echo agent-listed'],
      {
        cwd: t.ws,
        env
      }
    )
    expect(r.stdout).not.toContain("AWS-SECRET")
    expect(r.stdout).not.toContain("agent-listed")
    expect(r.stderr).toMatch(/inaccessible +.*\.aws +\(~\/\.aws: AWS CLI/)
    expect(r.stderr).toMatch(/agent ssh +masked/)
    expect(r.stderr).toMatch(/network +none/)
    expect(r.stderr).toMatch(/unix sockets +none/)
    const allowed = await exec(
      process.execPath,
      [cli, "run", "--allow-agent", "ssh", "--", "/bin/sh", "-c", "ssh-add -L && echo agent-listed"],
      {
        cwd: t.ws,
        env
      }
    )
    expect(allowed.stdout).toContain("agent-listed")
    const bad = await exec(process.execPath, [cli, "run", "--allow-agent", "nope", "--", "/bin/true"], { cwd: t.ws, env })
    expect(bad.code).toBe(2)
    expect(bad.stderr).toMatch(/unknown agent 'nope'/)
  })
})
