/**
 * A capability's authorization envelope and the allowlist computed from it.
 *
 * - The **envelope** is what the capability was approved to act on: its declared `scope`,
 *   narrowed by its `selectors` when it has any. The re-read covers exactly this (plus what the
 *   façade saw it create or rename into), never the whole workspace.
 * - The **allowlist** is the part of the envelope the capability may touch now: tracked paths in
 *   the envelope, less those edited in memory (writing the stale disk copy would lose the edit) and
 *   those the policy keeps from it. It is recomputed before every capability, so a path reconciled
 *   by one fixer's re-read is there for the next.
 *
 * @since 0.1.0
 */
import { badArgumentPinnedFsError } from "../internal/errors.ts"
import { globList, type GlobList } from "./globs.ts"
import type { MandatorySet } from "./mandatory.ts"
import { decide, type Policy } from "./Policy.ts"
import type { Workspace } from "./Workspace.ts"

/**
 * What a capability declares up front, and what its step's gate approves.
 *
 * @since 0.1.0
 * @category models
 */
export interface Declaration {
  readonly name: string
  /** Globs of the files it works on. */
  readonly scope: ReadonlyArray<string>
  /** Narrower globs or paths, when the step names the files. */
  readonly selectors?: ReadonlyArray<string> | undefined
  /** Globs of files it may create; `[]` for an inspection. */
  readonly mayCreate: ReadonlyArray<string>
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Envelope {
  readonly scope: GlobList
  readonly selectors: GlobList | undefined
  readonly mayCreate: GlobList
  /** scope ∩ selectors (or the scope, when there are no selectors). */
  readonly matches: (path: string) => boolean
  /** Globs to list on disk to find what the envelope holds (a superset, filtered by `matches`). */
  readonly patterns: ReadonlyArray<string>
  /** Paths the envelope names outright (no listing needed). */
  readonly literals: ReadonlyArray<string>
}

/**
 * Compiles a declaration.
 *
 * @since 0.1.0
 * @category constructors
 */
export const envelopeOf = (d: Declaration): Envelope => {
  if (typeof d.name !== "string" || d.name === "") throw badArgumentPinnedFsError("a capability needs a name")
  const scope = globList(d.scope, `scope of '${d.name}'`)
  if (scope.globs.length === 0) throw badArgumentPinnedFsError(`capability '${d.name}' declares an empty scope`)
  const selectors = d.selectors === undefined ? undefined : globList(d.selectors, `selectors of '${d.name}'`)
  const mayCreate = globList(d.mayCreate, `mayCreate of '${d.name}'`)
  const named = selectors ?? scope
  const matches = selectors === undefined ? scope.matches : (p: string) => scope.matches(p) && selectors.matches(p)
  return {
    scope,
    selectors,
    mayCreate,
    matches,
    patterns: named.listings,
    literals: named.literals.filter(matches)
  }
}

/**
 * Why a path in the envelope is not in the allowlist.
 *
 * @since 0.1.0
 * @category models
 */
export interface Withheld {
  readonly path: string
  readonly reason: "dirty" | "policy"
  readonly message: string
}

/**
 * @since 0.1.0
 * @category models
 */
export interface Allowlist {
  readonly paths: ReadonlyArray<string>
  readonly withheld: ReadonlyArray<Withheld>
}

/**
 * Tracked paths with text in the envelope, less the dirty and the policy-refused. An unreadable
 * path has no text to offer a fixer; it is still re-read, so a repair made by other means is
 * seen. The façade's `read` needs `canRead` and `canWrite`, so both are asked here: a path the
 * engine could not read through the façade is not offered to it.
 *
 * @since 0.1.0
 * @category constructors
 */
export const allowlistOf = (ws: Workspace, envelope: Envelope, policy: Policy | undefined, mandatory?: MandatorySet): Allowlist => {
  const paths: Array<string> = []
  const withheld: Array<Withheld> = []
  const tracked = ws.paths().filter(envelope.matches)
  for (const path of tracked) {
    if (ws.isDirty(path)) {
      withheld.push({
        path,
        reason: "dirty",
        message: "edited in memory and not yet written: withheld so the fixer cannot rewrite the stale disk copy"
      })
      continue
    }
    const refused = decide(policy, "read", path, mandatory) ?? decide(policy, "write", path, mandatory)
    if (refused) {
      withheld.push({ path, reason: "policy", message: refused.description })
      continue
    }
    paths.push(path)
  }
  return { paths, withheld }
}
