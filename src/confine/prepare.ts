/**
 * Launch preparation and final validation: from a policy, grants and an execution target to a
 * plan a sandbox can apply, with every source the sandbox binds held open.
 *
 * 1. Canonical spellings of the workspace, writable roots, home and temporary root are captured
 *    once; from here on every path is an anchor plus a relative path walked without following.
 * 2. Discovery (fresh, never cached across launches), mounts met inside the trees walked as
 *    anchors of their own, and git pointer files followed to the repositories they name
 *    (pointers.ts); a mount showing a protected path under another name refuses the launch.
 * 3. Creation targets: missing protected paths beneath writable roots, state roots and the
 *    private temporary root are made by one pinned `mkdirs` program per anchor.
 * 4. Final validation: every path the plan names is opened afresh, with no observation reused from
 *    discovery (a directory that became a link since is met and refused, never followed). A
 *    created directory must still be the one made; each anchor must still be what its path names.
 *    Each member comes with the identities of the directories on the way to it (what the sandbox
 *    check compares the sandbox with), and each empty protected directory with a lease that no
 *    other launch's cleanup can remove it under (creation.ts).
 *
 * Steps 3 and 4 are one native trip for every anchor together (`prepareDirectories`), which also
 * creates the launch's record before anything is made (runtime.ts). A test's `afterCreation`
 * hook splits them in two trips so it can act between.
 * 5. The layers, the sandbox's rendering of them, and what the sandbox is checked against.
 *
 * A protected path that is missing or has moved at the final validation (a concurrent child
 * renamed its parent) is never skipped: the whole preparation is made again, discovery included,
 * at most three times, and then the launch is refused.
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
import { findBwrap } from "./available.ts"
import { assertWithinBwrapLimit, bwrapArguments, describeArguments, emptyFilesNeeded } from "./bwrap.ts"
import { byAnchor, cleanupAll, type CreationRequest, type HostHold, type Owned, ownedFrom } from "./creation.ts"
import { type Discovery, type DiscoveryLimits, discoverProtected } from "./discovery.ts"
import { ConfinementError } from "./errors.ts"
import type { Grant } from "./grants.ts"
import { grantPaths, type LayerInput, type Layers, neededRestrictions, planLayers } from "./layers.ts"
import { PreparedLaunch, type PreparedFields } from "./launch.ts"
import { checkMountAliases } from "./mounts.ts"
import type { LaunchInputs, LaunchPlan } from "./plan.ts"
import { followPointers } from "./pointers.ts"
import { type Access, sandboxPlanOf } from "./policy.ts"
import { beneath, joinRaw, type RawPath, rawOf, relativeTo, shown, within } from "./raw.ts"
import { runtimeDirectory, runtimePlace } from "./runtime.ts"
import { renderSandboxProfile } from "./sandboxExec.ts"
import { type LaunchScope, type ResolvedScope, resolveScope } from "./scope.ts"
import { nextTurn } from "./turns.ts"
import { expectationsOf, type HeldInfo, sandboxCheck } from "./verify.ts"
import { closeHeld, type HeldMember, type HoldPath, prepareDirectories, type RecordHandle, type RuntimePlace } from "./wire.ts"

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

/** Most preparations one launch makes when protected paths keep moving under it. */
const maxAttempts = 3

/**
 * Prepares one launch. `source` is read now and again just before the command starts: a launch
 * whose inputs changed in between is refused.
 *
 * @since 0.1.0
 */
export const prepareLaunch = async (source: () => LaunchInputs, options: PrepareOptions = {}): Promise<PreparedLaunch> =>
  new PreparedLaunch(await prepareFields(source, options))

/**
 * The fields of a prepared launch; a protected path that moved during the preparation makes it
 * start over, at most {@link maxAttempts} times in all. @internal
 */
export const prepareFields = async (source: () => LaunchInputs, options: PrepareOptions): Promise<PreparedFields> => {
  for (let attempt = 1; ; attempt++) {
    try {
      return await prepareOnce(source, options)
    } catch (e) {
      if (!(e instanceof ConfinementError) || e.reason !== "moved") throw e
      if (attempt >= maxAttempts) {
        throw new ConfinementError("moved", `${e.message} (it moved again in each of ${maxAttempts} preparations: refused)`, { cause: e })
      }
    }
  }
}

/** The execution target as canonical spellings, and the directories the launch must make. */
interface Captured {
  readonly workspace: RawPath
  readonly extra: ReadonlyArray<RawPath>
  readonly home: RawPath | null
  readonly cwd: RawPath
  readonly tempRoot: RawPath
  readonly stateRoots: ReadonlyArray<RawPath>
  readonly creations: Array<CreationRequest>
  readonly scope: ResolvedScope | null
  readonly runtime: RuntimePlace
  /** The runtime directory's canonical spelling, when its parent exists. */
  readonly runtimePath: RawPath | null
  readonly canonical: (text: string) => Promise<RawPath | null>
}

// 1. Canonical spellings, captured once: asked all at once (each is a trip to the thread pool)
//    and taken in order, so the first missing one is the one reported.
const captureTarget = async (inputs: LaunchInputs, options: PrepareOptions, confined: boolean): Promise<Captured> => {
  const { target } = inputs
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
  const runtimeText = runtimeDirectory(target.runtimeDirectory)
  const runtime = runtimePlace(runtimeText)
  const asked = {
    workspace: early(mustExist(target.workspace, "workspace")),
    extra: early(Promise.all(target.writable.map((w) => mustExist(w, "writable root")))),
    home: early(canonical(target.home)),
    cwd: early(mustExist(target.cwd, "working directory")),
    tempRoot: early(
      target.tempRoot !== null ? mustExist(target.tempRoot, "temporary root") : mustExist(os.tmpdir(), "the host's temporary directory")
    ),
    state: early(Promise.all(target.state.map((s) => nearestExisting(s.path, canonical)))),
    runtime: early(canonical(path.dirname(runtimeText)))
  }
  const workspace = await asked.workspace
  const extra = await asked.extra
  const resolved = options.scope === undefined ? null : resolveScope(options.scope, workspace)
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
  const parent = await asked.runtime
  const runtimePath = parent === null ? null : joinRaw(parent, runtime.name)
  return {
    workspace,
    extra,
    home,
    cwd,
    tempRoot,
    stateRoots,
    creations,
    scope: confined ? resolved : null,
    runtime,
    runtimePath,
    canonical
  }
}

/** The writable roots a child has (confined), where a missing protected path must be made. */
const writableRootsOf = (c: Captured): Array<RawPath> => [c.workspace, ...c.extra, c.tempRoot, ...c.stateRoots]

// 2. Discovery, the repositories git pointer files name, and the mounts met on the way.
const discoverAll = async (
  inputs: LaunchInputs,
  c: Captured,
  anchors: Anchors,
  options: PrepareOptions,
  confined: boolean
): Promise<Discovery> => {
  const discovery = await discoverProtected({
    rules: inputs.policy.rules,
    workspaces: [c.workspace, ...c.extra],
    home: c.home,
    tempRoot: c.tempRoot,
    anchors,
    limits: options.limits,
    signal: options.signal
  })
  await options.hooks?.afterDiscovery?.()
  cancelled(options.signal)
  const roots = writableRootsOf(c)
  const writable = (p: RawPath) => !confined || roots.some((w) => within(p, w))
  const known = [...discovery.anchors.keys(), ...roots]
  const anchorOf = (p: RawPath) => known.filter((a) => within(p, a)).sort((a, b) => b.length - a.length)[0] ?? p
  const pointed = await followPointers({ candidates: discovery.candidates, anchors, writable, anchorOf })
  const candidates = [...discovery.candidates, ...pointed]
  await checkMountAliases(
    discovery.mounts,
    candidates.map((x) => x.path),
    roots
  )
  return { ...discovery, candidates }
}

/** What the final validation holds, and what settling each answer does with it. */
interface HoldItem {
  readonly anchor: RawPath
  readonly path: RawPath
  readonly lease: boolean
  readonly settle: (m: HeldMember) => void
}

/** Everything a launch has acquired so far: released by its cleanup, or by a failed preparation's. */
class Acquired {
  readonly fds: Array<number> = []
  readonly fdIdentities = new Map<number, string>()
  readonly leases: Array<{ fd: number; identity: string }> = []
  readonly held = new Map<RawPath, HeldInfo>()
  owned: ReadonlyArray<Owned> = []
  record: RecordHandle | null = null

  /** Takes a held member's descriptors; answers its slot (-1 without a descriptor). */
  slot(path: RawPath, anchor: RawPath, m: HeldMember): number {
    this.held.set(path, { anchor, identity: m.identity, chain: m.chain })
    if (m.lease >= 0) {
      this.leases.push({ fd: m.lease, identity: m.identity })
    }
    if (m.fd < 0) return -1
    this.fds.push(m.fd)
    this.fdIdentities.set(m.fd, m.identity)
    return this.fds.length - 1
  }
}

/** The plan's parts the final validation settles, filled as each answer is settled. */
interface Settled {
  readonly writable: Array<LayerInput["writable"][number]>
  readonly restrictions: Array<LayerInput["restrictions"][number]>
  readonly planned: Array<LaunchPlan["restrictions"][number]>
  readonly grants: Array<LayerInput["grants"][number]>
  readonly applied: Array<Grant>
  readonly unapplied: Array<{ grant: Grant; why: string }>
  readonly skipped: Array<{ path: string; why: string }>
  readonly scopeHeld: Array<RawPath>
}

const refusedMember = (m: HeldMember, what: string) =>
  new ConfinementError(m.error?.refusal === "symlink" ? "link" : "validation-failed", `${what} cannot be validated: ${m.error?.message}`, {
    cause: m.error
  })

/** A protected path for the final validation: its settle refuses, moves on, or takes its descriptor. */
const restriction =
  (
    got: Acquired,
    out: Settled,
    p: RawPath,
    anchor: RawPath,
    access: Access,
    glob: string | null,
    origin: LaunchPlan["restrictions"][number]["origin"],
    found: string | null
  ) =>
  (m: HeldMember) => {
    const mine = got.owned.find((o) => o.path === p)
    if (m.status === "refused") throw refusedMember(m, `protected path '${shown(p)}'`)
    if (m.status === "moved")
      throw new ConfinementError("moved", `protected path '${shown(p)}' moved during preparation: ${m.error?.description}`)
    if (m.status === "missing") {
      // Never skipped: it may have moved with a renamed parent, and a fresh discovery finds it
      // wherever it is now (or nowhere, when it was removed).
      throw new ConfinementError(
        "moved",
        `protected path '${shown(p)}'${mine ? " made for this launch" : ""} disappeared during preparation`
      )
    }
    if (m.type === "link") {
      throw new ConfinementError(
        "link",
        `protected path '${shown(p)}'${glob ? ` (rule '${glob}')` : ""} became a symbolic link during preparation: refused, not followed`
      )
    }
    // Another object at the path than discovery found: what it found may be elsewhere now.
    if (found !== null && found !== "" && m.identity !== found) {
      throw new ConfinementError("moved", `protected path '${shown(p)}' is not what discovery found there (${found} is now ${m.identity})`)
    }
    if (mine && m.identity !== mine.identity) {
      throw new ConfinementError(
        "validation-failed",
        `protected directory '${shown(p)}' made for this launch was replaced (${mine.identity} is now ${m.identity})`
      )
    }
    if (m.type !== "directory" && m.nlink > 1n) {
      throw new ConfinementError("hard-link", `protected file '${shown(p)}' has ${m.nlink} links: its other names would not be protected`)
    }
    out.restrictions.push({
      path: p,
      access,
      type: m.type,
      slot: got.slot(p, anchor, m),
      why: glob === null ? (origin === "runtime" ? "launch records" : "unreadable tree") : `rule '${glob}'`
    })
    out.planned.push({ path: shown(p), access, type: m.type, origin, rule: glob })
  }

/** A grant for the final validation: applied, or reported unapplied with why. */
const grantItem = (got: Acquired, out: Settled, g: Grant, p: RawPath, anchor: RawPath) => (m: HeldMember) => {
  const why =
    m.status !== "held"
      ? m.status === "missing"
        ? "the path does not exist"
        : `it cannot be validated: ${m.error?.message}`
      : m.type === "link"
        ? "the path is a symbolic link (never followed)"
        : m.type === "directory" && g.scope !== "recursive"
          ? "it names a directory: opening it would open the whole tree, which needs an approved recursive scope"
          : m.type !== "directory" && m.nlink > 1n
            ? `the file has ${m.nlink} links`
            : null
  if (why !== null) return void out.unapplied.push({ grant: g, why })
  out.grants.push({ path: p, access: g.access, slot: got.slot(p, anchor, m), why: `grant ${g.id} (${g.access}, ${g.scope})` })
  out.applied.push(g)
}

/** A scope file for the final validation: bound by itself, writable, or refused. */
const scopeFile = (got: Acquired, out: Settled, f: RawPath, workspace: RawPath) => (m: HeldMember) => {
  const named = `scope file '${shown(f)}'`
  if (m.status === "missing") return void out.skipped.push({ path: shown(f), why: "it does not exist" })
  if (m.status === "refused" || m.status === "moved") throw refusedMember(m, named)
  if (m.type === "link") throw new ConfinementError("link", `${named} is a symbolic link: refused, not followed`)
  if (m.type !== "file") throw new ConfinementError("validation-failed", `${named} is not a regular file (${m.type})`)
  if (m.nlink > 1n) throw new ConfinementError("hard-link", `${named} has ${m.nlink} links: writing it would change its other names too`)
  out.writable.push({ path: f, slot: got.slot(f, workspace, m), why: "scope file, rewritable in place" })
  out.scopeHeld.push(f)
}

/** The preparation of one launch; a "moved" refusal from it is worth another try. */
const prepareOnce = async (source: () => LaunchInputs, options: PrepareOptions): Promise<PreparedFields> => {
  const signal = options.signal
  cancelled(signal)
  const inputs = source()
  const fingerprint = fingerprintOf(inputs)
  const { policy } = inputs
  const platform = options.platform ?? (process.platform === "darwin" ? "darwin" : process.platform === "linux" ? "linux" : null)
  if (platform === null) throw new ConfinementError("sandbox-unavailable", `no sandbox is known on ${process.platform}`)
  const bwrap = platform === "linux" ? await findBwrap(options.bwrap) : ""
  const confined = policy.mode === "confined"
  const strategy = options.strategy ?? "auto"
  const anchors = new Anchors(strategy)
  const got = new Acquired()
  try {
    const c = await captureTarget(inputs, options, confined)
    cancelled(signal)
    const discovery = await discoverAll(inputs, c, anchors, options, confined)
    const built = await buildHolds(inputs, c, discovery, got, confined)
    const identities = await runPrepare(built, c, discovery, got, strategy, options)
    // 5. Layers and their rendering, each step in its own turn of the loop.
    await nextTurn()
    const layers = planLayers({
      mode: policy.mode,
      writable: built.out.writable,
      restrictions: built.out.restrictions,
      grants: built.out.grants
    })
    for (const s of layers.unused) {
      const fd = got.fds[s]
      if (fd !== undefined && fd >= 0) {
        closeHeld(fd)
        got.fds[s] = -1
      }
    }
    await nextTurn()
    const args = bwrapArguments({
      mode: policy.mode,
      network: policy.network,
      layers: layers.layers,
      remountReadOnly: layers.remountReadOnly,
      cwd: c.cwd
    })
    const plan = planOf(inputs, c, discovery, built, got, layers, platform, bwrap, describeArguments(args, shown))
    const host: HostHold & { readonly strays: Array<Owned> } = { record: got.record, leases: got.leases, strays: [] }
    return {
      plan,
      platform,
      bwrap,
      args,
      fds: got.fds,
      fdIdentities: got.fdIdentities,
      emptyFiles: emptyFilesNeeded(layers.layers),
      owned: got.owned,
      anchors,
      identities,
      source,
      fingerprint,
      fingerprintOf,
      strategy,
      tempRoot: c.tempRoot,
      cwd: c.cwd,
      applied: built.out.applied,
      signal,
      onLaunch: options.onLaunch,
      launcher: options.launcher,
      host,
      check:
        platform === "linux"
          ? sandboxCheck(
              expectationsOf(
                layers.layers,
                got.held,
                (a) => identities.get(a) ?? "",
                built.out.writable.map((w) => w.path)
              ),
              host,
              strategy,
              () => prepareFields(source, options)
            )
          : undefined
    }
  } catch (e) {
    await cleanupAll(
      got.owned,
      anchors,
      strategy,
      got.fds.filter((fd) => fd >= 0).map((fd) => ({ fd, identity: got.fdIdentities.get(fd) ?? "" })),
      { record: got.record, leases: got.leases }
    ).catch(() => undefined)
    await anchors.close()
    if (e instanceof ConfinementError) throw e
    if (signal?.aborted) throw new ConfinementError("cancelled", "launch preparation was cancelled", { cause: e })
    throw new ConfinementError("validation-failed", `launch preparation failed: ${(e as Error).message}`, { cause: e })
  }
}

/** The creation requests, the final validation's items, and what settling them fills. */
interface Built {
  readonly creating: Map<RawPath, Array<CreationRequest>>
  readonly holding: Map<RawPath, Array<HoldItem>>
  readonly scopeDirectories: ReadonlyArray<RawPath>
  readonly out: Settled
}

/** The directories the launch makes (3), and the protected paths among them. */
const planCreations = (
  inputs: LaunchInputs,
  c: Captured,
  discovery: Discovery,
  scopeDirectories: ReadonlyArray<RawPath>,
  confined: boolean
) => {
  const { scope, workspace } = c
  const creations = [...c.creations]
  // A missing protected path the child could create, beneath a writable root that exists now
  // (full access: beneath the directory the rule is rooted in). A scope's directories are ensured
  // first, each through the workspace's handle, so a protected path beneath one is made inside it
  // by the same program.
  for (const d of scopeDirectories)
    if (d !== workspace) creations.push({ path: d, anchor: workspace, mode: 0o755, purpose: "scope", permanent: false })
  const writableHere = scope === null ? [workspace, ...c.extra] : [...scopeDirectories, ...c.extra]
  const existingWritable = [...writableHere, ...(inputs.target.tempRoot !== null ? [c.tempRoot] : [])].sort((a, b) => b.length - a.length)
  const createdProtected: Array<{ path: RawPath; anchor: RawPath; access: Access; rule: number }> = []
  for (const m of discovery.missing) {
    const covering = confined ? existingWritable.find((w) => beneath(m.path, w)) : beneath(m.path, m.anchor) ? m.anchor : undefined
    if (covering === undefined) continue
    const anchor = scope !== null && within(covering, workspace) ? workspace : covering
    creations.push({ path: m.path, anchor, mode: m.access === "read-only" ? 0o755 : 0o700, purpose: "protected", permanent: false })
    createdProtected.push(m)
  }
  return { creating: byAnchor(creations), createdProtected }
}

/** The scope's paths, minus those inside a protected path (the protection decides there). */
const scopePaths = (c: Captured, discovery: Discovery, out: Settled) => {
  const { scope, workspace } = c
  const protectedPaths = new Set<RawPath>([...discovery.candidates.map((x) => x.path), ...discovery.missing.map((m) => m.path)])
  const unprotected = (p: RawPath): boolean => {
    for (let a = p; within(a, workspace); a = a.slice(0, a.lastIndexOf("/"))) {
      if (protectedPaths.has(a)) {
        out.skipped.push({ path: shown(p), why: `inside the protected path '${shown(a)}'` })
        return false
      }
      if (a === workspace) break
    }
    return true
  }
  return {
    scopeDirectories: scope === null ? [] : scope.directories.filter(unprotected),
    scopeFiles: scope === null ? [] : scope.files.filter(unprotected)
  }
}

// 3 and 4 planned: what to make, and every path the plan will mount, each from its anchor (the
// deepest one in play that contains it, else the path itself).
const buildHolds = async (inputs: LaunchInputs, c: Captured, discovery: Discovery, got: Acquired, confined: boolean): Promise<Built> => {
  const { policy } = inputs
  const { scope, workspace } = c
  const out: Settled = { writable: [], restrictions: [], planned: [], grants: [], applied: [], unapplied: [], skipped: [], scopeHeld: [] }
  const { scopeDirectories, scopeFiles } = scopePaths(c, discovery, out)
  const { creating, createdProtected } = planCreations(inputs, c, discovery, scopeDirectories, confined)
  const inPlay: Array<RawPath> = [...discovery.anchors.keys(), ...creating.keys()]
  const anchorFor = (p: RawPath, fits: (p: RawPath, a: RawPath) => boolean, otherwise: RawPath): RawPath => {
    const found = inPlay.filter((a) => fits(p, a)).sort((a, b) => b.length - a.length)[0]
    if (found !== undefined) return found
    inPlay.push(otherwise)
    return otherwise
  }
  const items: Array<HoldItem> = []
  const item = (anchor: RawPath, p: RawPath, lease: boolean, settle: (m: HeldMember) => void) =>
    items.push({ anchor, path: relativeTo(p, anchor), lease, settle })
  if (scopeFiles.length > 0 && !inPlay.includes(workspace)) inPlay.push(workspace)
  for (const f of scopeFiles) item(workspace, f, false, scopeFile(got, out, f, workspace))
  const writableRoots = !confined
    ? []
    : scope === null
      ? writableRootsOf(c)
      : [...c.extra, c.tempRoot, ...c.stateRoots, ...scopeDirectories]
  for (const w of writableRoots) {
    // Held from the deepest anchor already pinned that contains it, else pinned itself.
    const anchor = anchorFor(w, within, w)
    item(anchor, w, false, (m) => {
      if (m.status !== "held" || m.type !== "directory") {
        throw new ConfinementError("validation-failed", `writable root '${shown(w)}' is no longer a directory`, { cause: m.error })
      }
      out.writable.push({ path: w, slot: got.slot(w, anchor, m), why: "writable root" })
    })
  }
  const restrict = (
    p: RawPath,
    anchor: RawPath,
    access: Access,
    rule: number | null,
    origin: LaunchPlan["restrictions"][number]["origin"],
    found: string | null = null
  ) => item(anchor, p, true, restriction(got, out, p, anchor, access, rule === null ? null : policy.rules[rule]!.glob, origin, found))
  // Only the protected paths the plan can apply are held: one nested beneath an already
  // read-only or masked path, with no grant between, narrows nothing (layers.ts). Planned in a
  // turn of its own: over many candidates, reading discovery's answer and planning are each a
  // long stretch of JavaScript.
  await nextTurn()
  const needed = neededRestrictions({
    mode: policy.mode,
    writable: [...writableRoots, ...scopeFiles],
    restrictions: discovery.candidates,
    grants: await grantPaths(inputs.grants, c.canonical),
    check: assertWithinBwrapLimit
  })
  // Each held from an anchor strictly above it, so that the hold answers the directory it was found
  // in and the sandbox check compares that directory: a destination that is its own anchor could
  // only be compared by its own identity, which a mask hides (a tmpfs is never the host's
  // directory) and which a bind shows just the same when bubblewrap made it afresh at the old name
  // of a renamed parent. A mount point is held from itself: no walk crosses into it from its parent,
  // and no child can rename it.
  const mountPoints = new Set(discovery.mounts)
  for (const [i, x] of discovery.candidates.entries()) {
    if (!needed.has(i)) continue
    const anchor = anchorFor(x.path, mountPoints.has(x.path) ? within : beneath, x.anchor)
    restrict(x.path, anchor, x.access, x.rule, x.origin, x.identity ?? null)
  }
  for (const m of createdProtected) restrict(m.path, m.anchor, m.access, m.rule, "created")
  // The launch records say what a sweep removes: a child that could write them could aim a sweep.
  const records = c.runtimePath
  if (confined && records !== null && writableRoots.some((w) => within(records, w))) {
    restrict(records, anchorFor(records, beneath, records), "inaccessible", null, "runtime")
  }
  for (const g of inputs.grants) {
    const parent = await c.canonical(path.dirname(g.path))
    if (parent === null) {
      out.unapplied.push({ grant: g, why: "its parent directory does not exist" })
      continue
    }
    const p = joinRaw(parent, rawOf(path.basename(g.path)))
    const anchor = anchorFor(p, beneath, parent)
    item(anchor, p, false, grantItem(got, out, g, p, anchor))
  }
  return { creating, holding: byAnchor(items), scopeDirectories, out }
}

// 3 and 4 run: every anchor pinned afresh, every directory made, then every path held, in one trip
// (two with the test hook between); answers the identity of every anchor as pinned there.
const runPrepare = async (
  built: Built,
  c: Captured,
  discovery: Discovery,
  got: Acquired,
  strategy: Strategy,
  options: PrepareOptions
): Promise<Map<RawPath, string>> => {
  const { creating, holding } = built
  const program = (create: boolean, hold: boolean, expected: (a: RawPath) => string | null) =>
    [...new Set([...creating.keys(), ...holding.keys()])].map((anchor) => ({
      anchor,
      expected: expected(anchor),
      create: create
        ? (creating.get(anchor) ?? []).map((r) => ({
            path: relativeTo(r.path, anchor),
            mode: r.mode,
            purge: r.purpose === "temp",
            permanent: r.permanent
          }))
        : [],
      hold: hold ? (holding.get(anchor) ?? []).map((i): HoldPath => ({ path: i.path, lease: i.lease })) : []
    }))
  const seen = (a: RawPath) => discovery.anchors.get(a) ?? null
  const run = async (create: boolean, hold: boolean, expected: (a: RawPath) => string | null, record: boolean) => {
    const requested = program(create, hold, expected)
    const answer = await prepareDirectories(
      strategy,
      requested,
      record ? { place: c.runtime, name: randomBytes(16).toString("hex") } : null
    )
    if (record) got.record = answer.record
    return requested.map((r, i) => ({ anchor: r.anchor, answer: answer.anchors[i]! }))
  }
  const split = options.hooks?.afterCreation
  let outcome = await run(true, split === undefined, seen, true).catch((e: unknown) => {
    throw new ConfinementError("creation-failed", `the launch cannot start: ${(e as Error).message}`, { cause: e })
  })
  // Everything made becomes ours before anything can throw.
  got.owned = outcome.flatMap(({ anchor, answer }) => ownedFrom(anchor, creating.get(anchor) ?? [], answer))
  if (split !== undefined && outcome.every((o) => o.answer.error === null && o.answer.stopped === null)) {
    await split()
    const pinned = new Map(outcome.map((o) => [o.anchor, o.answer.identity]))
    outcome = await run(false, true, (a) => pinned.get(a) || seen(a), false)
  }
  await settleAll(outcome, built, got, options.signal)
  const identities = new Map<RawPath, string>(discovery.anchors)
  for (const { anchor, answer } of outcome) if (answer.identity !== "") identities.set(anchor, answer.identity)
  cancelled(options.signal)
  return identities
}

/** Every answer settled, in one turn; descriptors nobody took are closed whatever happens. */
const settleAll = async (
  outcome: ReadonlyArray<{ anchor: RawPath; answer: Awaited<ReturnType<typeof prepareDirectories>>["anchors"][number] }>,
  built: Built,
  got: Acquired,
  signal: AbortSignal | undefined
): Promise<void> => {
  const pending = outcome.flatMap(({ anchor, answer }) =>
    answer.held === null ? [] : (built.holding.get(anchor) ?? []).map((item, j) => ({ item, m: answer.held!.members[j]! }))
  )
  const taken = new Set<number>()
  try {
    for (const { anchor, answer } of outcome) {
      const why = answer.error ?? answer.stopped
      if (why !== null && (built.creating.get(anchor)?.length ?? 0) > 0) {
        throw new ConfinementError("creation-failed", `a protected or state directory could not be made: ${why.message}`, { cause: why })
      }
      const failure = why ?? answer.holdError
      if (failure !== null)
        throw new ConfinementError("validation-failed", `final validation failed: ${failure.message}`, { cause: failure })
    }
    cancelled(signal)
    await nextTurn()
    for (const { item, m } of pending) {
      const before = got.fds.length
      const leases = got.leases.length
      item.settle(m)
      if (got.fds.length > before) taken.add(m.fd)
      if (got.leases.length > leases) taken.add(m.lease)
    }
  } finally {
    for (const { m } of pending) {
      if (m.fd >= 0 && !taken.has(m.fd)) closeHeld(m.fd)
      if (m.lease >= 0 && !taken.has(m.lease)) closeHeld(m.lease)
    }
  }
}

/** The plan, for people and tests: paths as text. */
const planOf = (
  inputs: LaunchInputs,
  c: Captured,
  discovery: Discovery,
  built: Built,
  got: Acquired,
  layers: Layers,
  platform: "linux" | "darwin",
  bwrap: string,
  args: ReadonlyArray<string>
): LaunchPlan => {
  const { policy } = inputs
  const out = built.out
  return {
    ...sandboxPlanOf(policy),
    mode: policy.mode,
    workspace: shown(c.workspace),
    cwd: shown(c.cwd),
    tempRoot: shown(c.tempRoot),
    writableRoots: out.writable.map((w) => shown(w.path)),
    scope:
      c.scope === null
        ? null
        : { files: out.scopeHeld.sort().map(shown), directories: built.scopeDirectories.map(shown), skipped: out.skipped },
    restrictions: out.planned.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    created: got.owned.map((o) => ({ path: shown(o.path), identity: o.identity, purpose: o.purpose, permanent: o.permanent })),
    grants: { applied: out.applied, unapplied: out.unapplied },
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
        ? { kind: "bubblewrap", executable: bwrap, arguments: args }
        : { kind: "sandbox-exec", profile: renderSandboxProfile({ mode: policy.mode, layers: layers.layers }) }
  }
}
