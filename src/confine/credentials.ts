/**
 * Credentials a confined child cannot reach by default: the files that hold them (credential
 * stores) and the agents that use them on request (sockets). A masked `~/.ssh` keeps the keys
 * unreadable, but an SSH agent still signs with them for anyone who can connect to its socket, and
 * a Unix socket is reachable through a read-only mount: connecting is not writing. So an agent's
 * socket is masked like a file (an empty file in its place refuses every connection), and the
 * variables that name it are dropped from the child's environment. Each agent is opened again
 * only by name (`agents: ["ssh"]`, `--allow-agent ssh`).
 *
 * Container daemons' sockets are in the list too: whoever reaches `docker.sock` starts a
 * container with the host's file system mounted writable, which undoes every mount of the sandbox.
 *
 * @since 0.1.0
 */
import * as path from "node:path"
import picomatch from "picomatch"

/** An agent whose socket a child may be let reach. @since 0.1.0 @category models */
export type AgentName = "ssh" | "gpg" | "keyring" | "dbus" | "systemd" | "docker" | "podman"

/** One default credential store: a `~/` path, inaccessible, and why. @since 0.1.0 @category models */
export interface CredentialStore {
  readonly glob: string
  readonly why: string
}

/**
 * The credential stores inaccessible by default, each with why. A policy removes one with
 * `exclude: [glob]` and adds others as ordinary rules.
 *
 * @since 0.1.0
 */
export const credentialStores: ReadonlyArray<CredentialStore> = Object.freeze(
  (
    [
      ["~/.aws", "AWS CLI and SDK access keys, SSO and session token caches"],
      ["~/.azure", "Azure CLI access and refresh tokens"],
      ["~/.config/gcloud", "Google Cloud SDK credentials and access tokens"],
      ["~/.oci", "Oracle Cloud API signing keys"],
      ["~/.kube", "kubeconfig: cluster endpoints with client certificates or bearer tokens"],
      ["~/.docker/config.json", "container registry logins (auths) of docker and podman"],
      ["~/.npmrc", "npm registry tokens (_authToken)"],
      ["~/.pypirc", "PyPI upload tokens"],
      ["~/.gem/credentials", "RubyGems API key"],
      ["~/.cargo/credentials.toml", "crates.io token"],
      ["~/.cargo/credentials", "crates.io token (older cargo)"],
      ["~/.m2/settings-security.xml", "Maven's master password, which decrypts the server passwords in settings.xml"],
      ["~/.netrc", "logins and passwords for hosts, used by curl, git, pip and ftp"],
      ["~/.git-credentials", "git's store helper: remote passwords and tokens in plain text"],
      ["~/.config/git/credentials", "git's store helper, XDG location"],
      ["~/.config/gh", "GitHub CLI OAuth tokens (hosts.yml)"],
      ["~/.config/hub", "hub's GitHub token"],
      ["~/.terraform.d/credentials.tfrc.json", "Terraform Cloud and Enterprise API tokens"],
      ["~/.vault-token", "HashiCorp Vault token"],
      ["~/.config/rclone/rclone.conf", "rclone's cloud storage logins"],
      ["~/.s3cfg", "s3cmd access keys"],
      ["~/.boto", "gsutil and boto access keys"],
      ["~/.password-store", "pass: the password store (encrypted, and the key is an agent away)"],
      ["~/.local/share/keyrings", "GNOME keyring files"]
    ] as const
  ).map(([glob, why]) => Object.freeze({ glob, why }))
)

/** One agent: what names its socket, where it puts the socket otherwise, and why it is masked. */
interface Agent {
  readonly name: AgentName
  readonly why: string
  /** Variables dropped from the child's environment (the socket's address and related). */
  readonly variables: ReadonlyArray<string>
  /** The socket (or socket directory) a variable names, from its value. */
  readonly named: (env: Environment) => ReadonlyArray<string>
  /** Where the agent puts its socket when nothing says: `~/` or absolute globs. */
  readonly places: (where: Places) => ReadonlyArray<string>
}

/** @since 0.1.0 @category models */
export type Environment = Readonly<Record<string, string | undefined>>

interface Places {
  /** `$XDG_RUNTIME_DIR`, else `/run/user/UID`. */
  readonly runtime: string
  /** The temporary directories an agent would use: `/tmp`, and `$TMPDIR` when it is elsewhere. */
  readonly temporary: ReadonlyArray<string>
  readonly env: Environment
}

const value = (env: Environment, name: string): ReadonlyArray<string> => {
  const v = env[name]
  return v === undefined || v === "" ? [] : [v]
}

/** A `unix:` address's path (`unix:path=/run/user/1000/bus,guid=…`, `unix:///run/docker.sock`). */
const unixPath = (address: string): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (const part of address.split(";")) {
    const url = /^unix:\/\/(\/.*)$/.exec(part)
    if (url) out.push(url[1]!)
    const dbus = /^unix:(?:.*,)?path=([^,]+)/.exec(part)
    if (dbus) out.push(decodeURIComponent(dbus[1]!))
  }
  return out
}

const agents: ReadonlyArray<Agent> = [
  {
    name: "ssh",
    why: "ssh-agent signs with the keys ~/.ssh keeps hidden, for anyone who can connect to it",
    variables: ["SSH_AUTH_SOCK", "SSH_AGENT_PID"],
    named: (env) => value(env, "SSH_AUTH_SOCK"),
    places: (w) => [
      ...w.temporary.map((t) => `${t}/ssh-*`),
      `${w.runtime}/ssh-agent.socket`,
      `${w.runtime}/openssh_agent`,
      `${w.runtime}/gcr`,
      "~/.ssh/agent",
      "~/.1password/agent.sock",
      "~/.bitwarden-ssh-agent.sock"
    ]
  },
  {
    name: "gpg",
    why: "gpg-agent decrypts and signs with the keys ~/.gnupg keeps hidden (and serves SSH keys too)",
    variables: ["GPG_AGENT_INFO"],
    named: (env) => value(env, "GPG_AGENT_INFO").map((v) => v.split(":")[0]!),
    places: (w) => [`${w.runtime}/gnupg`, "~/.gnupg/S.*", ...value(w.env, "GNUPGHOME").map((h) => `${h}/S.*`)]
  },
  {
    name: "keyring",
    why: "gnome-keyring hands out stored passwords and serves SSH keys",
    variables: ["GNOME_KEYRING_CONTROL"],
    named: (env) => value(env, "GNOME_KEYRING_CONTROL"),
    places: (w) => [`${w.runtime}/keyring`]
  },
  {
    name: "dbus",
    why: "the session bus reaches the Secret Service (stored passwords) and every desktop service",
    variables: ["DBUS_SESSION_BUS_ADDRESS"],
    named: (env) => value(env, "DBUS_SESSION_BUS_ADDRESS").flatMap(unixPath),
    places: (w) => [`${w.runtime}/bus`]
  },
  {
    name: "systemd",
    why: "the user's systemd manager starts any command as a service, outside the sandbox (systemctl --user, systemd-run --user)",
    variables: [],
    named: () => [],
    places: (w) => [`${w.runtime}/systemd`]
  },
  {
    name: "docker",
    why: "the Docker daemon starts containers with any host directory mounted writable: the whole sandbox undone",
    variables: ["DOCKER_HOST"],
    named: (env) => value(env, "DOCKER_HOST").flatMap(unixPath),
    places: (w) => ["/run/docker.sock", "/var/run/docker.sock", `${w.runtime}/docker.sock`, "~/.docker/run/docker.sock"]
  },
  {
    name: "podman",
    why: "the Podman service starts containers with any host directory mounted writable",
    variables: ["CONTAINER_HOST"],
    named: (env) => value(env, "CONTAINER_HOST").flatMap(unixPath),
    places: (w) => ["/run/podman", `${w.runtime}/podman`]
  }
]

/** Every agent's name, in the order the plan lists them. @since 0.1.0 */
export const agentNames: ReadonlyArray<AgentName> = Object.freeze(agents.map((a) => a.name))

/** An agent as a launch treats it. @since 0.1.0 @category models */
export interface AgentPlan {
  readonly name: AgentName
  readonly why: string
  /** Opened by the policy (`agents`): its sockets reachable, its variables kept. */
  readonly allowed: boolean
  readonly variables: ReadonlyArray<string>
  /** The paths and globs masked for it (none when allowed). */
  readonly sockets: ReadonlyArray<string>
}

/**
 * The deepest ancestor of an absolute `p` (or `p` itself) with no glob character, for a socket a
 * variable names: a rule names it literally when it can, else masks the nearest directory it can
 * name (never `/`).
 */
const nameable = (p: string): string | null => {
  for (let at = path.resolve(p); at !== "/"; at = path.dirname(at)) {
    if (!at.includes("\\") && !picomatch.scan(at).isGlob) return at
  }
  return null
}

/** A place whose directory part is literal (a `$TMPDIR` with a `*` in it names no place a rule can). */
const literalDirectory = (place: string): boolean => {
  const dir = place.slice(0, place.lastIndexOf("/"))
  return !dir.includes("\\") && !picomatch.scan(dir).isGlob
}

/**
 * What each agent is given in a launch: masked sockets (paths a variable names, and each agent's
 * usual places) unless `allowed` names it.
 *
 * @since 0.1.0
 */
export const agentPlans = (allowed: ReadonlySet<AgentName>, env: Environment, uid: number): ReadonlyArray<AgentPlan> => {
  const runtime = env["XDG_RUNTIME_DIR"]?.startsWith("/") ? path.resolve(env["XDG_RUNTIME_DIR"]) : `/run/user/${uid}`
  const tmp = env["TMPDIR"]?.startsWith("/") ? path.resolve(env["TMPDIR"]) : "/tmp"
  const where: Places = { runtime, temporary: tmp === "/tmp" ? ["/tmp"] : ["/tmp", tmp], env }
  return agents.map((a) => {
    const open = allowed.has(a.name)
    const named = a
      .named(env)
      .filter((p) => p.startsWith("/"))
      .flatMap((p) => nameable(p) ?? [])
    const places = a.places(where).filter(literalDirectory)
    const sockets = open ? [] : [...new Set([...named, ...places.map((p) => (p.startsWith("~/") ? p : path.resolve(p)))])]
    return Object.freeze({ name: a.name, why: a.why, allowed: open, variables: a.variables, sockets: Object.freeze(sockets) })
  })
}
