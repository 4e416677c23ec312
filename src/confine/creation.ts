/**
 * Creation targets: directories a launch makes before the child starts and removes after it
 * exits, through the pinned-parent programs: one `mkdirs` and one `rmdirs` per anchor, all of a
 * launch's run in one trip each (`prepareDirectories`, `cleanupDirectories`).
 *
 * - A determinable protected path that is missing beneath a writable root is made, empty, so it can
 *   be mounted read-only or masked: a child can then neither create it nor write in it.
 * - State roots the target asks for, the private temporary root, and the missing directories a
 *   launch scope makes writable are made the same way.
 *
 * Every missing directory of an anchor goes into one parent-before-child program: each is made
 * with `mkdirat` on a handle of its pinned parent, then given its exact mode, and a conflict stops
 * the program before any further mode change. Whatever was made is owned (its identity recorded)
 * even when the program then fails, so it is cleaned up. Cleanup is one reverse-order program per
 * anchor, each member removed through its pinned parent only while it is still the directory
 * recorded and only if empty; members are optional, so one refusal does not stop the rest, and a
 * refusal is reported, never hidden. Permanent state roots, and the ancestors made for them, stay.
 * The private temporary root is the child's own: purged whole by its own program (modes repaired
 * as it goes, any depth, no link followed).
 *
 * Several launches can rely on one directory: a launch started while another's empty `.git`
 * exists mounts it as an ordinary `.git`. Every launch leases the empty protected directories it
 * mounts (flock LOCK_SH, held by the kernel for the process's life), and removal takes LOCK_EX
 * without waiting, so no launch's cleanup removes what another live one mounts (removing a mount
 * point detaches the mount in every namespace). What is kept is removed by a later sweep of the
 * launch records (runtime.ts) once nobody relies on it.
 *
 * @since 0.1.0
 */
import type { Strategy } from "../PinnedRoot.ts"
import type { PinnedFsError } from "../internal/errors.ts"
import type { Anchors } from "./anchors.ts"
import { joinRaw, type RawPath, relativeTo, shown, within } from "./raw.ts"
import { cleanupDirectories, type PreparedAnchor, type RecordHandle, type Release, type SweptItem } from "./wire.ts"

/** @since 0.1.0 @category models */
export type Purpose = "protected" | "state" | "temp" | "scope"

/** @since 0.1.0 @category models */
export interface CreationRequest {
  readonly path: RawPath
  readonly anchor: RawPath
  readonly mode: number
  readonly purpose: Purpose
  readonly permanent: boolean
}

/** A directory this launch made: its cleanup is ours. @since 0.1.0 @category models */
export interface Owned {
  readonly path: RawPath
  readonly anchor: RawPath
  /** The anchor as pinned when this was made: cleanup refuses another directory there. */
  readonly anchorIdentity: string
  readonly identity: string
  readonly purpose: Purpose
  readonly permanent: boolean
}

/** @since 0.1.0 @category models */
export interface CleanupReport {
  readonly removed: ReadonlyArray<string>
  /** Not empty any more, or relied on by another live launch (which removes it when it is done): left where it is. */
  readonly kept: ReadonlyArray<string>
  /** Not removed because it, or its parent, is no longer what was recorded. */
  readonly refused: ReadonlyArray<{ readonly path: string; readonly error: PinnedFsError }>
  /** What dead launches had left, swept after this launch's own cleanup (see `cleanupLeftovers`). @since 0.2.0 */
  readonly swept: ReadonlyArray<SweptItem>
}

/** Items grouped by anchor, in the order each anchor first appears. */
export const byAnchor = <A extends { readonly anchor: RawPath }>(items: ReadonlyArray<A>): Map<RawPath, Array<A>> => {
  const out = new Map<RawPath, Array<A>>()
  for (const i of items) {
    const list = out.get(i.anchor)
    if (list) list.push(i)
    else out.set(i.anchor, [i])
  }
  return out
}

/**
 * What one anchor's creation program made, as owned directories. A directory made on the way to a
 * request serves that request; one a permanent request needed is permanent too.
 *
 * @since 0.1.0
 */
export const ownedFrom = (anchor: RawPath, list: ReadonlyArray<CreationRequest>, made: PreparedAnchor): Array<Owned> =>
  made.created.map((c) => {
    const path = c.path === "" ? anchor : joinRaw(anchor, c.path)
    const served = list.filter((r) => within(r.path, path))
    return {
      path,
      anchor,
      anchorIdentity: made.identity,
      identity: c.identity,
      purpose: list.find((r) => r.path === path)?.purpose ?? served[0]?.purpose ?? "state",
      permanent: served.some((r) => r.permanent)
    }
  })

/** What a launch holds besides its bound descriptors, released only by its cleanup. @since 0.2.0 */
export interface HostHold {
  /** Its record in the runtime directory (closed, and removed when nothing stays, by the cleanup). */
  readonly record: RecordHandle | null
  /** Leases on the empty protected directories it mounts: another launch's cleanup keeps them meanwhile. */
  readonly leases: ReadonlyArray<Release>
  /**
   * Directories a refused sandbox's bubblewrap made that another launch relies on: counted as this
   * launch's own, so its cleanup (or a later sweep) removes them once nobody does.
   */
  readonly strays?: Array<Owned> | undefined
}

/**
 * Removes what a preparation made (the permanent part aside), every anchor in one trip that also
 * closes `release` (descriptors the preparation handed out) and the launch's leases first, so
 * neither costs the JavaScript thread. A directory made for the launch is removed only when empty
 * and when no other live launch holds a lease on it (then it is kept, and the last launch relying
 * on it, or a later sweep, removes it); the private temporary root is purged with everything in it.
 * The launch's record is then marked, and removed when nothing stays; then the records of dead
 * launches are swept (`swept`).
 *
 * @since 0.1.0
 */
export const cleanupAll = async (
  owned: ReadonlyArray<Owned>,
  _anchors: Anchors,
  strategy: Strategy,
  release: ReadonlyArray<Release> = [],
  host: HostHold = { record: null, leases: [] }
): Promise<CleanupReport> => {
  const removed: Array<string> = []
  const kept: Array<string> = []
  const refused: Array<{ path: string; error: PinnedFsError }> = []
  const groups = [...byAnchor([...owned, ...(host.strays ?? [])].filter((o) => !o.permanent))]
  const letGo = [...release, ...host.leases]
  if (groups.length === 0 && letGo.length === 0 && host.record === null) return { removed, kept, refused, swept: [] }
  const answer = await cleanupDirectories(
    strategy,
    letGo,
    groups.map(([anchor, list]) => ({
      anchor,
      identity: list[0]!.anchorIdentity,
      owned: list.map((o) => ({ path: relativeTo(o.path, anchor), identity: o.identity, optional: true, purge: o.purpose === "temp" }))
    })),
    host.record,
    true
  )
  for (const [i, a] of answer.anchors.entries()) {
    const [anchor, list] = groups[i]!
    if (a.error !== null) {
      for (const o of list) refused.push({ path: shown(o.path), error: a.error })
      continue
    }
    for (const m of a.members) {
      const path = shown(joinRaw(anchor, m.path))
      if (m.status === "removed" || m.status === "missing") removed.push(path)
      else if (m.status === "kept") kept.push(path)
      else refused.push({ path, error: m.error! })
    }
  }
  return { removed, kept, refused, swept: answer.swept.items }
}
