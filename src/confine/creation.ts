/**
 * Creation targets: directories a launch makes before the child starts and removes after it
 * exits, through the pinned-parent programs, one `mkdirs` and one `rmdirs` per anchor.
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
import { PinnedFsError } from "../internal/errors.ts"
import type { Anchors } from "./anchors.ts"
import { ConfinementError } from "./errors.ts"
import { type RawPath, relativeTo, shown, textOf, within } from "./raw.ts"

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

const byAnchor = <A extends { readonly anchor: RawPath }>(items: ReadonlyArray<A>): Map<RawPath, Array<A>> => {
  const out = new Map<RawPath, Array<A>>()
  for (const i of items) {
    const list = out.get(i.anchor)
    if (list) list.push(i)
    else out.set(i.anchor, [i])
  }
  return out
}

/**
 * Makes every requested directory; answers what was made. On failure the error carries `owned`
 * (whatever was made before it): the caller cleans that up.
 *
 * @since 0.1.0
 */
export const createAll = async (requests: ReadonlyArray<CreationRequest>, anchors: Anchors): Promise<Array<Owned>> => {
  const owned: Array<Owned> = []
  const failures: Array<unknown> = []
  await Promise.all(
    [...byAnchor(requests)].map(async ([anchor, list]) => {
      try {
        const root = await anchors.pin(anchor)
        const plan = list.map((r) => ({ path: relativeText(r.path, anchor), mode: r.mode }))
        const result = await root.mkdirs(plan)
        for (const c of result.created) {
          const path = c.path === "" ? anchor : `${anchor === "/" ? "" : anchor}/${Buffer.from(c.path, "utf8").toString("latin1")}`
          // A directory made on the way to a request serves that request; one a permanent request
          // needed is permanent too.
          const served = list.filter((r) => within(r.path, path))
          const permanent = served.some((r) => r.permanent)
          const purpose = list.find((r) => r.path === path)?.purpose ?? served[0]?.purpose ?? "state"
          owned.push({ path, anchor, identity: c.identity, purpose, permanent })
        }
        if (result.error) failures.push(result.error)
      } catch (e) {
        failures.push(e)
      }
    })
  )
  if (failures.length > 0) {
    const first = failures[0] as Error
    throw Object.assign(
      new ConfinementError("creation-failed", `a protected or state directory could not be made: ${first.message}`, { cause: first }),
      { owned }
    )
  }
  return owned
}

/**
 * Removes what {@link createAll} made (the permanent part aside), each anchor in one program.
 *
 * @since 0.1.0
 */
export const cleanupAll = async (owned: ReadonlyArray<Owned>, anchors: Anchors): Promise<CleanupReport> => {
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
  await Promise.all(
    [...byAnchor(rest)].map(async ([anchor, list]) => {
      const root = await anchors.pin(anchor)
      const result = await root.rmdirs(list.map((o) => ({ path: relativeText(o.path, anchor), identity: o.identity, optional: true })))
      for (const m of result.members) {
        const path = shown(`${anchor === "/" ? "" : anchor}/${Buffer.from(m.path, "utf8").toString("latin1")}`)
        if (m.status === "removed" || m.status === "missing") removed.push(path)
        else if (m.status === "kept") kept.push(path)
        else refused.push({ path, error: m.error! })
      }
    })
  )
  return { removed, kept, refused }
}
