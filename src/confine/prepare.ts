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
import { Anchors, canonicalDirectory, nearestExisting } from "./anchors.ts"
import { bwrapArguments, describeArguments, emptyFilesNeeded } from "./bwrap.ts"
import { cleanupAll, createAll, type CreationRequest, type Owned } from "./creation.ts"
import { type DiscoveryLimits, discoverProtected } from "./discovery.ts"
import { ConfinementError } from "./errors.ts"
import type { Grant } from "./grants.ts"
import { type LayerInput, planLayers } from "./layers.ts"
import { PreparedLaunch } from "./launch.ts"
import type { Access } from "./policy.ts"
import { beneath, joinRaw, type RawPath, rawOf, relativeTo, shown, within } from "./raw.ts"
import { findBwrap } from "./available.ts"
import { renderSandboxProfile } from "./sandboxExec.ts"
import type { LaunchInputs, LaunchPlan } from "./plan.ts"
import { type LaunchScope, resolveScope } from "./scope.ts"
import { closeHeld, hold, type HeldMember } from "./wire.ts"

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

const mustExist = async (text: string, what: string): Promise<RawPath> => {
  const c = await canonicalDirectory(text)
  if (c === null) throw new ConfinementError("invalid-target", `${what} '${text}' does not exist`)
  return c
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
  const anchors = new Anchors(options.strategy ?? "auto")
  const fds: Array<number> = []
  let owned: ReadonlyArray<Owned> = []
  try {
    // 1. Canonical spellings, captured once.
    const workspace = await mustExist(target.workspace, "workspace")
    const extra = await Promise.all(target.writable.map((w) => mustExist(w, "writable root")))
    const resolved = options.scope === undefined ? null : resolveScope(options.scope, workspace)
    const scope = confined ? resolved : null
    const home = await canonicalDirectory(target.home)
    const cwd = await mustExist(target.cwd, "working directory")
    const creations: Array<CreationRequest> = []
    let tempRoot: RawPath
    if (target.tempRoot !== null) {
      tempRoot = await mustExist(target.tempRoot, "temporary root")
    } else {
      const host = await mustExist(os.tmpdir(), "the host's temporary directory")
      tempRoot = joinRaw(host, `pinnedfs-confine-${randomBytes(8).toString("hex")}`)
      creations.push({ path: tempRoot, anchor: host, mode: 0o700, purpose: "temp", permanent: false })
    }
    const stateRoots: Array<RawPath> = []
    for (const s of target.state) {
      const n = await nearestExisting(s.path)
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
    if (creations.length > 0) {
      try {
        owned = await createAll(creations, anchors)
      } catch (e) {
        owned = (e as { owned?: ReadonlyArray<Owned> }).owned ?? []
        throw e
      }
    }
    await options.hooks?.afterCreation?.()
    cancelled(signal)

    // 4. Final validation: everything opened afresh, per anchor, in one trip each.
    const items: Array<HoldItem> = []
    const ownedByPath = new Map(owned.map((o) => [o.path, o]))
    const slot = (m: HeldMember): number => {
      if (m.fd < 0) return -1
      fds.push(m.fd)
      return fds.length - 1
    }
    const writable: Array<LayerInput["writable"][number]> = []
    const writableRoots = !confined
      ? []
      : scope === null
        ? [workspace, ...extra, tempRoot, ...stateRoots]
        : [...extra, tempRoot, ...stateRoots, ...scopeDirectories]
    const scopeHeld: Array<RawPath> = []
    if (scopeFiles.length > 0) await anchors.pin(workspace)
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
      const anchor = anchors.known().find((a) => within(w, a)) ?? w
      await anchors.pin(anchor)
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
    for (const c of discovery.candidates) restrict(c.path, c.anchor, c.access, c.rule, c.origin)
    for (const m of createdProtected) restrict(m.path, m.anchor, m.access, m.rule, "created")

    const grants: Array<LayerInput["grants"][number]> = []
    const applied: Array<Grant> = []
    const unapplied: Array<{ grant: Grant; why: string }> = []
    for (const g of inputs.grants) {
      const parent = await canonicalDirectory(path.dirname(g.path))
      if (parent === null) {
        unapplied.push({ grant: g, why: "its parent directory does not exist" })
        continue
      }
      const p = joinRaw(parent, rawOf(path.basename(g.path)))
      const anchor = anchors.known().find((a) => beneath(p, a)) ?? parent
      await anchors.pin(anchor)
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
    const byAnchor = new Map<RawPath, Array<HoldItem>>()
    for (const i of items) byAnchor.set(i.anchor, [...(byAnchor.get(i.anchor) ?? []), i])
    const answers = await Promise.allSettled(
      [...byAnchor].map(async ([anchor, list]) => {
        const root = await anchors.pin(anchor)
        return {
          list,
          answer: await hold(
            root,
            list.map((i) => i.path)
          )
        }
      })
    )
    // Every descriptor becomes ours before anything can throw, so none is left open.
    const settled: Array<{ list: Array<HoldItem>; answer: Awaited<ReturnType<typeof hold>> }> = []
    let failure: unknown
    for (const a of answers) {
      if (a.status === "fulfilled") settled.push(a.value)
      else failure ??= a.reason
    }
    const pending = settled.flatMap(({ list, answer }) => list.map((item, i) => ({ item, m: answer.members[i]! })))
    const taken = new Set<number>()
    try {
      if (failure !== undefined) {
        throw new ConfinementError("validation-failed", `final validation failed: ${(failure as Error).message}`, { cause: failure })
      }
      for (const { item, m } of pending) {
        const before = fds.length
        item.settle(m)
        if (fds.length > before) taken.add(m.fd)
      }
    } finally {
      for (const { m } of pending) if (m.fd >= 0 && !taken.has(m.fd)) closeHeld(m.fd)
    }
    cancelled(signal)

    // 5. Layers and their rendering.
    const layers = planLayers({ mode: policy.mode, writable, restrictions, grants })
    for (const s of layers.unused) {
      const fd = fds[s]
      if (fd !== undefined && fd >= 0) {
        closeHeld(fd)
        fds[s] = -1
      }
    }
    const args = bwrapArguments({ mode: policy.mode, layers: layers.layers, remountReadOnly: layers.remountReadOnly, cwd })
    const plan: LaunchPlan = {
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
    const identities = new Map<RawPath, string>(discovery.anchors)
    for (const { list, answer } of settled) identities.set(list[0]!.anchor, answer.anchor)
    return new PreparedLaunch({
      plan,
      platform,
      bwrap,
      args,
      fds,
      emptyFiles: emptyFilesNeeded(layers.layers),
      owned,
      anchors,
      identities,
      source,
      fingerprint,
      fingerprintOf,
      tempRoot,
      cwd,
      applied,
      signal,
      onLaunch: options.onLaunch
    })
  } catch (e) {
    for (const fd of fds) if (fd >= 0) closeHeld(fd)
    await cleanupAll(owned, anchors).catch(() => undefined)
    await anchors.close()
    if (e instanceof ConfinementError) throw e
    if (signal?.aborted) throw new ConfinementError("cancelled", "launch preparation was cancelled", { cause: e })
    throw new ConfinementError("validation-failed", `launch preparation failed: ${(e as Error).message}`, { cause: e })
  }
}
