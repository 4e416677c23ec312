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
 * The private temporary root is emptied with the pinned recursive remove, which follows no link.
 *
 * @since 0.1.0
 */
import type { Strategy } from "../PinnedRoot.ts"
import { PinnedFsError } from "../internal/errors.ts"
import type { Anchors } from "./anchors.ts"
import { ConfinementError } from "./errors.ts"
import { joinRaw, type RawPath, relativeTo, shown, textOf, within } from "./raw.ts"
import { cleanupDirectories, type PreparedAnchor, type Release } from "./wire.ts"

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
  /** Not empty any more: left where it is. */
  readonly kept: ReadonlyArray<string>
  /** Not removed because it, or its parent, is no longer what was recorded. */
  readonly refused: ReadonlyArray<{ readonly path: string; readonly error: PinnedFsError }>
}

const relativeText = (path: RawPath, anchor: RawPath): string => {
  const text = textOf(relativeTo(path, anchor))
  if (text === undefined) throw new ConfinementError("unnameable", `'${shown(path)}' is not named in UTF-8`)
  return text
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

/** An anchor's requests as its creation program: paths relative to the anchor, as bytes. */
export const creationProgram = (anchor: RawPath, list: ReadonlyArray<CreationRequest>) =>
  list.map((r) => ({ path: relativeTo(r.path, anchor), mode: r.mode }))

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

/**
 * Removes what a preparation made (the permanent part aside), every anchor in one trip that also
 * closes `release` (descriptors the preparation handed out), so neither costs the JavaScript
 * thread. A private temporary root is emptied first with the pinned recursive remove.
 *
 * @since 0.1.0
 */
export const cleanupAll = async (
  owned: ReadonlyArray<Owned>,
  anchors: Anchors,
  strategy: Strategy,
  release: ReadonlyArray<Release> = []
): Promise<CleanupReport> => {
  const removed: Array<string> = []
  const kept: Array<string> = []
  const refused: Array<{ path: string; error: PinnedFsError }> = []
  const purge = owned.filter((o) => o.purpose === "temp" && !o.permanent)
  const rest = owned.filter((o) => o.purpose !== "temp" && !o.permanent)
  await Promise.all(
    [...byAnchor(purge)].map(async ([anchor, list]) => {
      const root = await anchors.pin(anchor)
      for (const o of list) {
        const rel = relativeText(o.path, anchor)
        // Only our own directory, still the one made: a replaced one is not ours to empty.
        const info = await root.stat(rel).catch(() => null)
        if (info === null) continue
        if (`${info.dev}:${info.ino}` !== o.identity) {
          const description = `'${rel}' is no longer the directory this launch made (${o.identity} is now ${info.dev}:${info.ino})`
          refused.push({
            path: shown(o.path),
            error: new PinnedFsError({ code: "EBUSY", syscall: "rmdir", path: rel, refusal: "identity", description })
          })
          continue
        }
        await root.remove(rel, { recursive: true }).then(
          () => removed.push(shown(o.path)),
          (error: PinnedFsError) => refused.push({ path: shown(o.path), error })
        )
      }
    })
  )
  const groups = [...byAnchor(rest)]
  if (groups.length === 0 && release.length === 0) return { removed, kept, refused }
  const answers = await cleanupDirectories(
    strategy,
    release,
    groups.map(([anchor, list]) => ({
      anchor,
      identity: list[0]!.anchorIdentity,
      owned: list.map((o) => ({ path: relativeTo(o.path, anchor), identity: o.identity, optional: true }))
    }))
  )
  for (const [i, a] of answers.entries()) {
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
  return { removed, kept, refused }
}
