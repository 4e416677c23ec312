/**
 * Launch preparation and final validation: from a policy, grants and an execution target to a
 * plan a sandbox can apply, with every source the sandbox binds held open.
 *
 * 1. Canonical spellings of the workspace, writable roots, home and temporary root are captured
 *    once; from here on every path is an anchor plus a relative path walked without following.
 * 2. Discovery (fresh, never cached across launches).
 * 3. Creation targets: missing protected paths beneath writable roots, state roots and the
 *    private temporary root are made by one pinned `mkdirs` program per anchor.
 * 4. Final validation: every path the plan names is opened afresh, with no observation reused from
 *    discovery (a directory that became a link since is met and refused, never followed). A
 *    created directory must still be the one made; each anchor must still be what its path names.
 *
 * Steps 3 and 4 are one native trip for every anchor together (`prepareDirectories`): each anchor
 * pinned afresh there and refused if discovery saw another directory at its path, every creation
 * program run, and only then every path held. A test's `afterCreation` hook splits them in two
 * trips so it can act between.
 * 5. The layers and the sandbox's own rendering of them.
 *
 * A launch scope (see `scope.ts`) narrows one launch: the workspace is then not a writable root,
 * and the scope's files (each bound by itself) and directories are writable in its place.
 *
 * Any failure refuses the launch and undoes what was made; a cancelled preparation never launches.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import * as os from "node:os"
import * as path from "node:path"
import type { Strategy } from "../PinnedRoot.ts"
import { Anchors, canonicalOnce, nearestExisting } from "./anchors.ts"
import { assertWithinBwrapLimit, bwrapArguments, describeArguments, emptyFilesNeeded } from "./bwrap.ts"
import { byAnchor, cleanupAll, creationProgram, type CreationRequest, type Owned, ownedFrom } from "./creation.ts"
import { type DiscoveryLimits, discoverProtected } from "./discovery.ts"
import { ConfinementError } from "./errors.ts"
import type { Grant } from "./grants.ts"
import { grantPaths, type LayerInput, neededRestrictions, planLayers } from "./layers.ts"
import { PreparedLaunch } from "./launch.ts"
import { type Access, sandboxPlanOf } from "./policy.ts"
import { beneath, joinRaw, type RawPath, rawOf, relativeTo, shown, within } from "./raw.ts"
import { findBwrap } from "./available.ts"
import { renderSandboxProfile } from "./sandboxExec.ts"
import type { LaunchInputs, LaunchPlan } from "./plan.ts"
import { type LaunchScope, resolveScope } from "./scope.ts"
import { nextTurn } from "./turns.ts"
import { closeHeld, type HeldMember, prepareDirectories } from "./wire.ts"

export type { LaunchInputs, LaunchPlan } from "./plan.ts"

/** @since 0.1.0 @category models */
export interface PrepareOptions {
  /** Cancels the preparation; an aborted preparation never launches. */
  readonly signal?: AbortSignal | undefined
  /** Resolve strategy for every pinned anchor (default `"auto"`). */
  readonly strategy?: Strategy | undefined
  readonly limits?: DiscoveryLimits | undefined
  /** Which sandbox to plan for (default this platform). */
  readonly platform?: "linux" | "darwin" | undefined
  /** The bubblewrap executable (default `bwrap` found on `PATH`). */
  readonly bwrap?: string | undefined
  /** The sandbox launcher executable (default: beside the addon; see `launcher.ts`). */
  readonly launcher?: string | undefined
  /** Narrows what this launch may write in the workspace (see {@link LaunchScope}); ignored in full access. */
  readonly scope?: LaunchScope | undefined
  /**
   * Test hooks, run between the steps of preparation: they let a test change the file system at a
   * precise moment (a directory swapped for a link after discovery, say) instead of hoping a race
   * lands there. @internal
   */
  readonly hooks?:
    | {
        readonly afterDiscovery?: (() => Promise<void> | void) | undefined
        readonly afterCreation?: (() => Promise<void> | void) | undefined
      }
    | undefined
  /** Called once the command has been started with the grants that launch applied. @internal */
  readonly onLaunch?: ((applied: ReadonlyArray<Grant>) => void) | undefined
}

/** Equal fingerprints: the same policy, mode, grants and execution target. @since 0.1.0 */
export const fingerprintOf = (inputs: LaunchInputs): string =>
  JSON.stringify([
    inputs.policy.fingerprint,
    inputs.grants.map((g) => [g.id, g.path, g.access, g.scope, g.lifetime]),
    inputs.target.fingerprint
  ])

const cancelled = (signal: AbortSignal | undefined) => {
  if (signal?.aborted) throw new ConfinementError("cancelled", "launch preparation was cancelled", { cause: signal.reason })
}

interface HoldItem {
  readonly anchor: RawPath
  readonly path: RawPath
  readonly settle: (m: HeldMember) => void
}

/**
 * Prepares one launch. `source` is read now and again just before the command starts: a launch
 * whose inputs changed in between is refused.
 *
 * @since 0.1.0
 */
export const prepareLaunch = async (source: () => LaunchInputs, options: PrepareOptions = {}): Promise<PreparedLaunch> => {
  const signal = options.signal
  cancelled(signal)
  const inputs = source()
  const fingerprint = fingerprintOf(inputs)
  const { policy, target } = inputs
  const platform = options.platform ?? (process.platform === "darwin" ? "darwin" : process.platform === "linux" ? "linux" : null)
  if (platform === null) throw new ConfinementError("sandbox-unavailable", `no sandbox is known on ${process.platform}`)
  const bwrap = platform === "linux" ? await findBwrap(options.bwrap) : ""
  const confined = policy.mode === "confined"
  const strategy = options.strategy ?? "auto"
  const anchors = new Anchors(strategy)
  const fds: Array<number> = []
  const fdIdentities = new Map<number, string>()
  let owned: ReadonlyArray<Owned> = []
  try {
    // 1. Canonical spellings, captured once: asked all at once (each is a trip to the thread
    //    pool) and taken in order, so the first missing one is the one reported.
    const canonical = canonicalOnce()
    const mustExist = async (text: string, what: string): Promise<RawPath> => {
      const c = await canonical(text)
      if (c === null) throw new ConfinementError("invalid-target", `${what} '${text}' does not exist`)
      return c
    }
    const early = <A>(p: Promise<A>): Promise<A> => {
      p.catch(() => undefined)
      return p
    }
    const asked = {
      workspace: early(mustExist(target.workspace, "workspace")),
      extra: early(Promise.all(target.writable.map((w) => mustExist(w, "writable root")))),
      home: early(canonical(target.home)),
      cwd: early(mustExist(target.cwd, "working directory")),
      tempRoot: early(
        target.tempRoot !== null ? mustExist(target.tempRoot, "temporary root") : mustExist(os.tmpdir(), "the host's temporary directory")
      ),
      state: early(Promise.all(target.state.map((s) => nearestExisting(s.path, canonical))))
    }
    const workspace = await asked.workspace
    const extra = await asked.extra
    const resolved = options.scope === undefined ? null : resolveScope(options.scope, workspace)
    const scope = confined ? resolved : null
    const home = await asked.home
    const cwd = await asked.cwd
    const creations: Array<CreationRequest> = []
    let tempRoot: RawPath
    if (target.tempRoot !== null) {
      tempRoot = await asked.tempRoot
    } else {
      const host = await asked.tempRoot
      tempRoot = joinRaw(host, `pinnedfs-confine-${randomBytes(8).toString("hex")}`)
      creations.push({ path: tempRoot, anchor: host, mode: 0o700, purpose: "temp", permanent: false })
    }
    const stateRoots: Array<RawPath> = []
    for (const [i, n] of (await asked.state).entries()) {
      const s = target.state[i]!
      const p = n.missing.reduce((acc, m) => joinRaw(acc, rawOf(m)), n.anchor)
      stateRoots.push(p)
      if (n.missing.length > 0) creations.push({ path: p, anchor: n.anchor, mode: s.mode, purpose: "state", permanent: s.permanent })
    }
    cancelled(signal)

    // 2. Discovery.
    const discovery = await discoverProtected({
      rules: policy.rules,
      workspaces: [workspace, ...extra],
      home,
      tempRoot,
      anchors,
      limits: options.limits,
      signal
    })
    await options.hooks?.afterDiscovery?.()
    cancelled(signal)

    // A scope path inside a protected path stays as the protection says: never made writable.
    const protectedPaths = new Set<RawPath>([...discovery.candidates.map((c) => c.path), ...discovery.missing.map((m) => m.path)])
    const skipped: Array<{ path: string; why: string }> = []
    const unprotected = (p: RawPath): boolean => {
      for (let a = p; within(a, workspace); a = a.slice(0, a.lastIndexOf("/"))) {
        if (protectedPaths.has(a)) {
          skipped.push({ path: shown(p), why: `inside the protected path '${shown(a)}'` })
          return false
        }
        if (a === workspace) break
      }
      return true
    }
    const scopeDirectories = scope === null ? [] : scope.directories.filter(unprotected)
    const scopeFiles = scope === null ? [] : scope.files.filter(unprotected)

    // 3. Creation targets: a missing protected path the child could create, beneath a writable
    //    root that exists now (full access: beneath the directory the rule is rooted in). A
    //    scope's directories are ensured first, each through the workspace's handle, so a
    //    protected path beneath one is made inside it by the same program.
    for (const d of scopeDirectories)
      if (d !== workspace) creations.push({ path: d, anchor: workspace, mode: 0o755, purpose: "scope", permanent: false })
    const writableHere = scope === null ? [workspace, ...extra] : [...scopeDirectories, ...extra]
    const existingWritable = [...writableHere, ...(target.tempRoot !== null ? [tempRoot] : [])].sort((a, b) => b.length - a.length)
    const createdProtected: Array<{ path: RawPath; anchor: RawPath; access: Access; rule: number }> = []
    for (const m of discovery.missing) {
      const covering = confined ? existingWritable.find((w) => beneath(m.path, w)) : beneath(m.path, m.anchor) ? m.anchor : undefined
      if (covering === undefined) continue
      // Beneath a scope directory: made through the workspace's handle, in the same program.
      const anchor = scope !== null && within(covering, workspace) ? workspace : covering
      creations.push({ path: m.path, anchor, mode: m.access === "read-only" ? 0o755 : 0o700, purpose: "protected", permanent: false })
      createdProtected.push(m)
    }
    const creating = byAnchor(creations)

    // 4. Final validation: everything opened afresh from its anchor. The anchor of each path is
    //    the deepest one in play that contains it (a state root's is the directory it is made in),
    //    else the path itself.
    const inPlay: Array<RawPath> = [...discovery.anchors.keys(), ...creating.keys()]
    const anchorFor = (p: RawPath, fits: (p: RawPath, a: RawPath) => boolean, otherwise: RawPath): RawPath => {
      const found = inPlay.filter((a) => fits(p, a)).sort((a, b) => b.length - a.length)[0]
      if (found !== undefined) return found
      inPlay.push(otherwise)
      return otherwise
    }
    const items: Array<HoldItem> = []
    const ownedByPath = new Map<RawPath, Owned>()
    const slot = (m: HeldMember): number => {
      if (m.fd < 0) return -1
      fds.push(m.fd)
      fdIdentities.set(m.fd, m.identity)
      return fds.length - 1
    }
    const writable: Array<LayerInput["writable"][number]> = []
    const writableRoots = !confined
      ? []
      : scope === null
        ? [workspace, ...extra, tempRoot, ...stateRoots]
        : [...extra, tempRoot, ...stateRoots, ...scopeDirectories]
    const scopeHeld: Array<RawPath> = []
    if (scopeFiles.length > 0 && !inPlay.includes(workspace)) inPlay.push(workspace)
    for (const f of scopeFiles) {
      items.push({
        anchor: workspace,
        path: relativeTo(f, workspace),
        settle: (m) => {
          const named = `scope file '${shown(f)}'`
          if (m.status === "missing") return void skipped.push({ path: shown(f), why: "it does not exist" })
          if (m.status === "refused") {
            throw new ConfinementError(
              m.error?.refusal === "symlink" ? "link" : "validation-failed",
              `${named} cannot be validated: ${m.error?.message}`,
              { cause: m.error }
            )
          }
          if (m.type === "link") throw new ConfinementError("link", `${named} is a symbolic link: refused, not followed`)
          if (m.type !== "file") throw new ConfinementError("validation-failed", `${named} is not a regular file (${m.type})`)
          if (m.nlink > 1n)
            throw new ConfinementError("hard-link", `${named} has ${m.nlink} links: writing it would change its other names too`)
          writable.push({ path: f, slot: slot(m), why: "scope file, rewritable in place" })
          scopeHeld.push(f)
        }
      })
    }
    for (const w of writableRoots) {
      // Held from the deepest anchor already pinned that contains it (a state root from the
      // directory it was made in), else pinned itself.
      const anchor = anchorFor(w, within, w)
      items.push({
        anchor,
        path: relativeTo(w, anchor),
        settle: (m) => {
          if (m.status !== "held" || m.type !== "directory") {
            throw new ConfinementError("validation-failed", `writable root '${shown(w)}' is no longer a directory`, { cause: m.error })
          }
          writable.push({ path: w, slot: slot(m), why: "writable root" })
        }
      })
    }
    const restrictions: Array<LayerInput["restrictions"][number]> = []
    const planned: Array<LaunchPlan["restrictions"][number]> = []
    const restrict = (
      p: RawPath,
      anchor: RawPath,
      access: Access,
      rule: number | null,
      origin: LaunchPlan["restrictions"][number]["origin"]
    ) =>
      items.push({
        anchor,
        path: relativeTo(p, anchor),
        settle: (m) => {
          const mine = ownedByPath.get(p)
          const glob = rule === null ? null : policy.rules[rule]!.glob
          if (m.status === "refused") {
            throw new ConfinementError(
              m.error?.refusal === "symlink" ? "link" : "validation-failed",
              `protected path '${shown(p)}' cannot be validated: ${m.error?.message}`,
              {
                cause: m.error
              }
            )
          }
          if (m.status === "missing") {
            // A read-only or masked source that disappeared protects nothing: skipped. A directory
            // this launch made must still be there.
            if (mine) throw new ConfinementError("validation-failed", `protected directory '${shown(p)}' made for this launch disappeared`)
            return
          }
          if (m.type === "link") {
            throw new ConfinementError(
              "link",
              `protected path '${shown(p)}'${glob ? ` (rule '${glob}')` : ""} became a symbolic link during preparation: refused, not followed`
            )
          }
          if (mine && m.identity !== mine.identity) {
            throw new ConfinementError(
              "validation-failed",
              `protected directory '${shown(p)}' made for this launch was replaced (${mine.identity} is now ${m.identity})`
            )
          }
          if (m.type !== "directory" && m.nlink > 1n) {
            throw new ConfinementError(
              "hard-link",
              `protected file '${shown(p)}' has ${m.nlink} links: its other names would not be protected`
            )
          }
          restrictions.push({ path: p, access, type: m.type, slot: slot(m), why: glob === null ? "unreadable tree" : `rule '${glob}'` })
          planned.push({ path: shown(p), access, type: m.type, origin, rule: glob })
        }
      })
    // Only the protected paths the plan can apply are held: one nested beneath an already
    // read-only or masked path, with no grant between, narrows nothing (layers.ts). Planned in a
    // turn of its own: over many candidates, reading discovery's answer and planning are each a
    // long stretch of JavaScript.
    await nextTurn()
    const needed = neededRestrictions({
      mode: policy.mode,
      writable: [...writableRoots, ...scopeFiles],
      restrictions: discovery.candidates,
      grants: await grantPaths(inputs.grants, canonical),
      check: assertWithinBwrapLimit
    })
    for (const [i, c] of discovery.candidates.entries()) if (needed.has(i)) restrict(c.path, c.anchor, c.access, c.rule, c.origin)
    for (const m of createdProtected) restrict(m.path, m.anchor, m.access, m.rule, "created")

    const grants: Array<LayerInput["grants"][number]> = []
    const applied: Array<Grant> = []
    const unapplied: Array<{ grant: Grant; why: string }> = []
    for (const g of inputs.grants) {
      const parent = await canonical(path.dirname(g.path))
      if (parent === null) {
        unapplied.push({ grant: g, why: "its parent directory does not exist" })
        continue
      }
      const p = joinRaw(parent, rawOf(path.basename(g.path)))
      const anchor = anchorFor(p, beneath, parent)
      items.push({
        anchor,
        path: relativeTo(p, anchor),
        settle: (m) => {
          if (m.status !== "held") {
            unapplied.push({
              grant: g,
              why: m.status === "missing" ? "the path does not exist" : `it cannot be validated: ${m.error?.message}`
            })
          } else if (m.type === "link") {
            unapplied.push({ grant: g, why: "the path is a symbolic link (never followed)" })
          } else if (m.type === "directory" && g.scope !== "recursive") {
            unapplied.push({
              grant: g,
              why: "it names a directory: opening it would open the whole tree, which needs an approved recursive scope"
            })
          } else if (m.type !== "directory" && m.nlink > 1n) {
            unapplied.push({ grant: g, why: `the file has ${m.nlink} links` })
          } else {
            grants.push({ path: p, access: g.access, slot: slot(m), why: `grant ${g.id} (${g.access}, ${g.scope})` })
            applied.push(g)
          }
        }
      })
    }
    const holding = byAnchor(items)
    const program = (create: boolean, hold: boolean, expected: (a: RawPath) => string | null) =>
      [...new Set([...creating.keys(), ...holding.keys()])].map((anchor) => ({
        anchor,
        expected: expected(anchor),
        create: create ? creationProgram(anchor, creating.get(anchor) ?? []) : [],
        hold: hold ? (holding.get(anchor) ?? []).map((i) => i.path) : []
      }))
    const seen = (a: RawPath) => discovery.anchors.get(a) ?? null
    const run = async (create: boolean, hold: boolean, expected: (a: RawPath) => string | null) => {
      const requested = program(create, hold, expected)
      const answers = await prepareDirectories(strategy, requested)
      return requested.map((r, i) => ({ anchor: r.anchor, answer: answers[i]! }))
    }
    const split = options.hooks?.afterCreation
    let outcome = await run(true, split === undefined, seen)
    // Everything made becomes ours before anything can throw.
    owned = outcome.flatMap(({ anchor, answer }) => ownedFrom(anchor, creating.get(anchor) ?? [], answer))
    if (split !== undefined && outcome.every((o) => o.answer.error === null && o.answer.stopped === null)) {
      await split()
      const pinned = new Map(outcome.map((o) => [o.anchor, o.answer.identity]))
      outcome = await run(false, true, (a) => pinned.get(a) || seen(a))
    }
    for (const o of owned) ownedByPath.set(o.path, o)
    // Every descriptor too.
    const pending = outcome.flatMap(({ anchor, answer }) =>
      answer.held === null ? [] : (holding.get(anchor) ?? []).map((item, j) => ({ item, m: answer.held!.members[j]! }))
    )
    const taken = new Set<number>()
    try {
      for (const { anchor, answer } of outcome) {
        const why = answer.error ?? answer.stopped
        if (why !== null && (creating.get(anchor)?.length ?? 0) > 0) {
          throw new ConfinementError("creation-failed", `a protected or state directory could not be made: ${why.message}`, {
            cause: why
          })
        }
        const failure = why ?? answer.holdError
        if (failure !== null) {
          throw new ConfinementError("validation-failed", `final validation failed: ${failure.message}`, { cause: failure })
        }
      }
      cancelled(signal)
      await nextTurn()
      for (const { item, m } of pending) {
        const before = fds.length
        item.settle(m)
        if (fds.length > before) taken.add(m.fd)
      }
    } finally {
      for (const { m } of pending) if (m.fd >= 0 && !taken.has(m.fd)) closeHeld(m.fd)
    }
    const identities = new Map<RawPath, string>(discovery.anchors)
    for (const { anchor, answer } of outcome) if (answer.identity !== "") identities.set(anchor, answer.identity)
    cancelled(signal)

    // 5. Layers and their rendering, each step in its own turn of the loop.
    await nextTurn()
    const layers = planLayers({ mode: policy.mode, writable, restrictions, grants })
    for (const s of layers.unused) {
      const fd = fds[s]
      if (fd !== undefined && fd >= 0) {
        closeHeld(fd)
        fds[s] = -1
      }
    }
    await nextTurn()
    const args = bwrapArguments({
      mode: policy.mode,
      network: policy.network,
      layers: layers.layers,
      remountReadOnly: layers.remountReadOnly,
      cwd
    })
    const plan: LaunchPlan = {
      ...sandboxPlanOf(policy),
      mode: policy.mode,
      workspace: shown(workspace),
      cwd: shown(cwd),
      tempRoot: shown(tempRoot),
      writableRoots: writable.map((w) => shown(w.path)),
      scope: scope === null ? null : { files: scopeHeld.sort().map(shown), directories: scopeDirectories.map(shown), skipped },
      restrictions: planned.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
      created: owned.map((o) => ({ path: shown(o.path), identity: o.identity, purpose: o.purpose, permanent: o.permanent })),
      grants: { applied, unapplied },
      layers: layers.layers.map((l) => ({
        op: l.op,
        path: shown(l.path),
        detail:
          l.op === "bind"
            ? l.writable
              ? "read-write"
              : "read-only"
            : l.op === "mask-directory"
              ? `empty, mode ${l.perms.toString(8).padStart(4, "0")}`
              : "empty, mode 0000",
        why: l.why
      })),
      discovery: discovery.reports,
      idleRules: discovery.idle.map((i) => ({ rule: policy.rules[i.rule]!.glob, why: i.why })),
      sandbox:
        platform === "linux"
          ? { kind: "bubblewrap", executable: bwrap, arguments: describeArguments(args, shown) }
          : { kind: "sandbox-exec", profile: renderSandboxProfile({ mode: policy.mode, layers: layers.layers }) }
    }
    return new PreparedLaunch({
      plan,
      platform,
      bwrap,
      args,
      fds,
      fdIdentities,
      emptyFiles: emptyFilesNeeded(layers.layers),
      owned,
      anchors,
      identities,
      source,
      fingerprint,
      fingerprintOf,
      strategy,
      tempRoot,
      cwd,
      applied,
      signal,
      onLaunch: options.onLaunch,
      launcher: options.launcher
    })
  } catch (e) {
    await cleanupAll(
      owned,
      anchors,
      strategy,
      fds.filter((fd) => fd >= 0).map((fd) => ({ fd, identity: fdIdentities.get(fd) ?? "" }))
    ).catch(() => undefined)
    await anchors.close()
    if (e instanceof ConfinementError) throw e
    if (signal?.aborted) throw new ConfinementError("cancelled", "launch preparation was cancelled", { cause: e })
    throw new ConfinementError("validation-failed", `launch preparation failed: ${(e as Error).message}`, { cause: e })
  }
}
