import { describe, expect, it } from "vitest"
import { compilePolicy, ConfinementError, credentialStores, defaultRules } from "../../src/confine/index.ts"
import { determinablePath, isLiteral } from "../../src/confine/policy.ts"

const invalid = (f: () => unknown, pattern: RegExp) => {
  let caught: unknown
  try {
    f()
  } catch (e) {
    caught = e
  }
  expect(caught).toBeInstanceOf(ConfinementError)
  expect((caught as ConfinementError).reason).toBe("invalid-policy")
  expect((caught as Error).message).toMatch(pattern)
}

describe("protected-path policy", () => {
  it("defaults: every .git read-only, ~/.ssh and ~/.gnupg inaccessible", () => {
    const p = compilePolicy({}, "confined", { env: {}, uid: 1000 })
    expect(p.mode).toBe("confined")
    expect(p.rules.slice(0, 3).map((r) => [r.glob, r.access, r.base, r.source])).toEqual([
      ["**/.git", "read-only", "workspace", "default"],
      ["~/.ssh", "inaccessible", "home", "default"],
      ["~/.gnupg", "inaccessible", "home", "default"]
    ])
    // Then the credential stores and the agents' sockets, each saying why.
    expect(p.rules.filter((r) => r.source === "credential").map((r) => r.glob)).toEqual(credentialStores.map((c) => c.glob))
    expect(p.rules.filter((r) => r.source !== "user").every((r) => r.why.length > 0)).toBe(true)
    expect(p.agents.flatMap((a) => a.sockets)).toEqual(
      expect.arrayContaining(["/tmp/ssh-*", "/run/user/1000/gnupg", "~/.gnupg/S.*", "/run/docker.sock", "/run/user/1000/bus"])
    )
    // The sockets of one directory are one rule: the runtime directory is probed once.
    const agentGlobs = p.rules.filter((r) => r.source === "agent").map((r) => r.glob)
    expect(agentGlobs.filter((g) => g.startsWith("/run/user/1000/"))).toEqual([
      "/run/user/1000/{ssh-agent.socket,openssh_agent,gcr,gnupg,keyring,bus,systemd,docker.sock,podman}"
    ])
    expect(agentGlobs).toEqual(expect.arrayContaining(["/tmp/ssh-*", "~/.gnupg/S.*"]))
    expect(p.network).toBe("none")
    expect(Object.isFrozen(p.rules)).toBe(true)
    expect(Object.isFrozen(defaultRules)).toBe(true)
  })

  it("agents: the sockets their variables name are masked and the variables dropped, unless the agent is allowed", () => {
    const env = {
      SSH_AUTH_SOCK: "/tmp/ssh-abc/agent.1",
      GPG_AGENT_INFO: "/home/u/.gnupg/S.gpg-agent:0:1",
      DBUS_SESSION_BUS_ADDRESS: "unix:path=/run/user/5/bus,guid=x",
      DOCKER_HOST: "unix:///var/run/docker.sock",
      XDG_RUNTIME_DIR: "/run/user/5",
      TMPDIR: "/var/tmp/me"
    }
    const p = compilePolicy({}, "confined", { env, uid: 5 })
    const agent = (name: string) => p.agents.find((a) => a.name === name)!
    expect(agent("ssh").sockets).toEqual(expect.arrayContaining(["/tmp/ssh-abc/agent.1", "/tmp/ssh-*", "/var/tmp/me/ssh-*"]))
    expect(agent("gpg").sockets).toContain("/home/u/.gnupg/S.gpg-agent")
    expect(agent("dbus").sockets).toContain("/run/user/5/bus")
    expect(agent("docker").sockets).toContain("/var/run/docker.sock")
    expect(p.dropVariables).toEqual(expect.arrayContaining(["SSH_AUTH_SOCK", "SSH_AGENT_PID", "GPG_AGENT_INFO", "DOCKER_HOST"]))
    const open = compilePolicy({ agents: ["ssh"] }, "confined", { env, uid: 5 })
    expect(open.agents.find((a) => a.name === "ssh")).toEqual(expect.objectContaining({ allowed: true, sockets: [] }))
    expect(open.dropVariables).not.toContain("SSH_AUTH_SOCK")
    expect(open.rules.map((r) => r.glob).join(" ")).not.toContain("/tmp/ssh-abc")
    // A socket path a rule cannot name literally masks the nearest directory it can.
    const odd = compilePolicy({}, "confined", { env: { SSH_AUTH_SOCK: "/tmp/we*rd/agent.sock" }, uid: 5 })
    expect(odd.agents.find((a) => a.name === "ssh")!.sockets).toContain("/tmp")
    // Full access leaves every agent reachable and the network on.
    const full = compilePolicy({}, "full-access", { env, uid: 5 })
    expect(full.agents.every((a) => a.allowed)).toBe(true)
    expect(full.dropVariables).toEqual([])
    expect(full.network).toBe("host")
  })

  it("a credential store is removed by exclude; exclude and agents refuse names they do not know", () => {
    const p = compilePolicy({ exclude: ["~/.npmrc", "~/.ssh"] }, "confined", { env: {}, uid: 1 })
    expect(p.rules.map((r) => r.glob)).not.toContain("~/.npmrc")
    expect(p.rules.map((r) => r.glob)).not.toContain("~/.ssh")
    expect(p.rules.map((r) => r.glob)).toContain("~/.aws")
    invalid(() => compilePolicy({ exclude: ["~/.npmr"] }), /names no default rule/)
    invalid(() => compilePolicy({ agents: ["x" as "ssh"] }), /unknown agent 'x'/)
    invalid(() => compilePolicy({ network: "lan" as "host" }), /"none" or "host"/)
    expect(compilePolicy({ network: "host" }).fingerprint).not.toBe(compilePolicy({ network: "none" }).fingerprint)
  })

  it("user rules come first, in order, inaccessible unless marked read-only; pairs work as alist entries", () => {
    const p = compilePolicy({ protected: [[".env*"], ["docs/**", "read-only"], { glob: "/etc/app/*.key" }] })
    expect(p.rules.slice(0, 3).map((r) => [r.glob, r.access, r.base, r.relative])).toEqual([
      [".env*", "inaccessible", "workspace", ".env*"],
      ["docs/**", "read-only", "workspace", "docs/**"],
      ["/etc/app/*.key", "inaccessible", "absolute", "etc/app/*.key"]
    ])
    expect(p.rules).toHaveLength(compilePolicy().rules.length + 3)
    expect(compilePolicy({ defaults: false, protected: [["x"]] }).rules).toHaveLength(1)
  })

  it("full access drops the defaults and every rule not marked hard", () => {
    const p = compilePolicy({ protected: [{ glob: "~/.aws", hard: true }, { glob: "secrets" }] }, "full-access")
    expect(p.mode).toBe("full-access")
    expect(p.rules.map((r) => r.glob)).toEqual(["~/.aws"])
    expect(compilePolicy({}, "full-access").rules).toEqual([])
  })

  it("equal policies have equal fingerprints; any difference shows", () => {
    expect(compilePolicy({ protected: [["a"]] }).fingerprint).toBe(compilePolicy({ protected: [{ glob: "a" }] }).fingerprint)
    expect(compilePolicy({ protected: [["a"]] }).fingerprint).not.toBe(compilePolicy({ protected: [["a", "read-only"]] }).fingerprint)
    expect(compilePolicy().fingerprint).not.toBe(compilePolicy({}, "full-access").fingerprint)
  })

  it("refuses what it cannot apply faithfully, saying why", () => {
    invalid(() => compilePolicy({ protected: [[""]] }), /non-empty/)
    invalid(() => compilePolicy({ protected: [["a\0b"]] }), /NUL/)
    invalid(() => compilePolicy({ protected: [["a\\*b"]] }), /escapes/)
    invalid(() => compilePolicy({ protected: [["!secret"]] }), /negated/)
    invalid(() => compilePolicy({ protected: [["+(a|b)"]] }), /extglob/)
    invalid(() => compilePolicy({ protected: [["~bob/.ssh"]] }), /~user/)
    invalid(() => compilePolicy({ protected: [["a/../b"]] }), /'\.\.'/)
    invalid(() => compilePolicy({ protected: [["./a"]] }), /'\.'/)
    invalid(() => compilePolicy({ protected: [["a//b"]] }), /empty path segments/)
    invalid(() => compilePolicy({ protected: [["keys/"]] }), /empty path segments/)
    invalid(() => compilePolicy({ protected: [["~"]] }), /whole root/)
    invalid(() => compilePolicy({ protected: [["/"]] }), /whole root/)
    invalid(() => compilePolicy({ protected: [["a", "hidden" as never]] }), /access must be/)
    invalid(() => compilePolicy({ protected: [{ glob: "a", hard: "yes" as never }] }), /hard must be a boolean/)
    invalid(() => compilePolicy({ protected: [{ glob: "a", missing: "make" as never }] }), /missing must be/)
    invalid(() => compilePolicy({ protected: "a" as never }), /array/)
    invalid(() => compilePolicy(null as never), /object/)
    invalid(() => compilePolicy({}, "open" as never), /mode must be/)
  })

  it("names the one path a rule protects when it is determinable", () => {
    expect(determinablePath("**/.git")).toBe(".git")
    expect(determinablePath("a/**/b")).toBe("a/b")
    expect(determinablePath(".ssh")).toBe(".ssh")
    expect(determinablePath("*.pem")).toBeNull()
    expect(determinablePath("**")).toBeNull()
    expect(determinablePath("{a,b}/c")).toBeNull()
    expect(isLiteral(".git/hooks")).toBe(true)
    expect(isLiteral("**/.git")).toBe(false)
  })
})
