/**
 * The glob compiler and discovery: turns the policy's rules into concrete paths, fresh for every
 * launch. Rules are grouped by the directory they are rooted in (each workspace, the home
 * directory, the canonical literal prefix of an absolute rule): one native walk per such anchor,
 * all of them in parallel, off the JavaScript thread, cancellable. A literal rule, and the one path
 * a `**`-rule names at its root, are probed directly in the same trip, so a rule can name a path
 * inside a tree another rule's match pruned.
 *
 * A walk that fails, or stops at a bound, refuses the launch: a partial list of protected paths
 * is not a list of protected paths.
 *
 * @since 0.1.0
 */
import picomatch from "picomatch"
import { PinnedFsError } from "../internal/errors.ts"
import { type Anchors, nearestExisting } from "./anchors.ts"
import { ConfinementError } from "./errors.ts"
import { type Access, determinablePath, isLiteral, type Rule } from "./policy.ts"
import { beneath, joinRaw, type RawPath, rawOf, relativeTo, shown } from "./raw.ts"
import { nextTurn } from "./turns.ts"
import { type DiscoverAnswer, discover, type EntryType } from "./wire.ts"

/** Bounds of one discovery walk. @since 0.1.0 @category models */
export interface DiscoveryLimits {
  /** Most directory entries read, per anchor (default 1,000,000). */
  readonly maxEntries?: number | undefined
  /** Most matches, per anchor (default 100,000). */
  readonly maxMatches?: number | undefined
  /** Deepest directory entered, per anchor (default 256). */
  readonly maxDepth?: number | undefined
}

/** A protected path found by discovery. @since 0.1.0 @category models */
export interface Candidate {
  readonly path: RawPath
  readonly anchor: RawPath
  readonly access: Access
  /** Index of the deciding rule, or null for an unreadable tree protected whole. */
  readonly rule: number | null
  readonly origin: "match" | "probe" | "unreadable" | "pointer"
  readonly type: EntryType
  /** What discovery found there ("dev:ino"; null when not known): the final validation must find the same. */
  readonly identity?: string | null | undefined
}

/** A determinable protected path that does not exist. @since 0.1.0 @category models */
export interface Missing {
  readonly path: RawPath
  readonly anchor: RawPath
  readonly rule: number
  readonly access: Access
}

/** What one anchor's walk did. @since 0.1.0 @category models */
export interface DiscoveryReport {
  readonly anchor: string
  readonly identity: string
  /** False for an anchor equal to the temporary root: probed, never walked. */
  readonly walked: boolean
  readonly patterns: number
  readonly directories: number
  readonly entries: number
  readonly matches: number
  readonly skipped: ReadonlyArray<string>
}

/** @since 0.1.0 @category models */
export interface Discovery {
  readonly candidates: ReadonlyArray<Candidate>
  readonly missing: ReadonlyArray<Missing>
  readonly reports: ReadonlyArray<DiscoveryReport>
  /** Rules that name nothing here (a home or absolute prefix that does not exist). */
  readonly idle: ReadonlyArray<{ readonly rule: number; readonly why: string }>
  /** Each anchor walked or probed, with the identity it had: a launch rechecks them before it starts. */
  readonly anchors: ReadonlyMap<RawPath, string>
  /** Mounts met inside the trees walked (each walked as an anchor of its own). */
  readonly mounts: ReadonlyArray<RawPath>
}

export interface DiscoveryInput {
  readonly rules: ReadonlyArray<Rule>
  /** Canonical workspaces (and extra writable roots): where relative rules are rooted. */
  readonly workspaces: ReadonlyArray<RawPath>
  /** Canonical home, or null when it does not exist. */
  readonly home: RawPath | null
  /** Canonical temporary root, never walked. */
  readonly tempRoot: RawPath | null
  readonly anchors: Anchors
  readonly limits?: DiscoveryLimits | undefined
  readonly signal?: AbortSignal | undefined
}

interface Group {
  readonly anchor: RawPath
  readonly patterns: Array<{ glob: RawPath; rule: number }>
  readonly probes: Array<{ path: RawPath; rule: number }>
  /** The anchor is a mount at these components beneath the directory the patterns are relative to. */
  readonly prefix: ReadonlyArray<RawPath>
}

const strictness = { "read-only": 1, inaccessible: 2 } as const

/** Where each rule is rooted: anchor and the glob relative to it. */
const groupRules = async (input: DiscoveryInput): Promise<{ groups: Array<Group>; idle: Discovery["idle"] }> => {
  const groups = new Map<RawPath, Group>()
  const idle: Array<{ rule: number; why: string }> = []
  const group = (anchor: RawPath) => {
    let g = groups.get(anchor)
    if (!g) groups.set(anchor, (g = { anchor, patterns: [], probes: [], prefix: [] }))
    return g
  }
  const place = (anchor: RawPath, relative: string, index: number) => {
    const g = group(anchor)
    if (isLiteral(relative)) {
      g.probes.push({ path: rawOf(relative), rule: index })
      return
    }
    g.patterns.push({ glob: rawOf(relative), rule: index })
    const literal = determinablePath(relative)
    if (literal !== null) g.probes.push({ path: rawOf(literal), rule: index })
  }
  for (const [index, rule] of input.rules.entries()) {
    switch (rule.base) {
      case "workspace":
        for (const w of input.workspaces) place(w, rule.relative, index)
        break
      case "home":
        if (input.home === null) idle.push({ rule: index, why: "the home directory does not exist" })
        else place(input.home, rule.relative, index)
        break
      case "absolute": {
        // The literal directory prefix is canonicalized like a workspace path (a link there is the
        // spelling the user chose); what follows it is matched without following anything.
        const literal = isLiteral(rule.relative)
        const segments = rule.relative.split("/")
        const scan = picomatch.scan(rule.relative)
        const prefix = literal ? segments.slice(0, -1).join("/") : scan.base
        const rest = literal ? segments[segments.length - 1]! : scan.glob
        const { anchor, missing } = await nearestExisting(`/${prefix}`)
        place(anchor, [...missing, rest].join("/"), index)
        break
      }
    }
  }
  return { groups: [...groups.values()], idle }
}

const refusal = (reason: ConfinementError["reason"], message: string, cause?: unknown) =>
  new ConfinementError(reason, message, cause === undefined ? undefined : { cause })

/** One anchor's walk: its answer, or why it failed (a refusal). */
const walkGroup = async (input: DiscoveryInput, g: Group) => {
  const root = await input.anchors.pin(g.anchor)
  const limits = input.limits ?? {}
  const walked = g.anchor !== input.tempRoot
  const skip = input.tempRoot !== null && beneath(input.tempRoot, g.anchor) ? [relativeTo(input.tempRoot, g.anchor)] : []
  try {
    const answer = await discover(
      root,
      {
        maxEntries: limits.maxEntries ?? 1_000_000,
        maxMatches: limits.maxMatches ?? 100_000,
        maxDepth: limits.maxDepth ?? 256,
        patterns: walked ? g.patterns.map((p) => ({ glob: p.glob, access: input.rules[p.rule]!.access })) : [],
        skip,
        probes: g.probes.map((p) => p.path),
        prefix: g.prefix
      },
      input.signal
    )
    return { g, answer, walked }
  } catch (e) {
    if (input.signal?.aborted || (e instanceof PinnedFsError && e.code === "ECANCELED")) {
      throw refusal("cancelled", "launch preparation was cancelled during discovery", e)
    }
    throw refusal("discovery-failed", `discovery of protected paths under '${shown(g.anchor)}' failed: ${(e as Error).message}`, e)
  }
}

/** The walk of a mount met inside `g`'s tree: the same rules, stepped to where the mount stands. */
const mountGroup = (g: Group, mount: RawPath): Group => {
  const at = joinRaw(g.anchor, mount)
  const inside = (p: RawPath) => beneath(joinRaw(g.anchor, p), at)
  return {
    anchor: at,
    patterns: g.patterns,
    probes: g.probes.filter((p) => inside(p.path)).map((p) => ({ path: relativeTo(joinRaw(g.anchor, p.path), at), rule: p.rule })),
    prefix: [...g.prefix, ...mount.split("/")]
  }
}

/** Most anchors one discovery walks, mounts met inside them included. */
const maxAnchors = 512

/**
 * Walks every anchor the rules need and answers the protected paths, the determinable ones that
 * are missing, and what each walk did. A mount met inside an anchor's tree is walked as an anchor
 * of its own, with the same rules (the walk itself never crosses a mount).
 *
 * @since 0.1.0
 */
export const discoverProtected = async (input: DiscoveryInput): Promise<Discovery> => {
  const { groups, idle } = await groupRules(input)
  const found = new Found(input)
  let round = groups
  let walkedAnchors = 0
  while (round.length > 0) {
    walkedAnchors += round.length
    if (walkedAnchors > maxAnchors) {
      throw refusal("discovery-truncated", `discovery met more than ${maxAnchors} directories and mounts to walk: refused`)
    }
    const results = await Promise.all(round.map((g) => walkGroup(input, g)))
    const next: Array<Group> = []
    for (const result of results) {
      // One anchor's answer per turn of the loop.
      await nextTurn()
      for (const m of found.absorb(result)) next.push(mountGroup(result.g, m))
    }
    round = next
  }
  return found.done(idle)
}

/** What the walks found, merged: the first rule decides, an unreadable tree only makes it stricter. */
class Found {
  private readonly byPath = new Map<RawPath, Candidate>()
  private readonly missing = new Map<RawPath, Missing>()
  private readonly reports: Array<DiscoveryReport> = []
  private readonly anchors = new Map<RawPath, string>()
  private readonly mounts: Array<RawPath> = []
  private readonly input: DiscoveryInput

  constructor(input: DiscoveryInput) {
    this.input = input
  }

  private add(c: Candidate): void {
    const had = this.byPath.get(c.path)
    if (!had) return void this.byPath.set(c.path, c)
    if (had.rule !== null && c.rule !== null) {
      if (c.rule < had.rule) this.byPath.set(c.path, c)
    } else if (strictness[c.access] > strictness[had.access]) {
      this.byPath.set(c.path, { ...had, access: c.access })
    }
  }

  /** Takes one walk's answer in; answers the mounts it met (anchor-relative), to be walked next. */
  absorb({ g, answer, walked }: Awaited<ReturnType<typeof walkGroup>>): ReadonlyArray<RawPath> {
    const rules = this.input.rules
    this.anchors.set(g.anchor, answer.anchor)
    if (answer.unstable !== null) {
      throw refusal(
        "moved",
        `'${shown(joinRaw(g.anchor, answer.unstable))}' changed while discovery walked it (something in it was renamed): discovered again`
      )
    }
    if (answer.truncated !== null) {
      throw refusal(
        "discovery-truncated",
        `discovery under '${shown(g.anchor)}' stopped at its ${answer.truncated} bound (${answer.entries} entries, ${answer.matches.length} matches): ` +
          `a partial list of protected paths is refused`
      )
    }
    const patterns = walked ? g.patterns : []
    for (const m of answer.matches) {
      const rule = patterns[m.pattern]!.rule
      const path = joinRaw(g.anchor, m.path)
      if (m.type === "link") {
        throw refusal(
          "link",
          `protected path '${shown(path)}' (rule '${rules[rule]!.glob}') is a symbolic link: protect what it names instead`
        )
      }
      this.add({ path, anchor: g.anchor, access: rules[rule]!.access, rule, origin: "match", type: m.type, identity: m.identity })
    }
    for (const u of answer.unreadable) {
      if (u.access === "none") continue
      this.add({ path: joinRaw(g.anchor, u.path), anchor: g.anchor, access: u.access, rule: null, origin: "unreadable", type: "directory" })
    }
    for (const [i, p] of answer.probes.entries()) this.probe(g, g.probes[i]!, p)
    for (const m of answer.mounts) this.mounts.push(joinRaw(g.anchor, m))
    this.reports.push({
      anchor: shown(g.anchor),
      identity: answer.anchor,
      walked,
      patterns: patterns.length,
      directories: answer.directories,
      entries: answer.entries,
      matches: answer.matches.length,
      skipped: answer.skipped.map((s) => shown(joinRaw(g.anchor, s)))
    })
    return answer.mounts
  }

  private probe(g: Group, probe: Group["probes"][number], p: DiscoverAnswer["probes"][number]): void {
    const rule = this.input.rules[probe.rule]!
    const path = joinRaw(g.anchor, probe.path)
    if (p.status === "beneath") return // probed again from the mount it lies in
    if (p.status === "refused") {
      const reason = p.error.refusal === "symlink" ? "link" : "discovery-failed"
      throw refusal(reason, `protected path '${shown(path)}' (rule '${rule.glob}') cannot be checked: ${p.error.message}`, p.error)
    }
    if (p.status === "present") {
      if (p.type === "link") {
        throw refusal("link", `protected path '${shown(path)}' (rule '${rule.glob}') is a symbolic link: protect what it names instead`)
      }
      this.add({ path, anchor: g.anchor, access: rule.access, rule: probe.rule, origin: "probe", type: p.type, identity: p.identity })
    } else if (p.errno === 2 /* ENOENT */ && rule.missing === "create" && !this.missing.has(path)) {
      this.missing.set(path, { path, anchor: g.anchor, rule: probe.rule, access: rule.access })
    }
  }

  done(idle: Discovery["idle"]): Discovery {
    const candidates = [...this.byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
    const missing = [...this.missing.values()].filter((m) => !this.byPath.has(m.path))
    return { candidates, missing, reports: this.reports, idle, anchors: this.anchors, mounts: this.mounts }
  }
}
