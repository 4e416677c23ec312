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
 * Full access drops every rule except the ones marked `hard`: the user chose to lift the
 * protections, and only a deny they said must survive does.
 *
 * @since 0.1.0
 */
import picomatch from "picomatch"
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

/** @since 0.1.0 @category models */
export interface PolicyConfig {
  /** User rules, in order; they come before the defaults, so a user rule decides first. */
  readonly protected?: ReadonlyArray<RuleInput> | undefined
  /** Add the default rules (default true). */
  readonly defaults?: boolean | undefined
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
  readonly source: "user" | "default"
  readonly base: Base
  /** The glob with its `~/` or `/` prefix removed (for `absolute`, relative to `/`). */
  readonly relative: string
}

/** The rules a launch applies, in order; frozen. @since 0.1.0 @category models */
export interface CompiledPolicy {
  readonly mode: Mode
  readonly rules: ReadonlyArray<Rule>
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

const validate = (input: RuleInput, source: Rule["source"]): Rule => {
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
  return Object.freeze({ glob, access, hard: rule.hard === true, missing, source, base, relative })
}

/**
 * Validates a policy and fixes the rules a launch in `mode` applies: the user's rules first, then
 * the defaults; in full access only the hard rules.
 *
 * @since 0.1.0
 * @category constructors
 */
export const compilePolicy = (config: PolicyConfig = {}, mode: Mode = "confined"): CompiledPolicy => {
  if (typeof config !== "object" || config === null) throw new ConfinementError("invalid-policy", "policy must be an object")
  if (mode !== "confined" && mode !== "full-access") {
    throw new ConfinementError("invalid-policy", `mode must be "confined" or "full-access", got '${String(mode)}'`)
  }
  const inputs = config.protected ?? []
  if (!Array.isArray(inputs)) throw new ConfinementError("invalid-policy", "protected must be an array of rules")
  const user = inputs.map((r) => validate(r, "user"))
  const defaults = config.defaults === false ? [] : defaultRules.map((r) => validate(r, "default"))
  const all = [...user, ...defaults]
  const rules = Object.freeze(mode === "full-access" ? all.filter((r) => r.hard) : all)
  const fingerprint = JSON.stringify([mode, rules])
  return Object.freeze({ mode, rules, fingerprint })
}

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
