/**
 * A reference model of the client's kernel's authorization, written for the tests from the client's
 * description of it (its `FileSystem.ts`), and of pinnedfs's documented additions (docs/kernel.md),
 * kept apart so that a test can check our grant-store log against "the client's questions, then
 * ours".
 *
 * It works on the real disk, synchronously, with no descriptor and no pinnedfs code: its own model
 * of the executor's `resolve` (walk from the root with lstat, stop at the first link and report its
 * text, keep a missing tail as requested, fail under a file), its own model of the host `realPath`
 * walk, and a decision function for the grant store.
 *
 * The client's algorithm, as modelled:
 * - a path is normalized against the workspace root;
 * - over a no-follow executor the resource is found by asking `resolve` of the path spelled below
 *   the canonical root, following link text lexically (`dirname(link)/text/rest`), at most 40
 *   times; a glob resolves its literal prefix only (syntax looked for below the root only); a
 *   path outside both roots is kept as is; a result outside the workspace is refused without a
 *   question ("path is outside the workspace");
 * - over another host the resource is the host's realPath of the deepest existing ancestor (a
 *   dangling link read and resolved in its place, at most 40 times) plus the rest, respelled below
 *   the logical root when inside the canonical workspace; a regular file the host reports with
 *   more than one name is refused without a question; there is no "outside" refusal;
 * - then one question about the resource; a refusal stops the operation;
 * - an operation on two paths asks about the first, then the second;
 * - a batch resolves every member, then asks about each in request order (a member failing
 *   alone).
 */
import * as NFS from "node:fs"
import * as NPath from "node:path"

/** One question to the grant store. */
export interface Question {
  readonly action: "fs:read" | "fs:write"
  readonly resource: string
}

export interface ModelWorld {
  readonly logicalRoot: string
  readonly boundaryRoot: string
  /** The executor claims noFollowAuthorization. */
  readonly noFollow: boolean
  /** The grant store's decision. */
  readonly decide: (question: Question) => boolean
}

const inside = (root: string, candidate: string) => {
  const relative = NPath.relative(root, candidate)
  return relative === "" || (relative !== ".." && !relative.startsWith("../") && !NPath.isAbsolute(relative))
}

const below = (root: string, value: string) =>
  NPath.relative(root, value)
    .split("/")
    .filter((s) => s !== "")

const syntax = /[*?[\]{}\\]|[@+!]\(/

/** The model's answer for one path: what it asked (client), and how it ended. */
export interface Guarded {
  readonly asked: Array<Question>
  /** The resource asked about, when the resolution got that far. */
  readonly resource: string | undefined
  readonly granted: boolean
  /** The store itself answered about the caller's own path. */
  readonly ownAnswered: boolean
  /** The caller's own path, logical spelling. */
  readonly lexical: string
}

export const makeModel = (world: ModelWorld) => {
  const { boundaryRoot, logicalRoot } = world
  const normalize = (value: string, base = logicalRoot) => NPath.normalize(NPath.isAbsolute(value) ? value : NPath.resolve(base, value))
  const toBoundary = (value: string) =>
    inside(logicalRoot, value)
      ? NPath.join(boundaryRoot, NPath.relative(logicalRoot, value))
      : inside(boundaryRoot, value)
        ? NPath.join(boundaryRoot, NPath.relative(boundaryRoot, value))
        : undefined
  const toLogical = (canonical: string) => NPath.normalize(NPath.join(logicalRoot, NPath.relative(boundaryRoot, canonical)))
  const logicalOf = (value: string) => {
    const b = toBoundary(value)
    return b === undefined ? NPath.normalize(value) : toLogical(b)
  }

  /** The executor's `resolve`, as its contract describes it. `undefined`: it fails. */
  const executorResolve = (requested: string): { path: string; target: string | null } | undefined => {
    const parts = below(boundaryRoot, requested)
    let at = boundaryRoot
    for (const [i, part] of parts.entries()) {
      const next = NPath.join(at, part)
      let st: NFS.Stats
      try {
        st = NFS.lstatSync(next)
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code === "ENOENT") return { path: NPath.join(at, ...parts.slice(i)), target: null }
        return undefined
      }
      if (st.isSymbolicLink()) return { path: next, target: NFS.readlinkSync(next) }
      if (!st.isDirectory() && i < parts.length - 1) return undefined
      at = next
    }
    return { path: at, target: null }
  }

  /** The no-follow resolution: the resource, or `undefined` when refused before any question. */
  const noFollowResource = (value: string, glob: boolean): string | undefined => {
    let prefix = value
    let rest: Array<string> = []
    if (glob) {
      const under = inside(logicalRoot, value) ? logicalRoot : inside(boundaryRoot, value) ? boundaryRoot : undefined
      if (under !== undefined) {
        const parts = below(under, value)
        const first = parts.findIndex((p) => syntax.test(p))
        if (first >= 0) {
          prefix = NPath.join(logicalRoot, ...parts.slice(0, first))
          rest = parts.slice(first)
        }
      }
    }
    const follow = (v: string, hops: number): string | undefined => {
      const requested = toBoundary(v)
      if (requested === undefined) return v
      const resolution = executorResolve(requested)
      if (resolution === undefined) return undefined
      const reached = NPath.normalize(resolution.path)
      if (!inside(boundaryRoot, reached)) return undefined
      if (resolution.target === null) return toLogical(reached)
      if (hops >= 40) return undefined
      const more = below(boundaryRoot, requested).slice(below(boundaryRoot, reached).length)
      return follow(NPath.resolve(NPath.dirname(reached), resolution.target, ...more), hops + 1)
    }
    const resolved = follow(prefix, 0)
    if (resolved === undefined) return undefined
    const resource = rest.length === 0 ? resolved : `${resolved}/${rest.join("/")}`
    return inside(logicalRoot, resource) ? resource : undefined
  }

  /** The host's realPath walk. `undefined`: refused before any question (hard link, or no ancestor). */
  const canonicalResource = (value: string): string | undefined => {
    const existing = (candidate: string, hops: number): string | undefined => {
      try {
        return NFS.realpathSync(candidate)
      } catch {
        try {
          const target = NFS.readlinkSync(candidate)
          return hops >= 40
            ? undefined
            : existing(NPath.isAbsolute(target) ? target : NPath.resolve(NPath.dirname(candidate), target), hops + 1)
        } catch {
          const parent = NPath.dirname(candidate)
          if (parent === candidate) return undefined
          const resolved = existing(parent, hops)
          return resolved === undefined ? undefined : NPath.join(resolved, NPath.basename(candidate))
        }
      }
    }
    const canonicalRoot = NFS.realpathSync(logicalRoot)
    const canonical = existing(value, 0)
    if (canonical === undefined) return undefined
    try {
      const st = NFS.statSync(value)
      if (st.isFile() && st.nlink > 1) return undefined
    } catch {
      // not stat-able: no hard-link refusal
    }
    return inside(canonicalRoot, canonical)
      ? NPath.normalize(NPath.join(logicalRoot, NPath.relative(canonicalRoot, canonical)))
      : NPath.normalize(canonical)
  }

  /** The client's guard for one path. */
  const guard = (action: Question["action"], value: string, glob = false): Guarded => {
    const lexical = logicalOf(value)
    const resource = world.noFollow ? noFollowResource(value, glob) : canonicalResource(value)
    if (resource === undefined) return { asked: [], resource, granted: false, ownAnswered: false, lexical }
    const question = { action, resource }
    const granted = world.decide(question)
    return { asked: [question], resource, granted, ownAnswered: resource === lexical, lexical }
  }

  /**
   * pinnedfs's additions for the guards of one operation, as docs/kernel.md states them: after the
   * client's questions, each granted path whose own spelling differs from its resource is asked
   * about; a refused one is asked about under its own spelling unless the store already answered
   * that very path.
   */
  const additions = (guards: ReadonlyArray<{ readonly action: Question["action"]; readonly result: Guarded }>) => {
    const asked: Array<Question> = []
    let granted = true
    const last = guards[guards.length - 1]
    if (last !== undefined && !last.result.granted) {
      granted = false
      if (!last.result.ownAnswered && inside(logicalRoot, last.result.lexical)) {
        asked.push({ action: last.action, resource: last.result.lexical })
      }
      return { asked, granted }
    }
    for (const { action, result } of guards) {
      if (result.lexical !== result.resource && inside(logicalRoot, result.lexical)) {
        const question = { action, resource: result.lexical }
        asked.push(question)
        if (!world.decide(question)) return { asked, granted: false }
      }
    }
    return { asked, granted }
  }

  /** The client's questions for an operation on paths in order, stopping at the first refusal; then ours. */
  const operation = (needs: ReadonlyArray<{ readonly action: Question["action"]; readonly value: string; readonly glob?: boolean }>) => {
    const client: Array<Question> = []
    const guards: Array<{ action: Question["action"]; result: Guarded }> = []
    for (const need of needs) {
      const result = guard(need.action, normalize(need.value), need.glob === true)
      client.push(...result.asked)
      guards.push({ action: need.action, result })
      if (!result.granted) break
    }
    const ours = additions(guards)
    return { client, ours: ours.asked, granted: ours.granted, guards }
  }

  /** A batch of reads: every member resolved, asked in request order; then ours, member by member. */
  const batch = (paths: ReadonlyArray<{ readonly value: string; readonly glob?: boolean }>) => {
    const results = paths.map((p) => guard("fs:read", normalize(p.value), p.glob === true))
    const client = results.flatMap((r) => r.asked)
    const ours: Array<Question> = []
    const admitted: Array<boolean> = []
    for (const result of results) {
      const extra = additions([{ action: "fs:read", result }])
      ours.push(...extra.asked)
      admitted.push(extra.granted)
    }
    return { client, ours, admitted }
  }

  return { normalize, logicalOf, guard, operation, batch, inside: (v: string) => inside(logicalRoot, v) }
}

/**
 * The questions a listing adds (docs/kernel.md): every listed name, after each directory holding
 * it below the listed one, each asked once, nothing below a refused directory.
 */
export const listingQuestions = (
  base: string,
  resources: ReadonlyArray<string>,
  decide: (question: Question) => boolean
): Array<Question> => {
  const asked: Array<Question> = []
  const decided = new Map<string, boolean>()
  const decideOne = (resource: string): boolean => {
    const known = decided.get(resource)
    if (known !== undefined) return known
    const parent = NPath.dirname(resource)
    const holder = parent === base || parent === resource || NPath.relative(base, parent).startsWith("..") ? true : decideOne(parent)
    let allowed = false
    if (holder) {
      const question = { action: "fs:read" as const, resource }
      asked.push(question)
      allowed = decide(question)
    }
    decided.set(resource, allowed)
    return allowed
  }
  for (const resource of resources) if (resource !== base) decideOne(resource)
  return asked
}
