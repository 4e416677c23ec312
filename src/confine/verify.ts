/**
 * The sandbox checked from outside before its command starts (Linux). The final validation held
 * every source and recorded, for each, the directories on the way to it; bubblewrap then mounts
 * those sources at paths, and a path can change in between: a concurrent child renames the
 * unprotected parent of a protected repository, and the read-only mount lands on a decoy (or on a
 * directory bubblewrap made for a destination that had gone) while the real repository stays
 * writable under the other name. So once the sandbox is set up, and before its command runs, its
 * own view is walked through /proc/PID/root, one component at a time (native/ops/verify_sandbox.cc):
 * every directory on the way must be the one recorded, and every destination a mount root of its
 * kind holding the object validated. A sandbox that fails is killed before its command starts; a
 * "moved" failure is worth a fresh preparation (the launch tries again, a bounded number of
 * times), any other refuses the launch.
 *
 * @internal
 */
import type { Strategy } from "../PinnedRoot.ts"
import type { Owned } from "./creation.ts"
import type { PreparedFields, SandboxCheck } from "./launch.ts"
import { ConfinementError, SandboxDied } from "./errors.ts"
import type { Layer } from "./layers.ts"
import { joinRaw, type RawPath, relativeTo, within } from "./raw.ts"
import { type ExpectedLayer, type RecordHandle, removeStrays, verifyRemote } from "./wire.ts"

/** What one held path was, as the final validation saw it. */
export interface HeldInfo {
  readonly anchor: RawPath
  readonly identity: string
  /** The directories between the anchor and it ("dev:ino"), shortest path first. */
  readonly chain: ReadonlyArray<string>
}

/** Everything the check compares the sandbox with. */
export interface SandboxExpectations {
  readonly anchors: ReadonlyArray<{ readonly path: RawPath; readonly identity: string }>
  readonly layers: ReadonlyArray<ExpectedLayer>
  /** The writable roots: where bubblewrap can make a mount point on the host. */
  readonly writable: ReadonlyArray<RawPath>
}

/** How long a sandbox may take to set itself up before the check gives up on it. */
const setupWaitMs = 30_000

/**
 * The expectations for `layers`: each destination with its anchor, kind and the identity of every
 * directory on the way (a component that is itself a masked directory must be that mask; one
 * inside a mask is the sandbox's own, not compared).
 */
export const expectationsOf = (
  layers: ReadonlyArray<Layer>,
  held: ReadonlyMap<RawPath, HeldInfo>,
  anchorIdentity: (anchor: RawPath) => string,
  writable: ReadonlyArray<RawPath>
): SandboxExpectations => {
  const anchors: Array<{ path: RawPath; identity: string }> = []
  const index = new Map<RawPath, number>()
  const masks = layers.filter((l) => l.op === "mask-directory").map((l) => l.path)
  const out: Array<ExpectedLayer> = []
  // Several layers at one path (a grant over the restriction it opens): the last one is on top.
  const top = new Map<RawPath, Layer>()
  for (const l of layers) top.set(l.path, l)
  for (const l of layers) {
    if (top.get(l.path) !== l) continue
    const info = held.get(l.path)
    if (info === undefined) continue
    let i = index.get(info.anchor)
    if (i === undefined) {
      i = anchors.length
      index.set(info.anchor, i)
      anchors.push({ path: info.anchor, identity: anchorIdentity(info.anchor) })
    }
    const rel = relativeTo(l.path, info.anchor)
    const parts = rel === "" ? [] : rel.split("/")
    const steps = parts.slice(0, -1).map((_, k) => {
      const at = joinRaw(info.anchor, parts.slice(0, k + 1).join("/"))
      if (masks.includes(at)) return { expect: "tmpfs" as const, identity: null }
      if (masks.some((m) => within(at, m))) return { expect: "any" as const, identity: null }
      const id = info.chain[k]
      return id === undefined || id === "0:0" ? { expect: "any" as const, identity: null } : { expect: "identity" as const, identity: id }
    })
    const kind =
      l.op === "bind" ? (l.writable ? "writable-bind" : "read-only-bind") : l.op === "mask-directory" ? "mask-directory" : "mask-file"
    out.push({
      anchor: i,
      path: rel,
      kind,
      identity: info.identity,
      perms: l.op === "mask-directory" ? l.perms : 0,
      steps
    })
  }
  return { anchors, layers: out, writable }
}

/**
 * Checks the sandbox whose first process is `pid` (bubblewrap's json-status `child-pid`). With
 * `blockFd` (the descriptor given to bubblewrap as --block-fd), first waits until that process is
 * blocked on it; without, the caller knows the sandbox is ready (a launcher said so).
 */
export const verifySandbox = async (
  expected: SandboxExpectations,
  record: RecordHandle | null,
  pid: number,
  blockFd = -1
): Promise<void> => {
  const answer = await verifyRemote({ pid, blockFd, waitMs: setupWaitMs, record, ...expected }).catch((e: unknown) => {
    throw new ConfinementError("sandbox-unavailable", `the sandbox could not be checked: ${(e as Error).message}`, { cause: e })
  })
  if (answer.ok) return
  const message = `the sandbox was not what the launch prepared: ${answer.why}; its command was not started`
  if (answer.moved) throw new ConfinementError("moved", message)
  throw answer.died ? new SandboxDied(message) : new ConfinementError("sandbox-unavailable", message)
}

/**
 * The check a prepared launch runs on its sandbox (launch.ts `SandboxCheck`): verify it, and after
 * a refusal remove what bubblewrap left (what another launch relies on is counted in `host.strays`
 * for this launch's cleanup), and say whether a fresh preparation may succeed.
 */
export const sandboxCheck = (
  expected: SandboxExpectations,
  host: { readonly record: RecordHandle | null; readonly strays?: Array<Owned> | undefined },
  strategy: Strategy,
  again: () => Promise<PreparedFields>
): SandboxCheck => ({
  verify: (pid, at) => verifySandbox(expected, host.record, pid, at),
  refused: async (since) => {
    host.strays?.push(...(await afterRefusedSandbox(expected, since, strategy, host.record)))
  },
  // Worth a fresh preparation: a destination that moved (seen by the check), or a sandbox that died
  // setting itself up or while it was checked on a machine that can build sandboxes (the launch
  // says which, in either phase); the launch bounds the tries.
  retry: (e) => e instanceof SandboxDied || (e instanceof ConfinementError && e.reason === "moved"),
  again
})

/**
 * After a refused sandbox has exited: the empty directories bubblewrap made on the host for
 * destinations that had moved, found in the directories on the way to each destination inside a
 * writable root (each still the one the final validation recorded) as directories born since the
 * sandbox started that hold nothing but empty directories, removed through their pinned parents
 * (native/ops/strays.cc). A concurrent rename may have given them another name: they are found by
 * what they are, not where the plan put them.
 */
export const afterRefusedSandbox = async (
  expected: SandboxExpectations,
  since: number,
  strategy: Strategy,
  record: RecordHandle | null
): Promise<Array<Owned>> => {
  const byAnchor = new Map<number, Map<RawPath, string>>()
  const writable = (p: RawPath) => expected.writable.some((w) => within(p, w))
  for (const l of expected.layers) {
    const anchor = expected.anchors[l.anchor]!
    const dirs = byAnchor.get(l.anchor) ?? new Map<RawPath, string>()
    byAnchor.set(l.anchor, dirs)
    if (writable(anchor.path)) dirs.set("", anchor.identity)
    const parts = l.path === "" ? [] : l.path.split("/")
    for (const [k, step] of l.steps.entries()) {
      const rel = parts.slice(0, k + 1).join("/")
      // Inside a mask is the sandbox's own; elsewhere any directory at the path is looked in.
      if (step.expect !== "identity" && step.expect !== "any") continue
      if (writable(joinRaw(anchor.path, rel))) dirs.set(rel, step.identity ?? "0:0")
    }
  }
  const anchors = [...byAnchor]
    .filter(([, dirs]) => dirs.size > 0)
    .map(([i, dirs]) => ({ ...expected.anchors[i]!, dirs: [...dirs].map(([p, identity]) => ({ path: p, identity })) }))
  if (anchors.length === 0) return []
  // Birth times come from a coarse clock that may lag the real one by a tick.
  const sinceNs = BigInt(Math.max(0, since - 50)) * 1_000_000n
  const answer = await removeStrays(strategy, sinceNs, record, anchors).catch(() => null)
  // Kept because a concurrent launch met one as a protected path and relies on it: this launch's
  // cleanup and record then count it as made here, so the last launch relying on it removes it.
  return (answer?.kept ?? []).map((k) => ({
    path: joinRaw(anchors[k.anchor]!.path, k.path),
    anchor: anchors[k.anchor]!.path,
    anchorIdentity: anchors[k.anchor]!.identity,
    identity: k.identity,
    purpose: "protected" as const,
    permanent: false
  }))
}
