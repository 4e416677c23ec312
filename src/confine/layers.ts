/**
 * The mount plan: the order in which a sandbox applies writable roots, protected restrictions and
 * grants, and which of them are needed at all. Platform independent: bubblewrap arguments and a
 * macOS sandbox profile are both renderings of these layers.
 *
 * 1. The base: everything readable and nothing writable (full access: everything writable).
 * 2. Writable roots, shallowest first: directories as trees, and single files (a launch scope's).
 * 3. Restrictions and grants together, shallowest first, a restriction before a grant on the same
 *    path. Each later layer sits on top of the earlier ones beneath which it lies, so:
 *    - a restriction is applied only where it narrows what is inherited (a read-only path inside an
 *      inaccessible one stays inaccessible: restrictions never widen), or where a writable root
 *      lies beneath it (a protected path stays protected whatever is writable inside it);
 *    - a grant is applied only where it widens, and a grant on a broad ancestor comes before the
 *      separately protected paths beneath it, which are therefore applied again on top of it.
 *
 * An inaccessible directory is an empty, read-only, mode-0000 tmpfs (mode 0111 when a grant or
 * restriction lies beneath it, so the child can reach exactly that path); an inaccessible file is
 * an empty read-only file with mode 0000.
 *
 * @since 0.1.0
 */
import * as nodePath from "node:path"
import type { Mode } from "./policy.ts"
import { depthOf, joinRaw, type RawPath, rawOf, within } from "./raw.ts"
import type { EntryType } from "./wire.ts"

/** @since 0.1.0 @category models */
export type Layer =
  | {
      readonly op: "bind"
      readonly path: RawPath
      /** Index of the held descriptor this layer binds. */
      readonly slot: number
      readonly writable: boolean
      readonly why: string
    }
  | { readonly op: "mask-directory"; readonly path: RawPath; readonly perms: number; readonly why: string }
  | { readonly op: "mask-file"; readonly path: RawPath; readonly why: string }

export interface LayerInput {
  readonly mode: Mode
  readonly writable: ReadonlyArray<{ readonly path: RawPath; readonly slot: number; readonly why: string }>
  readonly restrictions: ReadonlyArray<{
    readonly path: RawPath
    readonly access: "read-only" | "inaccessible"
    readonly type: EntryType
    readonly slot: number
    readonly why: string
  }>
  readonly grants: ReadonlyArray<{ readonly path: RawPath; readonly access: "read" | "write"; readonly slot: number; readonly why: string }>
}

export interface Layers {
  readonly layers: ReadonlyArray<Layer>
  /** Masks made read-only once everything beneath them is mounted. */
  readonly remountReadOnly: ReadonlyArray<RawPath>
  /** Slots no layer binds (redundant entries): their descriptors can be closed. */
  readonly unused: ReadonlyArray<number>
  /** Grants that widened nothing (already as open as they ask). */
  readonly redundantGrants: ReadonlyArray<string>
  /** The slots of the restrictions applied (the others narrow nothing). */
  readonly appliedRestrictions: ReadonlyArray<number>
}

// 0: writable, 1: read-only, 2: inaccessible.
type Strictness = 0 | 1 | 2

/**
 * `items` shallowest first, then by path, then by `then`; each depth counted once: a comparator that counted them would
 * split every path O(log n) times, which over 20,000 protected candidates is most of the plan's time.
 */
const sortedByDepth = <T extends { path: RawPath }>(items: ReadonlyArray<T>, then: (a: T, b: T) => number = () => 0): Array<T> =>
  items
    .map((item) => ({ item, depth: depthOf(item.path) }))
    .sort((a, b) => a.depth - b.depth || (a.item.path < b.item.path ? -1 : a.item.path > b.item.path ? 1 : 0) || then(a.item, b.item))
    .map((d) => d.item)

/** Orders and prunes the layers of one launch. @since 0.1.0 */
export const planLayers = (input: LayerInput): Layers => {
  const layers: Array<Layer> = []
  const unused: Array<number> = []
  const redundantGrants: Array<string> = []
  const appliedRestrictions: Array<number> = []
  const base: Strictness = input.mode === "full-access" ? 0 : 1

  const roots: Array<RawPath> = []
  // Proper ancestors of the roots: a restriction there covers a writable root.
  const aboveRoots = new Set<RawPath>()
  if (input.mode === "confined") {
    for (const w of sortedByDepth(input.writable)) {
      if (roots.some((r) => within(w.path, r))) {
        unused.push(w.slot)
        continue
      }
      roots.push(w.path)
      for (let p = w.path; p !== "/" && p !== ""; ) {
        const cut = p.lastIndexOf("/")
        p = cut <= 0 ? "/" : p.slice(0, cut)
        aboveRoots.add(p)
      }
      layers.push({ op: "bind", path: w.path, slot: w.slot, writable: true, why: w.why })
    }
  } else {
    for (const w of input.writable) unused.push(w.slot)
  }

  type Entry =
    | { kind: 0; path: RawPath; strict: Strictness; type: EntryType; slot: number; why: string }
    | { kind: 1; path: RawPath; strict: Strictness; slot: number; why: string }
  const entries: Array<Entry> = sortedByDepth<Entry>(
    [
      ...input.restrictions.map(
        (r): Entry => ({ kind: 0, path: r.path, strict: r.access === "inaccessible" ? 2 : 1, type: r.type, slot: r.slot, why: r.why })
      ),
      ...input.grants.map((g): Entry => ({ kind: 1, path: g.path, strict: g.access === "write" ? 0 : 1, slot: g.slot, why: g.why }))
    ],
    (a, b) => a.kind - b.kind
  )

  // The nearest layer above a path decides what it inherits: its own path first, then each
  // ancestor, deepest first (one lookup per component, not one per layer).
  const applied = new Map<RawPath, Strictness>()
  const rootSet = new Set(roots)
  const inherited = (path: RawPath): Strictness => {
    let p = path
    let fromRoot = false
    for (;;) {
      const s = applied.get(p)
      if (s !== undefined) return s
      fromRoot ||= rootSet.has(p)
      if (p === "/" || p === "") break
      const cut = p.lastIndexOf("/")
      p = cut <= 0 ? "/" : p.slice(0, cut)
    }
    return fromRoot ? 0 : base
  }
  for (const e of entries) {
    const from = inherited(e.path)
    const covers = e.kind === 0 && e.strict === from && aboveRoots.has(e.path)
    if (e.kind === 0 ? e.strict <= from && !covers : e.strict >= from) {
      unused.push(e.slot)
      if (e.kind === 1) redundantGrants.push(e.why)
      continue
    }
    applied.set(e.path, e.strict)
    if (e.kind === 0) appliedRestrictions.push(e.slot)
    if (e.kind === 1) {
      layers.push({ op: "bind", path: e.path, slot: e.slot, writable: e.strict === 0, why: e.why })
    } else if (e.strict === 1) {
      layers.push({ op: "bind", path: e.path, slot: e.slot, writable: false, why: e.why })
    } else if (e.type === "directory") {
      unused.push(e.slot)
      layers.push({ op: "mask-directory", path: e.path, perms: 0o000, why: e.why })
    } else {
      unused.push(e.slot)
      layers.push({ op: "mask-file", path: e.path, why: e.why })
    }
  }
  // A mask with anything mounted beneath it must let the child reach that one path. Everything
  // after the writable roots is in depth order, so what lies beneath a mask comes after it: the
  // proper ancestors of those layers, collected once, are the masks to open (one step per
  // component, not one comparison per pair of layers).
  const above = new Set<RawPath>()
  for (const l of layers.slice(roots.length)) {
    for (let p = l.path; ; ) {
      const cut = p.lastIndexOf("/")
      if (cut <= 0) break
      p = p.slice(0, cut)
      if (above.has(p)) break
      above.add(p)
    }
  }
  const out = layers.map((l): Layer => (l.op === "mask-directory" && above.has(l.path) ? { ...l, perms: 0o111 } : l))
  const remountReadOnly = out.filter((l) => l.op === "mask-directory").map((l) => l.path)
  return { layers: out, remountReadOnly, unused, redundantGrants, appliedRestrictions }
}

/**
 * Which of `restrictions` a launch must hold and mount, before anything is held: the ones the
 * plan applies given every writable root and grant that may be applied (a superset of what the
 * final plan applies, since a grant can still turn out unapplied). A protected path beneath an
 * already read-only or masked one, with no grant between them, narrows nothing and is left out,
 * so a tree of 20,000 nested repositories under one protected directory costs one mount. Refuses
 * a plan bubblewrap would not take (see `assertWithinBwrapLimit`), with the count.
 *
 * @since 0.1.0
 */
export const neededRestrictions = (input: {
  readonly mode: Mode
  readonly writable: ReadonlyArray<RawPath>
  readonly restrictions: ReadonlyArray<{ readonly path: RawPath; readonly access: "read-only" | "inaccessible"; readonly type: EntryType }>
  readonly grants: ReadonlyArray<{ readonly path: RawPath; readonly access: "read" | "write" }>
  readonly check: (layers: ReadonlyArray<Layer>) => void
}): ReadonlySet<number> => {
  const n = input.restrictions.length
  const planned = planLayers({
    mode: input.mode,
    writable: input.writable.map((path, i) => ({ path, slot: -1 - i, why: "" })),
    restrictions: input.restrictions.map((r, slot) => ({ ...r, slot, why: "" })),
    grants: input.grants.map((g, i) => ({ ...g, slot: n + i, why: "" }))
  })
  input.check(planned.layers)
  return new Set(planned.appliedRestrictions)
}

/**
 * Where each grant may land, canonically (its parent's canonical spelling and its own name), for
 * {@link neededRestrictions}; a grant whose parent does not exist is left out (it cannot apply).
 *
 * @since 0.1.0
 */
export const grantPaths = async (
  grants: ReadonlyArray<{ readonly path: string; readonly access: "read" | "write" }>,
  canonical: (text: string) => Promise<RawPath | null>
): Promise<Array<{ readonly path: RawPath; readonly access: "read" | "write" }>> => {
  const out: Array<{ path: RawPath; access: "read" | "write" }> = []
  for (const g of grants) {
    const parent = await canonical(nodePath.dirname(g.path))
    if (parent !== null) out.push({ path: joinRaw(parent, rawOf(nodePath.basename(g.path))), access: g.access })
  }
  return out
}
