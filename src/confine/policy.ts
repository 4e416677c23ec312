/**
 * The protected-path policy: which paths a confined child may not write (`"read-only"`) or may not
 * see at all (`"inaccessible"`). Its public form is an ordered list from glob to protection; the
 * first rule that matches a path decides it.
 *
 * Defaults protect what an agent's child most often damages or steals: every `.git` in the
 * workspace is read-only (inspection stays possible, mutation needs an explicit grant), `~/.ssh`
 * and `~/.gnupg` are inaccessible (read-only would still expose the keys). A rule the user writes
 * is inaccessible unless it says read-only: a rule that names a path does so because it matters,
 * so its default must fail closed.
 *
 * Besides those, the credential stores (`~/.aws`, `~/.npmrc`, …: see `credentials.ts`) are
 * inaccessible and the agents' sockets (ssh-agent, gpg-agent, …) masked, with their variables
 * dropped from the child's environment; a policy removes a store with `exclude` and opens an agent
 * with `agents`. The network is `"none"` by default: a network namespace with loopback only; and
 * so are Unix sockets: the command cannot make one (the agents it is let reach need them, so
 * allowing one leaves Unix sockets to the file system).
 *
 * Full access drops every rule except the ones marked `hard`: the user chose to lift the
 * protections, and only a deny they said must survive does. It also leaves the agents reachable
 * and the network on (unless the policy says `network: "none"`).
 *
 * @since 0.1.0
 */
import picomatch from "picomatch"
import { type AgentName, agentNames, type AgentPlan, agentPlans, credentialStores, type Environment } from "./credentials.ts"
import { ConfinementError } from "./errors.ts"

/** @since 0.1.0 @category models */
export type Access = "read-only" | "inaccessible"

/**
 * One protected-path rule. `glob` is relative to each workspace (and each extra writable root),
 * or starts with `~/` (the home directory) or `/` (absolute). Glob syntax is picomatch's with
 * `dot` on: `*`, `?`, `[...]`, `**`, `{a,b}`; no negation, no extglobs, no `\` escapes, no `.` or
 * `..` segments.
 *
 * @since 0.1.0
 * @category models
 */
export interface ProtectedRule {
  readonly glob: string
  /** Default `"inaccessible"`. */
  readonly access?: Access | undefined
  /** Survives full access. */
  readonly hard?: boolean | undefined
  /**
   * What to do when the rule names one determinable path that does not exist yet beneath a
   * writable root: `"create"` (default) makes it, empty, so the child cannot create it and then
   * write in it; `"ignore"` leaves it missing.
   */
  readonly missing?: "create" | "ignore" | undefined
}

/** A rule, or `[glob, access]` as an association-list entry. @since 0.1.0 @category models */
export type RuleInput = ProtectedRule | readonly [glob: string, access?: Access]

/**
 * `"none"`: the child gets a network namespace of its own with only loopback (no route out, and
 * no abstract Unix socket of the host); `"host"`: the host's network.
 *
 * @since 0.1.0
 * @category models
 */
export type Network = "none" | "host"

/**
 * `"none"`: the command cannot make a Unix socket (socket(AF_UNIX) fails, by a seccomp filter), so
 * it reaches no process through one, whatever the file system shows; `"host"`: it can, and reaches
 * every socket it can name that the policy does not mask.
 *
 * @since 0.1.0
 * @category models
 */
export type UnixSockets = "none" | "host"

/** @since 0.1.0 @category models */
export interface PolicyConfig {
  /** User rules, in order; they come before the defaults, so a user rule decides first. */
  readonly protected?: ReadonlyArray<RuleInput> | undefined
  /** Add the default rules, credential stores and agent masks (default true). */
  readonly defaults?: boolean | undefined
  /** Default rules and credential stores to leave out, each by its glob exactly as listed. */
  readonly exclude?: ReadonlyArray<string> | undefined
  /** Agents whose sockets the child may reach, and whose variables it keeps (default none). */
  readonly agents?: ReadonlyArray<AgentName> | undefined
  /** Default `"none"` when confined, `"host"` in full access. */
  readonly network?: Network | undefined
  /**
   * Default `"none"` when confined and no agent is allowed (an allowed agent is reached through
   * its socket, so then `"host"`), `"host"` in full access.
   */
  readonly unixSockets?: UnixSockets | undefined
}

/** What a policy's agent masks are computed from (default: this process's). @since 0.1.0 @category models */
export interface PolicyEnvironment {
  readonly env?: Environment | undefined
  readonly uid?: number | undefined
}

/** @since 0.1.0 @category models */
export type Mode = "confined" | "full-access"

/** Where a rule's glob is rooted. @since 0.1.0 @category models */
export type Base = "workspace" | "home" | "absolute"

/** A rule after validation. @since 0.1.0 @category models */
export interface Rule {
  readonly glob: string
  readonly access: Access
  readonly hard: boolean
  readonly missing: "create" | "ignore"
  /** A default rule, a credential store, an agent's socket, a protection of git's, or the user's. */
  readonly source: "user" | "default" | "credential" | "agent" | "git"
  /** Why a built-in rule protects its path (empty for a user's). */
  readonly why: string
  readonly base: Base
  /** The glob with its `~/` or `/` prefix removed (for `absolute`, relative to `/`). */
  readonly relative: string
}

/** The rules a launch applies, in order; frozen. @since 0.1.0 @category models */
export interface CompiledPolicy {
  readonly mode: Mode
  readonly rules: ReadonlyArray<Rule>
  readonly network: Network
  readonly unixSockets: UnixSockets
  /** Every agent, masked or allowed. */
  readonly agents: ReadonlyArray<AgentPlan>
  /** Variables removed from the child's environment (the masked agents'). */
  readonly dropVariables: ReadonlyArray<string>
  /** Equal fingerprints mean equal policies. */
  readonly fingerprint: string
}

/** @since 0.1.0 */
export const defaultRules: ReadonlyArray<ProtectedRule> = Object.freeze([
  Object.freeze({ glob: "**/.git", access: "read-only" as const }),
  Object.freeze({ glob: "~/.ssh", access: "inaccessible" as const }),
  Object.freeze({ glob: "~/.gnupg", access: "inaccessible" as const })
])

const bad = (glob: unknown, why: string) => new ConfinementError("invalid-policy", `protected-path rule '${String(glob)}': ${why}`)

const validate = (input: RuleInput, source: Rule["source"], why = ""): Rule => {
  const rule: ProtectedRule = Array.isArray(input)
    ? { glob: input[0] as string, access: input[1] as Access | undefined }
    : (input as ProtectedRule)
  if (typeof rule !== "object" || rule === null) throw bad(rule, "a rule is an object or a [glob, access] pair")
  const glob = rule.glob
  if (typeof glob !== "string" || glob === "") throw bad(glob, "the glob must be a non-empty string")
  if (glob.includes("\0")) throw bad(glob, "the glob contains a NUL byte")
  if (glob.includes("\\")) throw bad(glob, "'\\' escapes are not supported in protected-path globs")
  const access = rule.access ?? "inaccessible"
  if (access !== "read-only" && access !== "inaccessible") {
    throw bad(glob, `access must be "read-only" or "inaccessible", got '${String(access)}'`)
  }
  const missing = rule.missing ?? "create"
  if (missing !== "create" && missing !== "ignore") throw bad(glob, `missing must be "create" or "ignore"`)
  if (rule.hard !== undefined && typeof rule.hard !== "boolean") throw bad(glob, "hard must be a boolean")
  let base: Base = "workspace"
  let relative = glob
  if (glob === "~" || glob.startsWith("~/")) {
    base = "home"
    relative = glob.slice(2)
  } else if (glob.startsWith("~")) {
    throw bad(glob, "only '~/' (the home directory) is understood, not '~user'")
  } else if (glob.startsWith("/")) {
    base = "absolute"
    relative = glob.slice(1)
  }
  if (relative === "") throw bad(glob, "a rule may not protect a whole root (the home directory, '/', or a workspace)")
  const segments = relative.split("/")
  if (segments.some((s) => s === "")) throw bad(glob, "empty path segments (a doubled or trailing '/') are not allowed")
  if (segments.some((s) => s === "." || s === "..")) throw bad(glob, "'.' and '..' segments are not allowed")
  const scan = picomatch.scan(relative)
  if (scan.negated || scan.negatedExtglob) throw bad(glob, "negated globs are not supported: a rule names what it protects")
  if (scan.isExtglob) throw bad(glob, "extglobs are not supported")
  return Object.freeze({ glob, access, hard: rule.hard === true, missing, source, why, base, relative })
}

const defaultWhy: Readonly<Record<string, string>> = {
  "**/.git": "a repository: its hooks and config run code the next time git runs, outside any sandbox",
  "~/.ssh": "SSH private keys",
  "~/.gnupg": "GnuPG private keys"
}

const agentList = (config: PolicyConfig): ReadonlySet<AgentName> => {
  const given = config.agents ?? []
  if (!Array.isArray(given)) throw new ConfinementError("invalid-policy", "agents must be an array of agent names")
  for (const a of given) {
    if (!agentNames.includes(a)) {
      throw new ConfinementError("invalid-policy", `unknown agent '${String(a)}': one of ${agentNames.join(", ")}`)
    }
  }
  return new Set(given)
}

/** A name a brace list can hold as it is: no glob character, no separator. */
const plainName = /^[A-Za-z0-9._-]+$/

/**
 * The agents' masks as rules: the sockets of one absolute directory in one rule (`dir/{a,b}`), so a
 * preparation pins and probes that directory once instead of once per socket; the rest, and every
 * `~/` path (the home directory is one anchor already), a rule each.
 */
const agentRules = (agents: ReadonlyArray<AgentPlan>): Array<{ glob: string; why: string }> => {
  const grouped = new Map<string, Array<{ name: string; agent: string }>>()
  const single: Array<{ glob: string; why: string }> = []
  for (const a of agents) {
    for (const socket of a.sockets) {
      const cut = socket.lastIndexOf("/")
      const dir = socket.slice(0, cut)
      const name = socket.slice(cut + 1)
      if (socket.startsWith("/") && plainName.test(name) && isLiteral(dir)) {
        const members = grouped.get(dir) ?? []
        if (!members.some((m) => m.name === name)) members.push({ name, agent: a.name })
        grouped.set(dir, members)
      } else {
        single.push({ glob: socket, why: `the ${a.name} agent: ${a.why}` })
      }
    }
  }
  const named = [...grouped].map(([dir, members]) => ({
    glob: members.length === 1 ? `${dir}/${members[0]!.name}` : `${dir}/{${members.map((m) => m.name).join(",")}}`,
    why: `the sockets of agents ${[...new Set(members.map((m) => m.agent))].join(", ")}`
  }))
  return [...named, ...single]
}

/** The built-in rules, minus `exclude`d ones (a name that matches none is refused: a typo must not pass). */
const builtIn = (config: PolicyConfig, allowed: ReadonlySet<AgentName>, environment: PolicyEnvironment) => {
  const exclude = config.exclude ?? []
  if (!Array.isArray(exclude)) throw new ConfinementError("invalid-policy", "exclude must be an array of default globs")
  const known = [...defaultRules.map((r) => r.glob), ...credentialStores.map((c) => c.glob)]
  for (const e of exclude) {
    if (!known.includes(e)) {
      throw new ConfinementError("invalid-policy", `exclude '${String(e)}' names no default rule or credential store (${known.join(", ")})`)
    }
  }
  const kept = (glob: string) => !exclude.includes(glob)
  const env = environment.env ?? process.env
  const agents = agentPlans(allowed, env, environment.uid ?? process.getuid?.() ?? 0)
  const rules = [
    ...defaultRules.filter((r) => kept(r.glob)).map((r) => validate(r, "default", defaultWhy[r.glob] ?? "")),
    ...credentialStores
      .filter((c) => kept(c.glob))
      .map((c) => validate({ glob: c.glob, access: "inaccessible", missing: "ignore" }, "credential", c.why)),
    ...agentRules(agents).map((r) => validate({ glob: r.glob, access: "inaccessible", missing: "ignore" }, "agent", r.why))
  ]
  return { rules, agents }
}

/**
 * Validates a policy and fixes the rules a launch in `mode` applies: the user's rules first, then
 * the defaults, the credential stores and the agents' sockets; in full access only the hard rules.
 * The agents' sockets come from `environment` (default this process's variables and uid).
 *
 * @since 0.1.0
 * @category constructors
 */
export const compilePolicy = (config: PolicyConfig = {}, mode: Mode = "confined", environment: PolicyEnvironment = {}): CompiledPolicy => {
  if (typeof config !== "object" || config === null) throw new ConfinementError("invalid-policy", "policy must be an object")
  if (mode !== "confined" && mode !== "full-access") {
    throw new ConfinementError("invalid-policy", `mode must be "confined" or "full-access", got '${String(mode)}'`)
  }
  const inputs = config.protected ?? []
  if (!Array.isArray(inputs)) throw new ConfinementError("invalid-policy", "protected must be an array of rules")
  const network = config.network ?? (mode === "full-access" ? "host" : "none")
  if (network !== "none" && network !== "host") {
    throw new ConfinementError("invalid-policy", `network must be "none" or "host", got '${String(network)}'`)
  }
  const user = inputs.map((r) => validate(r, "user"))
  const full = mode === "full-access"
  const allowed = agentList(config)
  const unixSockets = config.unixSockets ?? (full || allowed.size > 0 ? "host" : "none")
  if (unixSockets !== "none" && unixSockets !== "host") {
    throw new ConfinementError("invalid-policy", `unixSockets must be "none" or "host", got '${String(unixSockets)}'`)
  }
  if (unixSockets === "none" && allowed.size > 0 && !full) {
    throw new ConfinementError(
      "invalid-policy",
      `unixSockets "none" refuses every Unix socket, and the agents allowed (${[...allowed].join(", ")}) are reached through theirs`
    )
  }
  const defaults =
    config.defaults === false || full
      ? { rules: [], agents: agentPlans(new Set(agentNames), {}, 0) }
      : builtIn(config, allowed, environment)
  const all = [...user, ...defaults.rules]
  const rules = Object.freeze(full ? all.filter((r) => r.hard) : all)
  const agents = Object.freeze(defaults.agents)
  const dropVariables = Object.freeze(agents.filter((a) => !a.allowed).flatMap((a) => a.variables))
  const fingerprint = JSON.stringify([mode, rules, network, unixSockets, dropVariables])
  return Object.freeze({ mode, rules, network, unixSockets, agents, dropVariables, fingerprint })
}

/**
 * The policy with `rules` added after its own (built-in rules a launch option brings, such as
 * git's when git may write its repository), fingerprinted anew.
 *
 * @since 0.1.0
 */
export const withRules = (
  policy: CompiledPolicy,
  rules: ReadonlyArray<{ readonly rule: ProtectedRule; readonly source: Rule["source"]; readonly why: string }>
): CompiledPolicy => {
  const all = Object.freeze([...policy.rules, ...rules.map((r) => validate(r.rule, r.source, r.why))])
  const fingerprint = JSON.stringify([policy.mode, all, policy.network, policy.unixSockets, policy.dropVariables])
  return Object.freeze({ ...policy, rules: all, fingerprint })
}

/** What the plan says about the sandbox beyond its mounts. @since 0.1.0 @category models */
export interface SandboxPlan {
  readonly network: Network
  readonly unixSockets: UnixSockets
  readonly agents: ReadonlyArray<AgentPlan>
  /** The credential stores in force (present or not), each with why. */
  readonly credentials: ReadonlyArray<{ readonly glob: string; readonly why: string }>
  /** Variables removed from the child's environment. */
  readonly environment: { readonly dropped: ReadonlyArray<string> }
}

/** The plan's view of a compiled policy. @since 0.1.0 */
export const sandboxPlanOf = (policy: CompiledPolicy): SandboxPlan => ({
  network: policy.network,
  unixSockets: policy.unixSockets,
  agents: policy.agents,
  credentials: policy.rules.filter((r) => r.source === "credential").map((r) => ({ glob: r.glob, why: r.why })),
  environment: { dropped: policy.dropVariables }
})

/**
 * The one path a glob names when, with every `**` segment taken as zero segments, it is literal
 * (`**\/.git` names `.git`; `a/*.pem` names none): the path a child could create after launch.
 *
 * @since 0.1.0
 */
export const determinablePath = (glob: string): string | null => {
  const rest = glob.split("/").filter((s) => s !== "**")
  if (rest.length === 0) return null
  const joined = rest.join("/")
  return picomatch.scan(joined).isGlob ? null : joined
}

/** Whether a glob has no wildcard at all (a literal rule needs no walk). @since 0.1.0 */
export const isLiteral = (glob: string): boolean => !picomatch.scan(glob).isGlob
